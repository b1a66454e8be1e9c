package storetest

import (
	"testing"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/jobstate"
)

// bufferedJob stores a job with an unfinished execution ("first", claimed at t0) and a buffered
// one ("waiting", claimed BufferOne at t0+30s): the job as they left it, and the first.
func bufferedJob(t *testing.T, d store.Driver, name string) (*store.Job, *store.Execution) {
	t.Helper()
	at := t0.Truncate(time.Second)
	j := putJob(t, d, "c", name, "Enabled", at)
	first := claim(t, d, scheduledClaim(j, "first-"+name, at)).Execution
	j = getJob(t, d, j.ID)
	res, err := d.ExecutionClaimMany(t.Context(), store.ExecutionClaimManyParams{Now: t0.Add(30 * time.Second),
		Claims: []store.ExecutionClaim{overlapClaim(j, jobstate.OverlapBufferOne, "waiting-"+name)}})
	if err != nil || res[0].Err != nil || !res[0].Buffered {
		t.Fatalf("buffered claim: %v %+v", err, res)
	}
	return getJob(t, d, j.ID), first
}

// testRuleOverlapLastExecution: a buffered occurrence has not started when it is claimed: the
// job's lastExecutionTime stays the unfinished execution's (its count includes the buffered one);
// the record that releases it sets lastExecutionTime to the release's now (it starts then) and
// bumps the job's version, which its result says.
func testRuleOverlapLastExecution(t *testing.T, d store.Driver) {
	putCollection(t, d, "c", "Enabled")
	j, first := bufferedJob(t, d, "j")
	equal(t, "after the buffered claim", []any{j.Status.ExecutionCount, j.Status.LastExecutionTime.Truncate(Precision).UnixNano()},
		[]any{2, t0.Truncate(Precision).UnixNano()})
	end := t0.Add(90 * time.Second)
	res, err := d.AttemptRecordMany(t.Context(), store.AttemptRecordManyParams{Now: end, Records: []store.AttemptRecord{{
		ExecutionID: first.ID, JobID: j.ID, Finished: true, Release: true,
		History: entry(first, store.ActionMain, store.HistoryCompleted, 0, "ok")}}})
	if err != nil {
		t.Fatal(err)
	}
	if res[0].Released == nil {
		t.Fatal("nothing released")
	}
	got := getJob(t, d, j.ID)
	equal(t, "after the release", []any{got.Status.LastExecutionTime.Truncate(Precision).UnixNano(), got.Status.ExecutionCount,
		res[0].State, res[0].Version, got.Version, res[0].Previous < res[0].Version},
		[]any{end.Truncate(Precision).UnixNano(), 2, "Enabled", got.Version, got.Version, true})
}

// testRuleOverlapChange pins jobstate.WaitingOnChange in each driver's JobPut: a change of a job
// (JobPutParams.CancelWaiting; here its policy BufferOne becomes Allow) cancels the occurrence waiting
// for its unfinished execution in the write's transaction: deleted with no history, the count
// written one less. Nothing then waits when the unfinished execution ends, whatever the record
// asks. A write that is not a change (the daemon's own) keeps it waiting.
func testRuleOverlapChange(t *testing.T, d store.Driver) {
	ctx := t.Context()
	putCollection(t, d, "c", "Enabled")

	kept, _ := bufferedJob(t, d, "kept")
	if _, _, err := d.JobPut(ctx, store.JobPutParams{Job: *kept, ExpectVersion: kept.Version, Now: t0}); err != nil {
		t.Fatal(err)
	}
	waiting := func(jobID int64) int {
		n := 0
		for _, x := range unfinished(t, d) {
			if x.JobID == jobID && x.DueAt.Equal(store.BufferedDueAt) {
				n++
			}
		}
		return n
	}
	equal(t, "a write that is not a change keeps it", []any{waiting(kept.ID), getJob(t, d, kept.ID).Status.ExecutionCount}, []any{1, 2})

	j, first := bufferedJob(t, d, "j")
	allow := *j
	allow.Properties.Overlap = jobstate.OverlapAllow
	put, _, err := d.JobPut(ctx, store.JobPutParams{Job: allow, ExpectVersion: j.Version, Now: t0.Add(time.Minute), CancelWaiting: true})
	if err != nil {
		t.Fatal(err)
	}
	got := getJob(t, d, j.ID)
	equal(t, "after the change", []any{waiting(j.ID), put.Status.ExecutionCount, got.Status.ExecutionCount, got.Version},
		[]any{0, 1, 1, j.Version + 1})
	// The unfinished execution ends (its policy as loaded now Allow: no release asked).
	r := record(t, d, store.AttemptRecord{ExecutionID: first.ID, JobID: j.ID, Finished: true,
		History: entry(first, store.ActionMain, store.HistoryCompleted, 0, "ok")})
	equal(t, "then", []any{r.Released == nil, waiting(j.ID), getJob(t, d, j.ID).Status.ExecutionCount}, []any{true, 0, 1})
	hs, err := d.HistoryList(ctx, store.HistoryListParams{Job: j.Key})
	if err != nil {
		t.Fatal(err)
	}
	equal(t, "history: the first only", len(hs), 1)
}
