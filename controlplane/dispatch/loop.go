package dispatch

import (
	"container/heap"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/jobstate"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/recurrence"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"
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

// load reads the schedulable jobs and the unfinished executions, page by page. An executor loads
// nothing (it takes executions from the store); the leader's scheduler loads no execution (the
// executors take them, the rescuer re-queues those of a dead owner).
func (l *loop) load(ctx context.Context) error {
	if l.d.cfg.Role == RoleExecutor {
		return nil
	}
	var after int64
	for {
		jobs, err := l.d.store.JobListSchedulable(ctx, store.JobListSchedulableParams{AfterID: after, Limit: DefaultLoadPage})
		if err != nil {
			return err
		}
		for _, j := range jobs {
			l.put(j)
			after = j.ID
		}
		if len(jobs) < DefaultLoadPage {
			break
		}
	}
	if l.d.cfg.Role == RoleScheduler {
		return nil
	}
	after = 0
	for {
		execs, err := l.d.store.ExecutionListUnfinished(ctx, store.ExecutionListUnfinishedParams{AfterID: after, Limit: DefaultLoadPage})
		if err != nil {
			return err
		}
		for _, x := range execs {
			after = x.ID
			l.pushExec(x, nil, "", "")
			l.resumed++
		}
		if len(execs) < DefaultLoadPage {
			break
		}
	}
	return nil
}

// put adds or replaces the entry of a job as loaded from the store; a job that cannot fire is
// dropped.
func (l *loop) put(j *store.Job) {
	old := l.entries[j.ID]
	if !jobstate.Schedulable(j.State, j.CollectionState, j.Status.NextExecutionTime) {
		l.drop(j.ID)
		return
	}
	key := scheduleKey(j)
	var rule *recurrence.Rule
	if old != nil && old.ruleKey == key {
		rule, key = old.rule, old.ruleKey // the schedule did not change
	} else {
		r, k, err := l.rules.acquire(key, j)
		if err != nil {
			l.d.log.Error("job has an invalid schedule: not scheduled", "job_id", j.ID, "job", j.Key.Name, "error", err.Error())
			l.drop(j.ID)
			return
		}
		l.drop(j.ID)
		rule, key = r, k
	}
	if old != nil && old.item != nil {
		heap.Remove(&l.heap, old.item.index)
		old.item = nil
	}
	def, err := encodeDefinition(j)
	if err != nil {
		l.d.log.Error("job cannot be kept: not scheduled", "job_id", j.ID, "job", j.Key.Name, "error", err.Error())
		l.drop(j.ID)
		return
	}
	next := jobstate.StoredInstant(rule, j.Status.NextExecutionTime)
	var started int64
	if old != nil {
		old.parked = false
		started = old.started
		var startedAt time.Time
		if started != 0 {
			startedAt = time.Unix(0, started)
		}
		n, ok := jobstate.ResumeAfter(rule, next, startedAt)
		if !ok {
			if l.entries[j.ID] != nil {
				l.drop(j.ID)
			} else {
				l.rules.release(key)
			}
			return
		}
		next = n
	}
	e := &entry{id: j.ID, collectionID: j.CollectionID, def: def, rule: rule, ruleKey: key,
		next: next, version: j.Version, execCount: j.Status.ExecutionCount, started: started,
		target: l.intern(l.d.target(j.Properties, store.ActionMain))}
	if cur := l.entries[j.ID]; cur != nil {
		l.releaseTarget(cur.target)
	}
	e.item = l.push(e.next.Add(-l.d.cfg.Lookahead), e, nil)
	l.entries[j.ID] = e
}

// prefetch reads, in one JobGetMany, the jobs that the changes among evs make the loop reload:
// after a burst of API writes (60,000 job PUTs, through any replica) the loop would otherwise
// read them one round trip each, and still be reading when they fall due. The jobs are read
// after every event of evs was posted, so each read is at least as new as the change it answers,
// as a JobGetByID in reload would be. A single change, or a failed read, leaves reload to read.
func (l *loop) prefetch(ctx context.Context, evs []event) {
	if l.d.cfg.Role == RoleExecutor {
		return
	}
	var ids []int64
	for _, ev := range evs {
		if ev.kind != evJobChanged {
			continue
		}
		if e := l.entries[ev.id]; e != nil && e.claiming {
			continue // reloaded when its claim is answered
		}
		ids = append(ids, ev.id)
	}
	if len(ids) < 2 {
		return
	}
	fetched := make(map[int64]*store.Job, len(ids))
	for len(ids) > 0 {
		n := min(len(ids), DefaultLoadPage)
		jobs, err := l.d.store.JobGetMany(ctx, store.JobGetManyParams{IDs: ids[:n]})
		if err != nil {
			l.d.log.Error("reloading changed jobs", "jobs", n, "error", err.Error())
			return
		}
		for _, id := range ids[:n] {
			fetched[id] = nil // not found, unless read below
		}
		for _, j := range jobs {
			fetched[j.ID] = j
		}
		ids = ids[n:]
	}
	l.fetched = fetched
}

// reload re-reads one job (or takes it from the jobs prefetched for this turn's events).
func (l *loop) reload(ctx context.Context, id int64) {
	if e := l.entries[id]; e != nil && e.claiming {
		e.dirty = true
		return
	}
	if j, ok := l.fetched[id]; ok {
		if j == nil {
			l.drop(id)
			return
		}
		l.put(j)
		return
	}
	j, err := l.d.store.JobGetByID(ctx, store.JobGetByIDParams{ID: id})
	if errors.Is(err, store.ErrNotFound) {
		l.drop(id)
		return
	}
	if err != nil {
		l.d.log.Error("reloading a job", "job_id", id, "error", err.Error())
		return
	}
	l.put(j)
}

type sharedTarget struct {
	key  string
	refs int
}

// intern returns the loop's copy of a target, counted until releaseTarget.
func (l *loop) intern(t string) string {
	if c := l.targets[t]; c != nil {
		c.refs++
		return c.key
	}
	l.targets[t] = &sharedTarget{key: t, refs: 1}
	return t
}

func (l *loop) releaseTarget(t string) {
	if c := l.targets[t]; c != nil {
		if c.refs--; c.refs <= 0 {
			delete(l.targets, t)
		}
	}
}

// drop forgets a job: out of the heap, its rule released.
func (l *loop) drop(id int64) {
	if e := l.entries[id]; e != nil {
		if e.item != nil {
			heap.Remove(&l.heap, e.item.index)
			e.item = nil
		}
		e.parked = false
		l.rules.release(e.ruleKey)
		l.releaseTarget(e.target)
		delete(l.entries, id)
	}
}

// reloadCollection drops every job of a collection and loads back the ones that can fire; the
// occurrences claimed ahead of the others (the collection disabled, suspended or deleted) are
// cancelled.
func (l *loop) reloadCollection(ctx context.Context, id int64) {
	defer func() {
		for jid, list := range l.ahead {
			if e := l.entries[jid]; e != nil && e.collectionID == id {
				continue // still schedulable
			}
			if len(list) > 0 && list[0].job != nil && list[0].job.CollectionID == id {
				l.cancelAhead(ctx, jid)
			}
		}
	}()
	for jid, e := range l.entries {
		if e.collectionID == id {
			if e.claiming {
				e.dirty = true
				continue
			}
			l.drop(jid)
		}
	}
	var after int64
	for {
		jobs, err := l.d.store.JobListSchedulable(ctx, store.JobListSchedulableParams{CollectionID: id, AfterID: after, Limit: DefaultLoadPage})
		if err != nil {
			l.d.log.Error("reloading a collection", "collection_id", id, "error", err.Error())
			return
		}
		for _, j := range jobs {
			after = j.ID
			if e := l.entries[j.ID]; e != nil && e.claiming {
				continue
			}
			l.put(j)
		}
		if len(jobs) < DefaultLoadPage {
			return
		}
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

// capacity is what a loop turn may claim: claims are sized to the free capacity of the workers
// (Workers plus one batch of claims, less the attempts under way or waiting for a worker) and of
// each target (TargetConcurrency plus one batch, less its attempts queued or under way), so
// that a backlog waits in the store, unclaimed, where misfire coalescing finds it. An
// occurrence due now takes one unit of both; one claimed ahead takes none (the burst of
// occurrences due together is claimed ahead in full) but is not claimed while there is no
// capacity left.
type capacity struct {
	l       *loop
	free    int
	targets map[string]int
}

// capacity is the room of this turn. While a backlog waits (entries parked), room is handed out
// only once a refill's worth is free (half a batch, for the workers and for a target): claiming each slot as it frees
// made a claim transaction per attempt or two in a burst (16 times the transactions of whole
// batches; BenchmarkFires lost a fifth of its fires/s). The queue still holds a batch beyond the workers, so
// they do not wait for the refill.
func (l *loop) capacity() *capacity {
	cfg := l.d.cfg
	if cfg.Role == RoleScheduler {
		// The executors size what they take to their workers; the leader claims what falls due
		// (a target's claims in the writer bounded as below).
		return &capacity{l: l, free: math.MaxInt32}
	}
	free := cfg.Workers + cfg.BatchSize - l.d.tasks.workerLoad() - l.claimingDueAll
	if l.parkedN > 0 && free < l.refill() {
		free = 0
	}
	return &capacity{l: l, free: free}
}

// refill is the capacity a backlog waits for before more of it is claimed.
func (l *loop) refill() int { return max(1, l.d.cfg.BatchSize/2) }

// admit says whether e's occurrence may be claimed now, and takes its capacity.
func (c *capacity) admit(e *entry, now time.Time) bool {
	if c.free <= 0 {
		return false
	}
	if c.targets == nil {
		c.targets = map[string]int{}
	}
	tf, ok := c.targets[e.target]
	if !ok {
		cfg := c.l.d.cfg
		tf = cfg.TargetConcurrency + cfg.BatchSize - c.l.d.tasks.laneLoad(e.target) - c.l.claimingDue[e.target]
		if len(c.l.parked[e.target]) > 0 && tf < c.l.refill() {
			tf = 0 // a backlog of this target waits for a refill
		}
	}
	if tf <= 0 {
		c.targets[e.target] = tf
		return false
	}
	if !e.next.After(now) {
		c.free--
		tf--
	}
	c.targets[e.target] = tf
	return true
}

// park keeps a due entry that cannot be claimed yet.
func (l *loop) park(e *entry) {
	l.d.TestSignals.Parked.Signal(Parked{JobID: e.id, Due: e.next})
	e.parked = true
	l.parked[e.target] = append(l.parked[e.target], e)
	l.parkedN++
}

// unpark claims the parked entries that capacity now admits, oldest first in each target.
func (l *loop) unpark(now time.Time, room *capacity, claims []*claimOp) []*claimOp {
	for t, es := range l.parked {
		if room.free <= 0 {
			break
		}
		i := 0
		for ; i < len(es); i++ {
			e := es[i]
			if !e.parked || l.entries[e.id] != e {
				continue // changed or dropped since
			}
			if !room.admit(e, now) {
				break
			}
			e.parked = false
			claims = append(claims, l.claim(e, now))
		}
		l.parkedN -= i
		if i == len(es) {
			delete(l.parked, t)
		} else {
			clear(es[:i])
			l.parked[t] = es[i:]
		}
	}
	return claims
}

// claim builds the claim of e's due occurrence, coalescing misfired ones.
func (l *loop) claim(e *entry, now time.Time) *claimOp {
	c := jobstate.Claim(e.rule, e.next, e.execCount, now, l.d.cfg.MisfireThreshold)
	scheduled, missed, next := c.Scheduled, c.Missed, c.Next
	e.claiming = true
	// The attempt's definition, decoded once here. The leader's scheduler runs no attempt (an
	// executor takes the execution and loads its job): it keeps the job's collection, which its
	// cancellations need, and decodes nothing in a burst of claims.
	var job *store.Job
	if l.d.cfg.Role == RoleScheduler {
		job = &store.Job{ID: e.id, CollectionID: e.collectionID, Version: e.version}
	} else {
		job = l.job(e)
	}
	return &claimOp{
		entry:  e,
		job:    job,
		def:    e.def,
		target: e.target,
		due:    !scheduled.After(now),
		claim: store.ExecutionClaim{
			Execution: store.Execution{
				JobID: e.id, Tag: uuid.NewString(), Scheduled: scheduled, Missed: missed, Phase: store.ActionMain,
				DueAt: scheduled, ClaimedAt: now,
			},
			ExpectVersion:     e.version,
			NextExecutionTime: next,
		},
	}
}

// resume sends an execution's next attempt to the workers, with its job's latest definition
// when the loop has it (else the worker loads it: no I/O on the loop). An occurrence claimed
// ahead keeps the job decoded at its claim unless the definition changed since: no decoding in
// the burst of attempts falling due together.
func (l *loop) resume(x *store.Execution, job *store.Job, def, target string) {
	if e := l.entries[x.JobID]; e != nil && (job == nil || e.def != def) {
		job = l.job(e)
		target = e.target
		if x.Phase != store.ActionMain && job != nil {
			target = l.d.target(job.Properties, x.Phase)
		}
	}
	l.d.tasks.push(task{exec: *x, job: job, target: target})
}

// unahead takes an item off loop.ahead (its occurrence is starting).
func (l *loop) unahead(it *item) {
	if !it.ahead {
		return
	}
	it.ahead = false
	list := l.ahead[it.exec.JobID]
	for i, o := range list {
		if o == it {
			list = append(list[:i], list[i+1:]...)
			break
		}
	}
	if len(list) == 0 {
		delete(l.ahead, it.exec.JobID)
	} else {
		l.ahead[it.exec.JobID] = list
	}
}

// cancelAhead cancels the occurrences of a job claimed ahead that have not started: a change of
// the job (deleted, disabled, updated, its collection disabled) wins over them. Their executions
// are deleted from the store, with no history.
func (l *loop) cancelAhead(ctx context.Context, jobID int64) {
	list := l.ahead[jobID]
	if len(list) == 0 {
		return
	}
	delete(l.ahead, jobID)
	for _, it := range list {
		it.ahead = false
		heap.Remove(&l.heap, it.index)
		l.forget(it)
		l.cancel(ctx, it.exec)
	}
}

// cancelAheadOfCollection (an executor's) cancels the occurrences it holds ahead of the jobs of
// a collection that changed when they can no longer fire (the collection disabled, suspended or
// deleted), as the leader does for those it claimed and no executor took.
func (l *loop) cancelAheadOfCollection(ctx context.Context, collectionID int64) {
	for jobID, list := range l.ahead {
		if len(list) == 0 || list[0].job == nil || list[0].job.CollectionID != collectionID {
			continue
		}
		j, err := l.d.store.JobGetByID(ctx, store.JobGetByIDParams{ID: jobID})
		switch {
		case errors.Is(err, store.ErrNotFound):
		case err != nil:
			l.d.log.Error("reloading a job after its collection changed", "job_id", jobID, "error", err.Error())
			continue
		case j.State == store.JobStateEnabled && j.CollectionState == store.CollectionStateEnabled:
			continue
		}
		l.cancelAhead(ctx, jobID)
	}
}

// taken (an executor's) holds the executions it took until they are due.
func (l *loop) taken(ev event) {
	now := l.d.clock.Now()
	for _, t := range ev.taken {
		x, j := t.Execution, t.Job
		it := l.pushExec(x, j, "", l.d.target(j.Properties, x.Phase))
		it.taken = true
		if x.DueAt.After(now) && x.Phase == store.ActionMain && x.Attempt == 0 {
			it.ahead = true // not started: a change of its job cancels it
			l.ahead[x.JobID] = append(l.ahead[x.JobID], it)
		}
	}
}

// lost (an executor's) drops the executions it no longer owns that have not started.
func (l *loop) lost(ev event) {
	for _, id := range ev.ids {
		it := l.held[id]
		if it == nil {
			continue
		}
		l.unahead(it)
		heap.Remove(&l.heap, it.index)
		l.forget(it)
	}
}

// cancel has the writer delete an execution whose attempt has not started, with no history.
func (l *loop) cancel(ctx context.Context, x *store.Execution) {
	l.d.log.Info("claimed occurrence cancelled: its job changed", "job_id", x.JobID, "execution_tag", x.Tag,
		"expected_execution_time", x.Scheduled)
	l.d.TestSignals.Cancelled.Signal(Cancelled{JobID: x.JobID, Tag: x.Tag})
	r := &recordOp{exec: *x, rec: store.AttemptRecord{ExecutionID: x.ID, JobID: x.JobID, Finished: true, Cancelled: true,
		Owner: l.d.recordOwner()}}
	l.d.pendingRecords.Add(1)
	select {
	case l.d.ops <- op{record: r}:
	case <-ctx.Done():
		l.d.pendingRecords.Add(-1)
	}
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

func (l *loop) claimed(ctx context.Context, ev event) {
	for i, c := range ev.claims {
		l.d.pendingClaims.Add(-1)
		if c.due {
			if l.claimingDue[c.target]--; l.claimingDue[c.target] <= 0 {
				delete(l.claimingDue, c.target)
			}
			l.claimingDueAll--
		}
		e := c.entry
		e.claiming = false
		if ev.claimErr != nil {
			// Nothing was committed: try again a little later.
			if l.entries[e.id] == e {
				e.item = l.push(l.d.clock.Now().Add(time.Second), e, nil)
			}
			continue
		}
		res := ev.claimResults[i]
		if res.Err != nil {
			// The job changed under us (an API write, a manual run) or is gone: reload it.
			if l.entries[e.id] == e {
				l.reload(ctx, e.id)
			}
			continue
		}
		x := res.Execution
		switch {
		case l.entries[e.id] != e:
			// Dropped while the claim was being committed (deleted, or it cannot fire any more):
			// the change wins.
			l.cancel(ctx, x)
			continue
		case x.DueAt.After(l.d.clock.Now()):
			// Claimed ahead: the attempt starts when due, unless a change cancels it first.
			it := l.pushExec(x, c.job, c.def, c.target)
			it.ahead = true
			l.ahead[x.JobID] = append(l.ahead[x.JobID], it)
		default:
			if l.d.cfg.Role != RoleScheduler { // else an executor takes it
				l.d.tasks.push(task{exec: *x, job: c.job, target: c.target})
			}
			e.started = max(e.started, x.Scheduled.UnixNano())
		}
		e.version, e.execCount, e.next = res.Version, x.RepeatCount, c.claim.NextExecutionTime
		switch {
		case e.dirty:
			e.dirty = false
			if e.changed { // the job changed while the claim was being committed: the change wins
				e.changed = false
				l.cancelAhead(ctx, e.id)
			}
			l.reload(ctx, e.id)
			if l.entries[e.id] == nil { // it cannot fire any more (its collection disabled...)
				l.cancelAhead(ctx, e.id)
			}
		case e.next.IsZero():
			l.drop(e.id) // nothing left: it completes when its execution ends
		default:
			e.item = l.push(e.next.Add(-l.d.cfg.Lookahead), e, nil)
		}
	}
}

func (l *loop) recorded(ev event) {
	l.d.pendingRecords.Add(-int64(len(ev.records)))
	for i, r := range ev.records {
		res := ev.recordResults[i]
		if res.Gone {
			continue
		}
		if !r.rec.Next.IsZero() {
			x := r.exec
			x.Phase, x.Attempt, x.DueAt = r.rec.Phase, r.rec.Attempt, r.rec.Next
			target := ""
			if r.job != nil {
				target = l.d.target(r.job.Properties, x.Phase)
			}
			l.pushExec(&x, r.job, "", target)
		}
		e := l.entries[r.rec.JobID]
		if e == nil {
			continue
		}
		if res.State == "" {
			continue // the job was not touched
		}
		if res.State != store.JobStateEnabled {
			l.drop(r.rec.JobID)
			continue
		}
		if e.version == res.Previous {
			e.version = res.Version
		}
	}
}

// definition is what an entry keeps of a job for its attempts.
type definition struct {
	Subscription  string             `json:"s"`
	ResourceGroup string             `json:"g"`
	Collection    string             `json:"c"`
	Name          string             `json:"n"`
	Properties    wire.JobProperties `json:"p"`
}

// encodeDefinition encodes what an attempt needs of j (its recurrence is in the entry's rule).
func encodeDefinition(j *store.Job) (string, error) {
	d := definition{Subscription: j.Key.Subscription, ResourceGroup: j.Key.ResourceGroup, Collection: j.Key.CollectionKey.Name,
		Name: j.Key.Name, Properties: j.Properties}
	d.Properties.Recurrence = nil
	b, err := json.Marshal(d)
	if err != nil {
		return "", fmt.Errorf("encode job %d: %w", j.ID, err)
	}
	return string(b), nil
}

// job decodes an entry's job for an attempt; nil when it cannot (the worker then loads it).
func (l *loop) job(e *entry) *store.Job {
	var d definition
	if err := json.Unmarshal([]byte(e.def), &d); err != nil {
		l.d.log.Error("decoding a job: loading it from the store instead", "job_id", e.id, "error", err.Error())
		return nil
	}
	return &store.Job{
		ID: e.id, CollectionID: e.collectionID, Properties: d.Properties, Version: e.version,
		Key: store.JobKey{
			CollectionKey: store.CollectionKey{Subscription: d.Subscription, ResourceGroup: d.ResourceGroup, Name: d.Collection},
			Name:          d.Name,
		},
		State: store.JobStateEnabled, CollectionState: store.CollectionStateEnabled,
	}
}

// scheduleKey identifies what a job's rule is compiled from: startTime and recurrence, and the
// creation time when there is no startTime (it is then the anchor).
func scheduleKey(j *store.Job) string {
	rec, err := json.Marshal(j.Properties.Recurrence)
	if err != nil {
		rec = []byte(fmt.Sprintf("%p", j)) // never shared
	}
	k := j.Properties.StartTime + "\x00" + string(rec)
	if j.Properties.StartTime == "" {
		k += "\x00" + j.CreatedAt.UTC().Format(time.RFC3339Nano)
	}
	return k
}

// ruleCache shares compiled rules between jobs with the same schedule (often most of them:
// compiled rules are the largest part of a job's memory), counting the jobs that use each.
type ruleCache map[string]*sharedRule

type sharedRule struct {
	rule *recurrence.Rule
	key  string // the map's key, shared by the entries that use the rule
	refs int
}

// acquire returns the rule of key and the cache's copy of key (one string for all its users).
func (c ruleCache) acquire(key string, j *store.Job) (*recurrence.Rule, string, error) {
	if r := c[key]; r != nil {
		r.refs++
		return r.rule, r.key, nil
	}
	rule, err := recurrence.Compile(j.Properties.StartTime, j.Properties.Recurrence, j.CreatedAt)
	if err != nil {
		return nil, "", err
	}
	c[key] = &sharedRule{rule: rule, key: key, refs: 1}
	return rule, key, nil
}

func (c ruleCache) release(key string) {
	if r := c[key]; r != nil {
		if r.refs--; r.refs <= 0 {
			delete(c, key)
		}
	}
}
