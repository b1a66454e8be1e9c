package dispatch

import (
	"context"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/jobstate"
)

// maxPop bounds the items taken off the heap per loop turn, so events are not starved.
const maxPop = 4096

// inbox is how other goroutines talk to an actor's loop: its events (E, one type per actor)
// in a slice under a mutex (posting never blocks) and a one-slot wake-up channel.
type inbox[E any] struct {
	mu     sync.Mutex
	events []E
	wake   chan struct{}
}

func (in *inbox[E]) post(e E) {
	in.mu.Lock()
	in.events = append(in.events, e)
	in.mu.Unlock()
	in.poke()
}

// poke wakes the loop without an event.
func (in *inbox[E]) poke() {
	select {
	case in.wake <- struct{}{}:
	default:
	}
}

func (in *inbox[E]) take() []E {
	in.mu.Lock()
	defer in.mu.Unlock()
	evs := in.events
	in.events = nil
	return evs
}

// pending reports whether events wait to be taken.
func (in *inbox[E]) pending() bool {
	in.mu.Lock()
	defer in.mu.Unlock()
	return len(in.events) > 0
}

// schedulerEvent is an event of the scheduler's loop, applied by its goroutine.
type schedulerEvent interface {
	schedule(ctx context.Context, l *loop)
}

// executorEvent is an event of the executor's loop, applied by its goroutine.
type executorEvent interface {
	execute(ctx context.Context, ex *Executor)
}

// jobChanged: a job was created, updated or deleted. job is the job as this process wrote it
// (store.Driver.JobPut's answer), when it did: the loop takes it instead of reading the job
// back (see jobChanged.schedule); nil: the loop reads the job.
type jobChanged struct {
	id  int64
	job *store.Job
}

// collectionChanged: a collection's state changed or it was deleted.
type collectionChanged struct{ id int64 }

// manualClaimed: a manual run claimed a job, which took a new version and count.
type manualClaimed struct {
	jobID, prev, version int64
	count                int
}

// claimsCommitted: the writer committed (or failed to commit: err) a batch of claims.
type claimsCommitted struct {
	claims  []*claimOp
	results []store.ExecutionClaimResult
	err     error
}

// recordsCommitted: the writer committed a batch of records.
type recordsCommitted struct {
	records []*recordOp
	results []store.AttemptRecordResult
}

// rescheduled: a worker could not start an attempt: it runs at exec.DueAt.
type rescheduled struct{ exec *store.Execution }

// executionsTaken: a replica's executor took executions.
type executionsTaken struct{ executions []store.TakenExecution }

// executionsLost: a replica's executor lost executions (rescued after their lease ran out).
type executionsLost struct{ ids []int64 }

func (ev jobChanged) schedule(ctx context.Context, l *loop) {
	l.cancelAhead(ctx, ev.id)
	e := l.entries[ev.id]
	if e != nil && e.claiming {
		e.changed = true // its claim, when answered, is cancelled
	}
	if ev.job == nil || (e != nil && e.claiming) {
		l.reload(ctx, ev.id)
		return
	}
	l.s.pauses.observe(ev.id, ev.job)
	// The job as written, without reading it back. An entry at this version or later already
	// holds this write or a later one (a write or a claim of the job bumps its version; a
	// claim only succeeds at the version it expects). An older write that arrives after a
	// newer one, or after the job was deleted, can only leave an entry whose claim the store
	// refuses (ErrConflict: the claim needs the job at that version), and that refusal reloads
	// the job: a late event never makes an occurrence run.
	if e != nil && e.version >= ev.job.Version {
		return
	}
	l.put(ev.job)
}

func (ev collectionChanged) schedule(ctx context.Context, l *loop) { l.reloadCollection(ctx, ev.id) }

func (ev manualClaimed) schedule(_ context.Context, l *loop) {
	if e := l.entries[ev.jobID]; e != nil && e.version == ev.prev {
		e.version, e.execCount = ev.version, count32(ev.count)
	}
}

