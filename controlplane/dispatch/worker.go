package dispatch

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/action"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/secret"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/arm"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/jobdef"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/jobstate"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/testsignal"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"
)

// task is one attempt to make: a claimed execution and the job it belongs to (definition sealed),
// and the target the attempt connects to ("" when the job is not loaded yet).
type task struct {
	exec   store.Execution
	job    *store.Job
	target string
}

// lane is the queue of one target: its tasks waiting to start and its attempts under way.
type lane struct {
	key     string
	items   []task
	head    int
	running int
	ready   bool // in taskQueue.ready
}

func (l *lane) queued() int { return len(l.items) - l.head }

// taskQueue is an unbounded queue of tasks for the workers, one FIFO lane per target. A worker
// takes the next task of the next lane in turn (round robin) among the lanes with fewer than
// limit attempts under way, so that a target that hangs holds at most limit workers and its
// queued tasks hold none. Unbounded so that the writers and the loops never block on busy
// workers (the workers block on the writer: no cycle); the scheduler bounds what it claims (free,
// budget) and a replica's executor what it takes.
type taskQueue struct {
	mu     sync.Mutex
	cond   *sync.Cond
	limit  int
	lanes  map[string]*lane
	ready  []*lane // lanes with a queued task and a free slot, in turn
	rhead  int
	queued int // tasks waiting, every lane
	// blocked counts the tasks waiting in lanes at their limit: they wait for their target,
	// not for a worker.
	blocked int
	closed  bool
	// running counts the tasks taken and not yet done.
	running int
	// idle is signalled when no task is queued or running any more (the writer commits records
	// when no attempt waits to start or is under way).
	idle chan struct{}
	// freed, when set, is called (without the lock) when an attempt ends, with whether no task
	// is left queued or running.
	freed func(idle bool)
	// spawn, when set (startWorkers), starts a worker: one is started when a lane turns ready
	// and no worker waits for one, up to maxWorkers. Workers are started as the tasks ask for
	// them, not all at start: an idle replica holds none of their stacks.
	spawn      func()
	maxWorkers int
	workers    int // started
	waiting    int // in pop, waiting for a ready lane
	// waitingNow is sent the count of waiting workers each time one starts to wait (tests).
	waitingNow testsignal.Signal[int]
}

func newTaskQueue(limit int) *taskQueue {
	q := &taskQueue{idle: make(chan struct{}, 1), limit: limit, lanes: map[string]*lane{}}
	q.cond = sync.NewCond(&q.mu)
	return q
}

// blockedOf is what a lane adds to q.blocked.
func (q *taskQueue) blockedOf(l *lane) int {
	if l.running >= q.limit {
		return l.queued()
	}
	return 0
}

// markReady puts a lane that can start a task in turn, and wakes a worker for it, or starts one
// when none waits (and more may be started).
func (q *taskQueue) markReady(l *lane) {
	if !l.ready && l.queued() > 0 && l.running < q.limit {
		l.ready = true
		q.ready = append(q.ready, l)
		q.wakeWorker()
	}
}

// wakeWorker wakes a waiting worker for a lane just made ready; when every waiting worker is
// already woken for another, it starts one (up to maxWorkers).
func (q *taskQueue) wakeWorker() {
	if len(q.ready)-q.rhead > q.waiting && q.spawn != nil && q.workers < q.maxWorkers && !q.closed {
		q.workers++
		q.spawn()
		return
	}
	q.cond.Signal()
}

// startWorkers starts the workers of the tasks queued so far and, from now on, one whenever a
// task waits and no worker is free, up to n in all. spawn must start a worker without waiting
// (it is called under the queue's lock).
func (q *taskQueue) startWorkers(n int, spawn func()) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.spawn, q.maxWorkers = spawn, n
	for range min(len(q.ready)-q.rhead, n) {
		q.workers++
		spawn()
	}
}

// started is how many workers were started (tests).
func (q *taskQueue) started() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.workers
}

func (q *taskQueue) push(t task) {
	q.mu.Lock()
	if !q.closed {
		l := q.lanes[t.target]
		if l == nil {
			l = &lane{key: t.target}
			q.lanes[t.target] = l
		}
		q.blocked -= q.blockedOf(l)
		l.items = append(l.items, t)
		q.queued++
		q.blocked += q.blockedOf(l)
		q.markReady(l)
	}
	q.mu.Unlock()
}

// pop waits for a task; ok is false once the queue is closed (queued tasks are left: their
// executions are stored and resume on the next start).
func (q *taskQueue) pop() (task, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for !q.closed && q.rhead == len(q.ready) {
		q.waiting++
		q.waitingNow.Signal(q.waiting)
		q.cond.Wait()
		q.waiting--
	}
	if q.closed {
		return task{}, false
	}
	l := q.ready[q.rhead]
	q.ready[q.rhead] = nil
	q.rhead++
	if q.rhead == len(q.ready) {
		q.ready, q.rhead = q.ready[:0], 0
	}
	l.ready = false
	q.blocked -= q.blockedOf(l)
	t := l.items[l.head]
	l.items[l.head] = task{}
	l.head++
	if l.head == len(l.items) {
		l.items, l.head = l.items[:0], 0
	}
	l.running++
	q.queued--
	q.running++
	q.blocked += q.blockedOf(l)
	q.markReady(l) // back in turn, behind the others
	return t, true
}

