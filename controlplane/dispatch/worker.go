package dispatch

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/action"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/secret"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/retry"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"
)

// task is one attempt to make: a claimed execution and the job it belongs to (definition sealed).
type task struct {
	exec store.Execution
	job  *store.Job
}

// taskQueue is an unbounded FIFO of tasks for the workers. Unbounded so that the writer and the
// loop never block on busy workers (the workers block on the writer: no cycle); its length is
// the backlog.
type taskQueue struct {
	mu     sync.Mutex
	cond   *sync.Cond
	items  []task
	head   int
	closed bool
	// running counts the tasks taken and not yet done.
	running int
	// idle is signalled when no task is queued or running any more (the writer commits records
	// when no attempt waits to start or is under way).
	idle chan struct{}
}

func newTaskQueue() *taskQueue {
	q := &taskQueue{idle: make(chan struct{}, 1)}
	q.cond = sync.NewCond(&q.mu)
	return q
}

func (q *taskQueue) push(t task) {
	q.mu.Lock()
	if !q.closed {
		q.items = append(q.items, t)
		q.cond.Signal()
	}
	q.mu.Unlock()
}

// pop waits for a task; ok is false once the queue is closed (queued tasks are left: their
// executions are stored and resume on the next start).
func (q *taskQueue) pop() (task, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for !q.closed && q.head == len(q.items) {
		q.cond.Wait()
	}
	if q.closed {
		return task{}, false
	}
	t := q.items[q.head]
	q.items[q.head] = task{}
	q.head++
	if q.head == len(q.items) {
		q.items, q.head = q.items[:0], 0
	}
	q.running++
	return t, true
}

// done says a task taken by pop is over.
func (q *taskQueue) done() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.running--
	if q.running == 0 && q.head == len(q.items) {
		select {
		case q.idle <- struct{}{}:
		default:
		}
	}
}

func (q *taskQueue) len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.items) - q.head
}

// busy reports whether a task is queued or running.
func (q *taskQueue) busy() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.running > 0 || q.head < len(q.items)
}

func (q *taskQueue) close() {
	q.mu.Lock()
	q.closed = true
	q.cond.Broadcast()
	q.mu.Unlock()
}

// worker runs attempts until the queue closes. attemptCtx is cancelled only when the shutdown
// grace period is over.
func (d *Dispatcher) worker(attemptCtx context.Context) {
	for {
		t, ok := d.tasks.pop()
		if !ok {
			return
		}
		if r, ok := d.work(attemptCtx, t); ok {
			select {
			case d.ops <- op{record: r}:
			case <-attemptCtx.Done():
			}
		}
		d.tasks.done() // after its record is queued: when the queue is idle, every record is in
		if attemptCtx.Err() != nil {
			return
		}
	}
}

// work makes the attempt of a task and returns what to record (ok false: nothing to record).
func (d *Dispatcher) work(attemptCtx context.Context, t task) (*recordOp, bool) {
	if t.job == nil {
		j, err := d.store.JobGetByID(attemptCtx, store.JobGetByIDParams{ID: t.exec.JobID})
		if errors.Is(err, store.ErrNotFound) {
			return nil, false // deleted, with its executions
		}
		if err != nil {
			d.log.Error("loading the job of an execution: trying again in a minute", "job_id", t.exec.JobID,
				"execution_tag", t.exec.Tag, "error", err.Error())
			x := t.exec
			x.DueAt = d.clock.Now().Add(time.Minute)
			d.inbox.post(event{kind: evReschedule, exec: &x})
			return nil, false
		}
		t.job = j
	}
	return d.attempt(attemptCtx, t)
}

// ResourceIDs returns the ARM IDs of a job and of its collection.
func ResourceIDs(k store.JobKey) (job, collection string) {
	return k.ID(), k.CollectionKey.ID()
}