func (ev claimsCommitted) schedule(ctx context.Context, l *loop) { l.claimed(ctx, ev) }

func (ev recordsCommitted) schedule(_ context.Context, l *loop) { l.recorded(ev) }

func (ev jobChanged) execute(ctx context.Context, ex *Executor) { ex.cancelAhead(ctx, ev.id) }

func (ev collectionChanged) execute(ctx context.Context, ex *Executor) {
	ex.cancelAheadOfCollection(ctx, ev.id)
}

func (ev recordsCommitted) execute(_ context.Context, ex *Executor) { ex.recorded(ev) }

func (ev rescheduled) execute(_ context.Context, ex *Executor) {
	ex.held.push(ev.exec, nil, "", false, false, nil)
}

func (ev executionsTaken) execute(_ context.Context, ex *Executor) {
	ex.taken(ev)
	if ex.TestSignals.Taken.Enabled() {
		ids := make([]int64, len(ev.executions))
		for i, t := range ev.executions {
			ids[i] = t.Execution.ID
		}
		ex.TestSignals.Taken.Signal(ids)
	}
}

func (ev executionsLost) execute(_ context.Context, ex *Executor) {
	for _, it := range ex.held.lose(ev.ids) {
		if it.taken {
			ex.waiting.Add(-1)
		}
	}
	ex.TestSignals.Lost.Signal(ev.ids)
}

// entry is one schedulable job in the loop. The loop holds every schedulable job, so an entry
// keeps what an attempt needs compactly: its name, and its collection's key, its properties and
// its compiled schedule shared with the entries of the same collection, of the same definition
// (see definitions) and of the same schedule (ruleCache).
type entry struct {
	id        int64
	name      string
	coll      *sharedColl
	def       *sharedDef
	rule      *sharedRule // its schedule, shared with the jobs of the same schedule
	next      time.Time
	version   int64
	slot      timed // in the loop's heap while waiting for next; out while claiming or parked
	execCount int32 // the job's executionCount (see count32)
	claiming  bool  // a claim is in the writer
	dirty     bool  // changed while claiming: reload when the claim is answered
	parked    bool  // due, waiting in loop.parked for capacity
	changed   bool  // the job changed while claiming: cancel the claim when answered
	// started is the scheduled time (Unix ns) of the latest occurrence handed over due, and
	// aheadStarted that of the latest claimed ahead that started (set by the runner; shared by
	// the entries that replace this one): a change that comes too late to cancel it must not
	// schedule it again.
	started      int64
	aheadStarted *atomic.Int64
}

// count32 is an execution count as an entry keeps it (4 bytes: a job firing every second
// reaches 2^31 executions in 68 years; past it the count stays there).
func count32(n int) int32 {
	return int32(min(max(n, 0), math.MaxInt32)) //nolint:gosec // clamped
}

// jitterKey is the job's identity key when its rule has a jitter (jobstate.StartAt), else "".
func (e *entry) jitterKey() string {
	if e.rule == nil || e.rule.rule.Jitter() <= 0 {
		return ""
	}
	return store.JobKey{CollectionKey: e.coll.key, Name: e.name}.CanonicalID()
}

// startAt is when the entry's next occurrence starts: its scheduled time plus its jitter.
func (e *entry) startAt() time.Time {
	k := e.jitterKey()
	if k == "" {
		return e.next
	}
	return jobstate.StartAt(e.rule.rule, k, e.next)
}

// claimAt is when the loop claims e's next occurrence: Lookahead before it starts, or when it
// starts for a job with an overlap policy, so that the store's overlap rule sees whether the
// previous execution is still unfinished when the occurrence falls due, not before.
func (l *loop) claimAt(e *entry) time.Time {
	if jobstate.Overlapping(e.def.overlap) {
		return e.startAt()
	}
	return e.startAt().Add(-l.s.cfg.Lookahead)
}