// done says a task taken by pop is over.
func (q *taskQueue) done(target string) {
	q.mu.Lock()
	l := q.lanes[target]
	q.blocked -= q.blockedOf(l)
	l.running--
	q.running--
	q.blocked += q.blockedOf(l)
	q.markReady(l)
	if l.running == 0 && l.queued() == 0 {
		delete(q.lanes, target)
	}
	idle := q.running == 0 && q.queued == 0
	if idle {
		select {
		case q.idle <- struct{}{}:
		default:
		}
	}
	freed := q.freed
	q.mu.Unlock()
	if freed != nil {
		freed(idle)
	}
}

// runningNow is the attempts under way.
func (q *taskQueue) runningNow() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.running
}

func (q *taskQueue) len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.queued
}

// busy reports whether a task is queued or running.
func (q *taskQueue) busy() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.running > 0 || q.queued > 0
}

// workerLoad is the attempts under way and the tasks waiting for a worker (not those waiting
// for their target): what the scheduler sizes its claims by.
func (q *taskQueue) workerLoad() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.running + q.queued - q.blocked
}

// laneLoad is a target's tasks queued or under way.
func (q *taskQueue) laneLoad(target string) int {
	q.mu.Lock()
	defer q.mu.Unlock()
	if l := q.lanes[target]; l != nil {
		return l.running + l.queued()
	}
	return 0
}

func (q *taskQueue) close() {
	q.mu.Lock()
	q.closed = true
	q.cond.Broadcast()
	q.mu.Unlock()
}

// worker runs attempts until the queue closes. attemptCtx is cancelled only when the shutdown
// grace period is over.
func (ex *Executor) worker(attemptCtx context.Context) {
	for {
		t, ok := ex.tasks.pop()
		if !ok {
			return
		}
		from := t.target // its lane (work may move the task to another)
		if r, ok := ex.work(attemptCtx, t); ok {
			ex.pendingRecords.Add(1)
			select {
			case ex.records <- op{record: r}:
			case <-attemptCtx.Done():
				ex.pendingRecords.Add(-1)
			}
		}
		ex.tasks.done(from) // after its record is queued: when the queue is idle, every record is in
		if attemptCtx.Err() != nil {
			return
		}
	}
}

// work makes the attempt of a task and returns what to record (ok false: nothing to record).
func (ex *Executor) work(attemptCtx context.Context, t task) (*recordOp, bool) {
	if t.job == nil {
		j, err := ex.store.JobGetByID(attemptCtx, store.JobGetByIDParams{ID: t.exec.JobID})
		if errors.Is(err, store.ErrNotFound) {
			if t.exec.Manual {
				ex.manualDone(t.exec.JobID, t.exec.Tag)
			}
			return nil, false // deleted, with its executions
		}
		if err != nil {
			ex.log.Error("loading the job of an execution: trying again in a minute", "job_id", t.exec.JobID,
				"execution_tag", t.exec.Tag, "error", err.Error())
			x := t.exec
			x.DueAt = ex.clock.Now().Add(time.Minute)
			ex.inbox.post(rescheduled{exec: &x})
			return nil, false
		}
		t.job = j
		if to := ex.target(j.Properties, t.exec.Phase); to != t.target {
			// Now that its target is known, the task waits in that target's lane.
			t.target = to
			ex.tasks.push(t)
			return nil, false
		}
	}
	return ex.attempt(attemptCtx, t)
}

// ResourceIDs returns the ARM IDs of a job and of its collection (the job's built on the
// collection's: two strings made, not three).
func ResourceIDs(k store.JobKey) (job, collection string) {
	collection = k.CollectionKey.ID()
	return arm.JobIDIn(collection, k.Name), collection
}

