package dispatch

import (
	"container/heap"
	"context"
	"errors"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
)

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
			l.again(ctx, event{kind: evCollectionChanged, id: collectionID})
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