// attempt makes one attempt and returns what to record; ok is false when the attempt was cut
// short by shutdown (nothing is recorded: the execution runs again on the next start).
func (d *Dispatcher) attempt(ctx context.Context, t task) (*recordOp, bool) {
	x := t.exec
	start := d.clock.Now()
	if x.Phase == store.ActionMain && x.Attempt == 0 {
		d.m.lateness.Observe(max(start.Sub(x.Scheduled), 0).Seconds())
	}
	props, err := openSecrets(d.box, t.job.Properties, t.job.Key)
	var res action.Result
	if err != nil {
		res = action.Result{Message: "the job's secrets cannot be opened: " + err.Error()}
	} else {
		jobID, collID := ResourceIDs(t.job.Key)
		at := action.Attempt{
			ExecutionTag: x.Tag, ClientRequestID: uuid.NewString(),
			ExpectedExecution: x.Scheduled, JobID: jobID, JobCollectionID: collID, Region: d.cfg.Region,
		}
		if x.Phase == store.ActionError {
			if props.Action != nil {
				at.ErrorAction(props.Action.ErrorAction)
			}
		} else {
			at.MainAction(props.Action)
		}
		res = d.exec.Do(ctx, at)
	}
	if ctx.Err() != nil {
		return nil, false
	}
	end := d.clock.Now()

	msg := res.Message
	if x.Missed > 0 && x.Phase == store.ActionMain && x.Attempt == 0 {
		msg = fmt.Sprintf("%d missed occurrence(s) before %s were coalesced into this execution (misfire threshold %s).\n%s",
			x.Missed, x.Scheduled.UTC().Format(time.RFC3339), d.cfg.MisfireThreshold, msg)
	}
	status := store.HistoryCompleted
	if !res.Success {
		status = store.HistoryFailed
	}
	r := &recordOp{exec: x, job: t.job, rec: store.AttemptRecord{
		ExecutionID: x.ID, JobID: x.JobID, FaultedAfter: d.cfg.FaultedAfter,
		History: store.HistoryEntry{
			ExecutionTag: x.Tag, ActionName: x.Phase, Status: status, Message: msg, RetryCount: x.Attempt,
			RepeatCount: x.RepeatCount, ExpectedExecutionTime: x.Scheduled, StartTime: start, EndTime: end,
		},
	}}
	hasErrorAction := props.Action != nil && props.Action.ErrorAction != nil
	pol := policy(props, x.Phase)
	switch {
	case res.Success:
		r.rec.Finished = true
		r.outcome = outcomeCompleted
		if x.Phase == store.ActionError {
			r.outcome = outcomeFailed
		}
	case pol.Type == retry.Fixed && x.Attempt < pol.Count:
		r.rec.Next, r.rec.Phase, r.rec.Attempt = end.Add(pol.Interval), x.Phase, x.Attempt+1
	case x.Phase == store.ActionMain && hasErrorAction:
		r.rec.Failure = true
		r.rec.Next, r.rec.Phase, r.rec.Attempt = end, store.ActionError, 0
	default:
		r.rec.Failure = x.Phase == store.ActionMain
		r.rec.Finished, r.rec.Faulted = true, true
		r.outcome = outcomeFaulted
	}
	lvl := slog.LevelDebug
	if !res.Success {
		lvl = slog.LevelInfo
	}
	if d.log.Enabled(ctx, lvl) {
		d.log.LogAttrs(ctx, lvl, "attempt", slog.Int64("job_id", x.JobID), slog.String("job", t.job.Key.Name),
			slog.String("execution_tag", x.Tag), slog.String("action", x.Phase), slog.Int("retry_count", x.Attempt),
			slog.Int("repeat_count", x.RepeatCount), slog.Bool("success", res.Success), slog.Int("status_code", res.StatusCode))
	}
	return r, true
}

// policy is the retry policy of the phase: the error action's own, else the main action's.
func policy(p wire.JobProperties, phase string) retry.Policy {
	var rp *wire.RetryPolicy
	if p.Action != nil {
		rp = p.Action.RetryPolicy
		if phase == store.ActionError && p.Action.ErrorAction != nil && p.Action.ErrorAction.RetryPolicy != nil {
			rp = p.Action.ErrorAction.RetryPolicy
		}
	}
	pol, problems := retry.Parse("action.retryPolicy", rp)
	if len(problems) > 0 {
		return retry.Default()
	}
	return pol
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