// attempt makes one attempt and returns what to record; ok is false when the attempt was cut
// short by shutdown (nothing is recorded: the execution runs again on the next start).
func (ex *Executor) attempt(ctx context.Context, t task) (*recordOp, bool) {
	x := t.exec
	start := ex.clock.Now()
	if x.Phase == store.ActionMain && x.Attempt == 0 && !x.Backfill { // a backfill's occurrences are past by design
		ex.m.lateness.Observe(max(start.Sub(x.Scheduled), 0).Seconds())
	}
	props, err := openSecrets(ex.box, t.job.Properties, t.job.Key)
	jobID, collID := ResourceIDs(t.job.Key)
	at := action.Attempt{
		ExecutionTag: x.Tag, ClientRequestID: newUUID(),
		ExpectedExecution: x.Scheduled, JobID: jobID, JobCollectionID: collID, Region: ex.cfg.Region,
		Phase: x.Phase, RetryCount: x.Attempt,
	}
	var res action.Result
	if err != nil {
		res = action.Result{Message: "the job's secrets cannot be opened: " + err.Error()}
	} else {
		if x.Phase == store.ActionError {
			if props.Action != nil {
				at.ErrorAction(props.Action.ErrorAction)
			}
			at.Failure = ex.failureOf(ctx, t.job, x.Tag)
		} else {
			at.MainAction(props.Action)
		}
		res = ex.act.Do(ctx, at)
	}
	if ctx.Err() != nil {
		return nil, false
	}
	end := ex.clock.Now()

	msg := res.Message
	if x.Missed > 0 && x.Phase == store.ActionMain && x.Attempt == 0 {
		msg = fmt.Sprintf("%d missed occurrence(s) before %s were coalesced into this execution (misfire threshold %s).\n%s",
			x.Missed, x.Scheduled.UTC().Format(time.RFC3339), jobdef.MisfireOf(&t.job.Properties, ex.cfg.MisfireThreshold).Threshold, msg)
	}
	status := store.HistoryCompleted
	if !res.Success {
		status = store.HistoryFailed
	}
	r := &recordOp{exec: x, job: t.job, rec: store.AttemptRecord{
		ExecutionID: x.ID, JobID: x.JobID, FaultedAfter: ex.cfg.FaultedAfter, Owner: ex.recordOwner(), Backfill: x.Backfill,
		History: store.HistoryEntry{
			ExecutionTag: x.Tag, ActionName: x.Phase, Status: status, Message: msg, RetryCount: x.Attempt,
			RepeatCount: x.RepeatCount, ExpectedExecutionTime: x.Scheduled, StartTime: start, EndTime: end,
		},
	}}
	o := jobstate.Attempt{
		Success: res.Success, Phase: x.Phase, Retries: x.Attempt, Policy: jobstate.RetryPolicy(&props, x.Phase),
		HasErrorAction: props.Action != nil && props.Action.ErrorAction != nil, End: end, Tag: x.Tag,
	}.Outcome()
	r.rec.Failure, r.rec.Finished, r.rec.Faulted = o.Failure, o.Finished, o.Faulted
	// A job with an overlap policy may have an occurrence buffered for this execution's end.
	r.rec.Release = o.Finished && jobstate.Overlapping(jobdef.OverlapOf(&t.job.Properties))
	r.rec.Next, r.rec.Phase, r.rec.Attempt = o.Next, o.Phase, o.Retries
	switch o.Result {
	case jobstate.Succeeded:
		r.outcome = outcomeCompleted
	case jobstate.Recovered:
		r.outcome = outcomeFailed
	case jobstate.FaultedOccurrence:
		r.outcome = outcomeFaulted
	}
	if o.Finished && ex.act.Tracing() {
		ex.traceExecution(ctx, at, start, end, r.outcome)
	}
	lvl := slog.LevelDebug
	if !res.Success {
		lvl = slog.LevelInfo
	}
	if ex.log.Enabled(ctx, lvl) {
		ex.log.LogAttrs(ctx, lvl, "attempt", slog.Int64("job_id", x.JobID), slog.String("job", t.job.Key.Name),
			slog.String("execution_tag", x.Tag), slog.String("action", x.Phase), slog.Int("retry_count", x.Attempt),
			slog.Int("repeat_count", x.RepeatCount), slog.Bool("success", res.Success), slog.Int("status_code", res.StatusCode))
	}
	return r, true
}

// openSecrets returns a copy of p with its secrets opened for the job owner (a value sealed for
// another job does not open: the attempt fails); p (shared) is left sealed.
func openSecrets(box *secret.Box, p wire.JobProperties, owner store.JobKey) (wire.JobProperties, error) {
	sealed := false
	for _, f := range secret.Fields(&p) {
		if *f != "" {
			sealed = true
			break
		}
	}
	if !sealed {
		return p, nil
	}
	p.Action = p.Action.Clone()
	if err := box.OpenJob(&p, owner); err != nil {
		return wire.JobProperties{}, err
	}
	return p, nil
}

// traceExecution records the span of an execution that is over, its last attempt at: from its
// expected time (or this attempt's start, if earlier) to the attempt's end, with its outcome and
// its attempts (the main action's, read for the error action, and this phase's).
func (ex *Executor) traceExecution(ctx context.Context, at action.Attempt, start, end time.Time, outcome string) {
	attempts := at.RetryCount + 1
	if at.Phase == store.ActionError && at.Failure != nil {
		attempts += at.Failure.Attempts
	}
	from := at.ExpectedExecution
	if start.Before(from) {
		from = start
	}
	ex.act.TraceExecution(ctx, action.Execution{Last: at, Start: from, End: end, Outcome: outcome, Attempts: attempts})
}
