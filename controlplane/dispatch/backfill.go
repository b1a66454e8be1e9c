package dispatch

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
)

// Backfill runs a backfill of the job (SPEC 8): one execution per occurrence of at, in order,
// each with its own tag and the occurrence as its expected time. They are stored before Backfill
// returns (store.ExecutionBackfill) and run one after the other, oldest first: each starts when
// the previous one has finished (its retries and error action included), so a backfill never
// overlaps itself, and each waits in its target's lane like any other attempt (the per-target
// limits hold). The record that finishes one makes the next due in the same transaction, so
// a restart, or another replica, carries on where the backfill was. It returns the stored
// executions, a *store.BackfillInFlightError (an ErrConflict) while the job's previous backfill
// is unfinished, or store.ErrNotFound.
func (ex *Executor) Backfill(ctx context.Context, jobID int64, at []time.Time) ([]*store.Execution, error) {
	if err := ex.awaitLoaded(ctx, jobID); err != nil {
		return nil, fmt.Errorf("backfill: %w", err)
	}
	p := store.ExecutionBackfillParams{JobID: jobID, Now: ex.clock.Now(), Executions: make([]store.Execution, len(at))}
	for i, t := range at {
		p.Executions[i] = store.Execution{Tag: uuid.NewString(), Scheduled: t}
	}
	res, err := ex.store.ExecutionBackfill(ctx, p)
	if err != nil {
		return nil, fmt.Errorf("backfill: %w", err)
	}
	if ex.hooks.manualClaimed != nil {
		ex.hooks.manualClaimed(jobID, res.Previous, res.Version, res.Count)
	}
	xs := res.Executions
	ex.log.Info("backfill stored", "job_id", jobID, "executions", len(xs), "first_execution_tag", xs[0].Tag,
		"from", xs[0].Scheduled, "last", xs[len(xs)-1].Scheduled)
	if ex.replica() {
		if _, err := ex.take(ctx, store.ExecutionTakeParams{IDs: []int64{xs[0].ID}}); err != nil {
			ex.log.Warn("backfill stored but its first execution not taken here: an executor takes it", "job_id", jobID, "error", err.Error())
		}
		return xs, nil
	}
	ex.backfills.add(xs[1:]...)
	first := *xs[0]
	ex.tasks.push(task{exec: first, target: ""})
	return xs, nil
}

// backfillRecorded goes on with a backfill when a record finished one of its executions: a
// single process runs the job's next waiting execution (the store made that very one due, in
// the record's transaction); a replica's executor looks for it among the executions to take.
// When the execution was gone (its job deleted), or the store made none due (res.BackfillNext 0:
// the job's disabling cancelled those waiting, jobstate.BackfillOnChange), the job's waiting ones
// are forgotten.
func (ex *Executor) backfillRecorded(r *recordOp, res store.AttemptRecordResult) {
	gone := res.Gone
	if !r.exec.Backfill || (!r.rec.Finished && !gone) {
		return
	}
	if ex.replica() {
		if !gone {
			ex.Wake()
		}
		return
	}
	if gone || res.BackfillNext == 0 {
		ex.backfills.drop(r.exec.JobID)
		return
	}
	for {
		next := ex.backfills.next(r.exec.JobID)
		if next == nil {
			return
		}
		if next.ID != res.BackfillNext {
			continue // cancelled in the store since it was queued
		}
		x := *next
		x.DueAt = ex.clock.Now()
		ex.tasks.push(task{exec: x, target: ""})
		return
	}
}

// backfillQueue holds a single process's waiting backfill executions, by job, in order.
type backfillQueue struct {
	mu    sync.Mutex
	byJob map[int64][]*store.Execution
}

// add appends waiting executions (in ID order).
func (q *backfillQueue) add(xs ...*store.Execution) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.byJob == nil {
		q.byJob = map[int64][]*store.Execution{}
	}
	for _, x := range xs {
		q.byJob[x.JobID] = append(q.byJob[x.JobID], x)
	}
}

// next removes and returns the job's first waiting execution (nil: none).
func (q *backfillQueue) next(jobID int64) *store.Execution {
	q.mu.Lock()
	defer q.mu.Unlock()
	xs := q.byJob[jobID]
	if len(xs) == 0 {
		return nil
	}
	if len(xs) == 1 {
		delete(q.byJob, jobID)
	} else {
		q.byJob[jobID] = xs[1:]
	}
	return xs[0]
}

// drop forgets the job's waiting executions.
func (q *backfillQueue) drop(jobID int64) {
	q.mu.Lock()
	defer q.mu.Unlock()
	delete(q.byJob, jobID)
}

// waiting reports whether x waits for the previous execution of its backfill.
func waiting(x *store.Execution) bool { return x.Backfill && x.DueAt.Equal(store.BackfillWaiting) }
