package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
)

func record(t *testing.T, d store.Driver, r store.AttemptRecord) store.AttemptRecordResult {
	t.Helper()
	res, err := d.AttemptRecordMany(t.Context(), store.AttemptRecordManyParams{Records: []store.AttemptRecord{r}, Now: t0})
	if err != nil {
		t.Fatalf("record: %v", err)
	}
	if len(res) != 1 {
		t.Fatalf("record: %d results, want 1", len(res))
	}
	return res[0]
}

func unfinished(t *testing.T, d store.Driver) []*store.Execution {
	t.Helper()
	es, err := d.ExecutionListUnfinished(t.Context(), store.ExecutionListUnfinishedParams{})
	if err != nil {
		t.Fatal(err)
	}
	return es
}

func entry(e *store.Execution, action, status string, retry int, msg string) store.HistoryEntry {
	return store.HistoryEntry{
		ExecutionTag: e.Tag, ActionName: action, Status: status, Message: msg, RetryCount: retry,
		RepeatCount: e.RepeatCount, ExpectedExecutionTime: e.Scheduled, StartTime: t0.Add(time.Second), EndTime: t0.Add(2 * time.Second),
	}
}

func testAttemptRecordRetryAndErrorAction(t *testing.T, d store.Driver) {
	putCollection(t, d, "c", "Enabled")
	j := putJob(t, d, "c", "j", "Enabled", t0)
	cl := claim(t, d, scheduledClaim(j, "tag", t0.Add(time.Hour)))
	e := cl.Execution

	// A failed attempt with retries left: the execution goes on, the job is untouched.
	r := record(t, d, store.AttemptRecord{ExecutionID: e.ID, JobID: j.ID, History: entry(e, store.ActionMain, store.HistoryFailed, 0, "HTTP 500"),
		Next: t0.Add(30 * time.Second), Phase: store.ActionMain, Attempt: 1})
	equal(t, "result after a retry", r, store.AttemptRecordResult{})
	equal(t, "job version after a retry", getJob(t, d, j.ID).Version, cl.Version)
	wantE := *e
	wantE.Attempt, wantE.DueAt = 1, t0.Add(30*time.Second)
	equal(t, "execution after a retry", unfinished(t, d), []*store.Execution{&wantE})

	// Retries spent: failure counted, on to the error action.
	r = record(t, d, store.AttemptRecord{ExecutionID: e.ID, JobID: j.ID, History: entry(e, store.ActionMain, store.HistoryFailed, 1, "HTTP 500"),
		Next: t0.Add(31 * time.Second), Phase: store.ActionError, Attempt: 0, Failure: true})
	equal(t, "result after the main action failed", r, store.AttemptRecordResult{State: "Enabled", Version: cl.Version + 1, Previous: cl.Version})
	wantE.Phase, wantE.Attempt, wantE.DueAt = store.ActionError, 0, t0.Add(31*time.Second)
	equal(t, "execution in the error phase", unfinished(t, d), []*store.Execution{&wantE})

	// The error action succeeds: not faulted, consecutive faults reset.
	r = record(t, d, store.AttemptRecord{ExecutionID: e.ID, JobID: j.ID, History: entry(e, store.ActionError, store.HistoryCompleted, 0, "HTTP 200"),
		Finished: true, FaultedAfter: 3})
	// The failure was counted when the main action failed; no fault to reset: the job is untouched.
	equal(t, "result after the error action", r, store.AttemptRecordResult{})
	equal(t, "job version after the error action", getJob(t, d, j.ID).Version, cl.Version+1)
	equal(t, "executions", unfinished(t, d), []*store.Execution{})
	got := getJob(t, d, j.ID)
	equal(t, "status", got.Status, store.JobStatus{ExecutionCount: 1, FailureCount: 1, LastExecutionTime: t0, NextExecutionTime: t0.Add(time.Hour)})

	hs := history(t, d, j, store.HistoryListParams{})
	equal(t, "history length", len(hs), 3)
	for i, want := range []store.HistoryEntry{
		entry(e, store.ActionError, store.HistoryCompleted, 0, "HTTP 200"),
		entry(e, store.ActionMain, store.HistoryFailed, 1, "HTTP 500"),
		entry(e, store.ActionMain, store.HistoryFailed, 0, "HTTP 500"),
	} {
		want.ID, want.JobID, want.ExecutionID = hs[i].ID, j.ID, e.ID
		equal(t, fmt.Sprintf("history[%d]", i), *hs[i], want)
	}
}

