package dispatch

import (
	"container/heap"
	"context"
	"sync"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/recurrence"
)

// maxPop bounds the items taken off the heap per loop turn, so events are not starved.
const maxPop = 4096

type eventKind int

const (
	evJobChanged eventKind = iota
	evCollectionChanged
	evManualClaimed // a manual run claimed the job: take its new Version if nothing else changed
	evClaimed       // the writer committed a batch of claims
	evRecorded      // the writer committed a batch of records
	evReschedule    // a worker could not start an attempt: run it at exec.DueAt
	evTaken         // the executor took executions
	evLost          // the executor lost executions (rescued after its lease ran out)
)

type event struct {
	kind          eventKind
	id            int64
	prev, version int64
	count         int
	claims        []*claimOp
	claimResults  []store.ExecutionClaimResult
	claimErr      error
	records       []*recordOp
	recordResults []store.AttemptRecordResult
	exec          *store.Execution
	taken         []store.TakenExecution
	ids           []int64
}

// inbox is how other goroutines talk to the loop: a slice under a mutex (posting never blocks)
// and a one-slot wake-up channel.
type inbox struct {
	mu     sync.Mutex
	events []event
	wake   chan struct{}
}

func (in *inbox) post(e event) {
	in.mu.Lock()
	in.events = append(in.events, e)
	in.mu.Unlock()
	select {
	case in.wake <- struct{}{}:
	default:
	}
}

func (in *inbox) take() []event {
	in.mu.Lock()
	defer in.mu.Unlock()
	evs := in.events
	in.events = nil
	return evs
}

// entry is one schedulable job in the loop. The loop holds every schedulable job, so an entry
// keeps what an attempt needs in one string (def: the job's key and properties, secrets sealed,
// as JSON), decoded when an occurrence is claimed: a decoded job is a few dozen small objects
// that every garbage collection would mark, and with 100,000 jobs that marking ran in the middle
// of the bursts of attempts.
type entry struct {
	id           int64
	collectionID int64
	def          string
	rule         *recurrence.Rule
	ruleKey      string
	next         time.Time
	version      int64
	execCount    int
	target       string // of its main action (interned)
	item         *item  // in the heap while waiting for next; nil while claiming or parked
	claiming     bool   // a claim is in the writer
	dirty        bool   // changed while claiming: reload when the claim is answered
	parked       bool   // due, waiting in loop.parked for capacity
	changed      bool   // the job changed while claiming: cancel the claim when answered
	// started is the scheduled time (Unix ns) of the latest occurrence handed to the workers:
	// a change that comes too late to cancel it must not schedule it again.
	started int64
}

// item is a heap element: when to claim a job's next occurrence (Lookahead before it is due) or
// when an execution's next attempt is due.
type item struct {
	at     time.Time
	seq    uint64
	entry  *entry
	exec   *store.Execution
	job    *store.Job // the exec's job as last known (nil: the worker loads it)
	def    string     // the entry definition job was decoded from ("": not from one)
	target string     // the exec's target ("": from job)
	ahead  bool       // an occurrence claimed ahead, in loop.ahead: not started
	taken  bool       // taken by the executor and not started (counted in Dispatcher.waiting)
	index  int
}

type timeHeap []*item

func (h timeHeap) Len() int { return len(h) }
func (h timeHeap) Less(i, j int) bool {
	if h[i].at.Equal(h[j].at) {
		return h[i].seq < h[j].seq
	}
	return h[i].at.Before(h[j].at)
}
func (h timeHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index, h[j].index = i, j
}
func (h *timeHeap) Push(x any) {
	it, ok := x.(*item)
	if !ok {
		panic("timeHeap: not an *item")
	}
	it.index = len(*h)
	*h = append(*h, it)
}
func (h *timeHeap) Pop() any {
	old := *h
	n := len(old)
	it := old[n-1]
	old[n-1] = nil
	it.index = -1
	*h = old[:n-1]
	return it
}

// loop owns the schedule; only its goroutine touches these fields.
type loop struct {
	d       *Dispatcher
	entries map[int64]*entry
	rules   ruleCache
	heap    timeHeap
	seq     uint64
	resumed int
	// targets interns the entries' targets, counting the entries that use each.
	targets map[string]*sharedTarget
	// parked holds, by target, due entries not claimed for want of capacity (in due order;
	// entries no longer parked are skipped); parkedN counts them.
	parked  map[string][]*entry
	parkedN int
	// claimingDue counts the claims in the writer of occurrences already due, by target and in
	// all (claimingDueAll): capacity they will take.
	claimingDue    map[string]int
	claimingDueAll int
	// ahead holds, by job, the heap items of occurrences claimed (or, by an executor, taken)
	// ahead: not started, so that a change of the job cancels them.
	ahead map[int64][]*item
	// held holds, by execution, an executor's heap items (taken or waiting for a retry).
	held map[int64]*item
	// fetched holds, while a turn's events are handled, the changed jobs prefetched for them
	// (nil: not found).
	fetched map[int64]*store.Job
}

func newLoop(d *Dispatcher) *loop {
	return &loop{d: d, entries: map[int64]*entry{}, rules: ruleCache{}, targets: map[string]*sharedTarget{},
		parked: map[string][]*entry{}, claimingDue: map[string]int{}, ahead: map[int64][]*item{},
		held: map[int64]*item{}}
}