// loop owns the schedule; only the scheduler's goroutine touches these fields.
type loop struct {
	s       *Scheduler
	entries map[int64]*entry
	rules   ruleCache
	defs    definitions
	colls   collections
	heap    timeHeap
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
	// fetched holds, while a turn's events are handled, the changed jobs prefetched for them
	// (nil: not found).
	fetched map[int64]*store.Job
}

func newLoop(s *Scheduler) *loop {
	return &loop{s: s, entries: map[int64]*entry{}, rules: ruleCache{}, defs: definitions{}, colls: collections{}, targets: map[string]*sharedTarget{},
		parked: map[string][]*entry{}, claimingDue: map[string]int{}}
}

// push puts e in the heap, to be claimed at at.
func (l *loop) push(at time.Time, e *entry) {
	e.slot.entry = e
	l.heap.push(&e.slot, at)
}

func (l *loop) run(ctx context.Context) {
	timer := l.s.clock.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		// The time is read before the events are taken: a change posted before the clock
		// reached an occurrence's due time is handled before that occurrence starts.
		now := l.s.clock.Now()
		evs := l.s.inbox.take()
		l.prefetch(ctx, evs)
		for _, ev := range evs {
			ev.schedule(ctx, l)
		}
		l.fetched = nil
		l.s.to.expire(now)
		room := l.capacity()
		var claims []*claimOp
		if l.parkedN > 0 {
			claims = l.unpark(now, room, claims)
		}
		for n := 0; n < maxPop && l.heap.len() > 0 && !l.heap.peek().when().After(now); n++ {
			e := l.heap.pop().entry
			if !room.admit(e, now) {
				l.park(e)
				continue
			}
			claims = append(claims, l.claim(e, now))
		}
		l.s.parked.Store(int64(l.parkedN))
		for _, c := range claims {
			l.s.pendingClaims.Add(1)
			if c.due {
				l.claimingDue[c.target]++
				l.claimingDueAll++
			}
			select {
			case l.s.ops <- op{claim: c}:
			case <-ctx.Done():
				return
			}
		}
		next := l.next()
		if !next.IsZero() && !next.After(l.s.clock.Now()) {
			continue // more due than one turn takes
		}
		if !next.IsZero() {
			timer.Reset(next.Sub(l.s.clock.Now()))
			// The clock may have moved between reading it and arming the timer.
			if !next.After(l.s.clock.Now()) {
				continue
			}
		} else {
			timer.Stop()
		}
		l.s.quiet.waiting(quietScheduler, next)
		select {
		case <-ctx.Done():
			return
		case <-timer.C():
		case <-l.s.inbox.wake:
		}
		l.s.quiet.woke(quietScheduler)
	}
}

// next is when the loop has something to do next (zero: nothing): claim a job's occurrence, or
// (the leader's) let an occurrence held ahead start.
func (l *loop) next() time.Time {
	var at time.Time
	if l.heap.len() > 0 {
		at = l.heap.peek().when()
	}
	if h := l.s.to.next(); !h.IsZero() && (at.IsZero() || h.Before(at)) {
		at = h
	}
	return at
}

// cancelAhead cancels the occurrences of a job claimed ahead that have not started: a change of
// the job (deleted, disabled, updated, its collection disabled) wins over them. Their executions
// are deleted from the store, with no history.
func (l *loop) cancelAhead(ctx context.Context, jobID int64) {
	for _, x := range l.s.to.cancelAhead(jobID) {
		l.s.cancel(ctx, x)
	}
}

// recorded applies the job states of a batch of records to the schedule: a job no longer
// Enabled is dropped, and one whose version the record bumped takes it.
func (l *loop) recorded(ev recordsCommitted) {
	for i, r := range ev.records {
		res := ev.results[i]
		if res.Gone || res.State == "" { // gone, or the job was not touched
			continue
		}
		e := l.entries[r.rec.JobID]
		if e == nil {
			continue
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