func testAttemptRecordFaulted(t *testing.T, d store.Driver) {
	putCollection(t, d, "c", "Enabled")
	j := putJob(t, d, "c", "j", "Enabled", t0)
	fault := func(i int) store.AttemptRecordResult {
		t.Helper()
		cur := getJob(t, d, j.ID)
		e := claim(t, d, scheduledClaim(cur, fmt.Sprintf("tag-%d", i), t0.Add(time.Duration(i+1)*time.Minute))).Execution
		return record(t, d, store.AttemptRecord{ExecutionID: e.ID, JobID: j.ID, History: entry(e, store.ActionMain, store.HistoryFailed, 0, "HTTP 503"),
			Failure: true, Finished: true, Faulted: true, FaultedAfter: 3})
	}
	equal(t, "state after 1", fault(0).State, "Enabled")
	equal(t, "state after 2", fault(1).State, "Enabled")
	// A good occurrence resets the run of faults.
	cur := getJob(t, d, j.ID)
	e := claim(t, d, scheduledClaim(cur, "ok", t0.Add(10*time.Minute))).Execution
	record(t, d, store.AttemptRecord{ExecutionID: e.ID, JobID: j.ID, History: entry(e, store.ActionMain, store.HistoryCompleted, 0, "HTTP 200"),
		Finished: true, FaultedAfter: 3})
	equal(t, "consecutive after success", getJob(t, d, j.ID).Status.ConsecutiveFaults, 0)
	// Another good occurrence changes nothing in the job: not even its version.
	cur = getJob(t, d, j.ID)
	e = claim(t, d, scheduledClaim(cur, "ok2", t0.Add(11*time.Minute))).Execution
	claimed := getJob(t, d, j.ID)
	equal(t, "record of a good occurrence after a good one", record(t, d, store.AttemptRecord{ExecutionID: e.ID, JobID: j.ID,
		History: entry(e, store.ActionMain, store.HistoryCompleted, 0, "HTTP 200"), Finished: true, FaultedAfter: 3}), store.AttemptRecordResult{})
	equal(t, "job after a good occurrence after a good one", getJob(t, d, j.ID), claimed)
	equal(t, "state after 3 with a success between", fault(2).State, "Enabled")
	equal(t, "state after 4", fault(3).State, "Enabled")
	equal(t, "state after 5 (3 in a row)", fault(4).State, "Faulted")
	got := getJob(t, d, j.ID)
	equal(t, "state", got.State, "Faulted")
	equal(t, "status", got.Status, store.JobStatus{ExecutionCount: 7, FailureCount: 5, FaultedCount: 5, ConsecutiveFaults: 3, LastExecutionTime: t0})
}

func testAttemptRecordCompleted(t *testing.T, d store.Driver) {
	putCollection(t, d, "c", "Enabled")
	j := putJob(t, d, "c", "j", "Enabled", t0)
	// Two executions in flight, nothing scheduled after them.
	e1 := claim(t, d, scheduledClaim(j, "one", t0.Add(time.Minute))).Execution
	j = getJob(t, d, j.ID)
	e2 := claim(t, d, scheduledClaim(j, "two", time.Time{})).Execution
	r := record(t, d, store.AttemptRecord{ExecutionID: e1.ID, JobID: j.ID, History: entry(e1, store.ActionMain, store.HistoryCompleted, 0, "ok"), Finished: true})
	equal(t, "state while another execution runs", r.State, "Enabled")
	r = record(t, d, store.AttemptRecord{ExecutionID: e2.ID, JobID: j.ID, History: entry(e2, store.ActionMain, store.HistoryCompleted, 0, "ok"), Finished: true})
	equal(t, "state after the last one", r.State, "Completed")
	got := getJob(t, d, j.ID)
	equal(t, "stored state", got.State, "Completed")
	equal(t, "execution count", got.Status.ExecutionCount, 2)

	// A manual run of a Disabled job with nothing scheduled leaves it Disabled.
	dis := putJob(t, d, "c", "dis", "Disabled", time.Time{})
	e := claim(t, d, store.ExecutionClaim{Execution: store.Execution{JobID: dis.ID, Tag: "m", Scheduled: t0, Manual: true, DueAt: t0, ClaimedAt: t0}}).Execution
	r = record(t, d, store.AttemptRecord{ExecutionID: e.ID, JobID: dis.ID, History: entry(e, store.ActionMain, store.HistoryCompleted, 0, "ok"), Finished: true})
	equal(t, "disabled job after a manual run", r.State, "Disabled")
}