func (l *loop) push(at time.Time, e *entry, x *store.Execution) *item {
	l.seq++
	it := &item{at: at, seq: l.seq, entry: e, exec: x}
	heap.Push(&l.heap, it)
	return it
}

// pushExec schedules an execution's next attempt; job is its job as known (nil: unknown),
// decoded from the entry definition def ("": not from one), target its attempt's target.
func (l *loop) pushExec(x *store.Execution, job *store.Job, def, target string) *item {
	it := l.push(x.DueAt, nil, x)
	it.job, it.def, it.target = job, def, target
	if l.d.cfg.Role == RoleExecutor {
		l.held[x.ID] = it
	}
	return it
}

// forget is an executor's bookkeeping of an item leaving its heap: started, cancelled or lost.
func (l *loop) forget(it *item) {
	if l.d.cfg.Role != RoleExecutor {
		return
	}
	if l.held[it.exec.ID] == it {
		delete(l.held, it.exec.ID)
	}
	if it.taken {
		it.taken = false
		l.d.waiting.Add(-1)
	}
}

func (l *loop) run(ctx context.Context) {
	timer := l.d.clock.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		// The time is read before the events are taken: a change posted before the clock
		// reached an occurrence's due time is handled before that occurrence starts.
		now := l.d.clock.Now()
		evs := l.d.inbox.take()
		l.prefetch(ctx, evs)
		for _, ev := range evs {
			l.handle(ctx, ev)
		}
		l.fetched = nil
		room := l.capacity()
		var claims []*claimOp
		if l.parkedN > 0 {
			claims = l.unpark(now, room, claims)
		}
		for n := 0; n < maxPop && len(l.heap) > 0 && !l.heap[0].at.After(now); n++ {
			it, ok := heap.Pop(&l.heap).(*item)
			if !ok {
				continue
			}
			if it.exec != nil {
				if it.ahead {
					l.unahead(it)
					if e := l.entries[it.exec.JobID]; e != nil {
						e.started = max(e.started, it.exec.Scheduled.UnixNano())
					}
				}
				if l.d.cfg.Role == RoleScheduler {
					continue // an executor runs it
				}
				l.forget(it)
				l.resume(it.exec, it.job, it.def, it.target)
				continue
			}
			e := it.entry
			e.item = nil
			if !room.admit(e, now) {
				l.park(e)
				continue
			}
			claims = append(claims, l.claim(e, now))
		}
		l.d.parked.Store(int64(l.parkedN))
		for _, c := range claims {
			l.d.pendingClaims.Add(1)
			if c.due {
				l.claimingDue[c.target]++
				l.claimingDueAll++
			}
			select {
			case l.d.ops <- op{claim: c}:
			case <-ctx.Done():
				return
			}
		}
		if len(l.heap) > 0 && !l.heap[0].at.After(l.d.clock.Now()) {
			continue // more due than one turn takes
		}
		if len(l.heap) > 0 {
			timer.Reset(l.heap[0].at.Sub(l.d.clock.Now()))
			// The clock may have moved between reading it and arming the timer.
			if !l.heap[0].at.After(l.d.clock.Now()) {
				continue
			}
		} else {
			timer.Stop()
		}
		l.signalQuiet(now)
		select {
		case <-ctx.Done():
			return
		case <-timer.C():
		case <-l.d.inbox.wake:
		}
	}
}

// signalQuiet sends TestSignals.Quiet when nothing is in flight (tests only).
func (l *loop) signalQuiet(now time.Time) {
	d := l.d
	if !d.TestSignals.Quiet.Enabled() {
		return
	}
	// Under the inbox's lock: an event posted after the check comes after the signal.
	d.inbox.mu.Lock()
	defer d.inbox.mu.Unlock()
	if len(d.inbox.events) > 0 || d.pendingClaims.Load() > 0 || d.pendingRecords.Load() > 0 || d.tasks.busy() {
		return
	}
	q := Quiet{Now: now}
	if len(l.heap) > 0 {
		q.Next = l.heap[0].at
	}
	d.TestSignals.Quiet.Signal(q)
}

func (l *loop) handle(ctx context.Context, ev event) {
	if l.d.cfg.Role == RoleExecutor {
		switch ev.kind {
		case evJobChanged:
			l.cancelAhead(ctx, ev.id)
		case evCollectionChanged:
			l.cancelAheadOfCollection(ctx, ev.id)
		case evRecorded:
			l.recorded(ev)
		case evReschedule:
			l.pushExec(ev.exec, nil, "", "")
		case evTaken:
			l.taken(ev)
		case evLost:
			l.lost(ev)
		}
		return
	}
	switch ev.kind {
	case evJobChanged:
		l.cancelAhead(ctx, ev.id)
		if e := l.entries[ev.id]; e != nil && e.claiming {
			e.changed = true // its claim, when answered, is cancelled
		}
		l.reload(ctx, ev.id)
	case evCollectionChanged:
		l.reloadCollection(ctx, ev.id)
	case evManualClaimed:
		if e := l.entries[ev.id]; e != nil && e.version == ev.prev {
			e.version, e.execCount = ev.version, ev.count
		}
	case evClaimed:
		l.claimed(ctx, ev)
	case evRecorded:
		l.recorded(ev)
	case evReschedule:
		l.pushExec(ev.exec, nil, "", "")
	}
}