func testAttemptRecordGone(t *testing.T, d store.Driver) {
	ctx := t.Context()
	putCollection(t, d, "c", "Enabled")
	j := putJob(t, d, "c", "j", "Enabled", t0)
	k := putJob(t, d, "c", "k", "Enabled", t0)
	ej := claim(t, d, scheduledClaim(j, "j", time.Time{})).Execution
	ek := claim(t, d, scheduledClaim(k, "k", t0.Add(time.Minute))).Execution
	if err := d.JobDelete(ctx, store.JobDeleteParams{Key: j.Key}); err != nil {
		t.Fatal(err)
	}
	res, err := d.AttemptRecordMany(ctx, store.AttemptRecordManyParams{Now: t0, Records: []store.AttemptRecord{
		{ExecutionID: ej.ID, JobID: j.ID, History: entry(ej, store.ActionMain, store.HistoryCompleted, 0, "ok"), Finished: true},
		{ExecutionID: ek.ID, JobID: k.ID, History: entry(ek, store.ActionMain, store.HistoryCompleted, 0, "ok"), Finished: true},
	}})
	if err != nil {
		t.Fatal(err)
	}
	equal(t, "deleted job", res[0], store.AttemptRecordResult{Gone: true})
	equal(t, "other job in the same batch", res[1].Gone, false)
	equal(t, "other job's history", len(history(t, d, k, store.HistoryListParams{})), 1)
}

// testAttemptRecordSameJobTwice records two executions of one job in one batch: they apply in
// order (a faulted occurrence, then a good one that resets the run of faults).
func testAttemptRecordSameJobTwice(t *testing.T, d store.Driver) {
	putCollection(t, d, "c", "Enabled")
	j := putJob(t, d, "c", "j", "Enabled", t0)
	e1 := claim(t, d, scheduledClaim(j, "one", t0.Add(time.Minute))).Execution
	e2 := claim(t, d, scheduledClaim(getJob(t, d, j.ID), "two", t0.Add(2*time.Minute))).Execution
	before := getJob(t, d, j.ID).Version
	res, err := d.AttemptRecordMany(t.Context(), store.AttemptRecordManyParams{Now: t0, Records: []store.AttemptRecord{
		{ExecutionID: e1.ID, JobID: j.ID, History: entry(e1, store.ActionMain, store.HistoryFailed, 0, "bad"),
			Failure: true, Finished: true, Faulted: true, FaultedAfter: 5},
		{ExecutionID: e2.ID, JobID: j.ID, History: entry(e2, store.ActionMain, store.HistoryCompleted, 0, "good"),
			Finished: true, FaultedAfter: 5},
	}})
	if err != nil {
		t.Fatal(err)
	}
	equal(t, "results", res, []store.AttemptRecordResult{
		{State: "Enabled", Version: before + 1, Previous: before},
		{State: "Enabled", Version: before + 2, Previous: before + 1},
	})
	got := getJob(t, d, j.ID)
	equal(t, "status", got.Status, store.JobStatus{ExecutionCount: 2, FailureCount: 1, FaultedCount: 1, ConsecutiveFaults: 0,
		LastExecutionTime: t0, NextExecutionTime: t0.Add(2 * time.Minute)})
	equal(t, "history", len(history(t, d, j, store.HistoryListParams{})), 2)
	equal(t, "executions", unfinished(t, d), []*store.Execution{})
}

// testAttemptRecordCancelled: a cancelled execution is deleted, with no history entry, and does
// not count as an execution of its job; cancelling it again finds it gone.
func testAttemptRecordCancelled(t *testing.T, d store.Driver) {
	ctx := t.Context()
	putCollection(t, d, "c", "Enabled")
	j := putJob(t, d, "c", "j", "Enabled", t0)
	e := claim(t, d, scheduledClaim(j, "j", t0.Add(time.Minute))).Execution
	before, err := d.JobGetByID(ctx, store.JobGetByIDParams{ID: j.ID})
	if err != nil {
		t.Fatal(err)
	}
	cancel := store.AttemptRecord{ExecutionID: e.ID, JobID: j.ID, Finished: true, Cancelled: true, FaultedAfter: 1}
	equal(t, "cancelled", record(t, d, cancel), store.AttemptRecordResult{State: "Enabled", Version: before.Version + 1, Previous: before.Version})
	equal(t, "history", len(history(t, d, j, store.HistoryListParams{})), 0)
	xs, err := d.ExecutionListUnfinished(ctx, store.ExecutionListUnfinishedParams{})
	if err != nil {
		t.Fatal(err)
	}
	equal(t, "unfinished executions", len(xs), 0)
	after, err := d.JobGetByID(ctx, store.JobGetByIDParams{ID: j.ID})
	if err != nil {
		t.Fatal(err)
	}
	want := before.Status
	want.ExecutionCount--
	equal(t, "job", [3]any{after.Version, after.State, after.Status}, [3]any{before.Version + 1, before.State, want})
	equal(t, "cancelled again", record(t, d, cancel), store.AttemptRecordResult{Gone: true})
}
