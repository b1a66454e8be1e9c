package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/jobstate"
)

// testRuleBackfillDisabled pins store.JobPutParams.CancelBackfill (jobstate.BackfillOnChange) on
// both drivers: the write that disables a job, and the write that follows its collection's
// disabling, cancel its backfill's waiting executions in the write (deleted, no history, off the
// executionCount written and returned); the execution under way stays and finishes, releasing
// nothing. A write without it (a Disabled job's note) leaves the backfill to go on.
func testRuleBackfillDisabled(t *testing.T, d store.Driver) {
	ctx := t.Context()
	putCollection(t, d, "c", "Enabled")
	putCollection(t, d, "off", "Enabled")
	next := t0.Add(time.Hour)
	jobs := map[string]*store.Job{
		"disabled":   putJob(t, d, "c", "disabled", "Enabled", next),
		"collection": putJob(t, d, "off", "collection", "Enabled", next),
		"kept":       putJob(t, d, "c", "kept", "Disabled", time.Time{}),
	}
	first := map[string]*store.Execution{}
	for _, name := range []string{"disabled", "collection", "kept"} {
		res, err := d.ExecutionBackfill(ctx, backfillParams(jobs[name], name+"-", 3, t0))
		if err != nil {
			t.Fatal(err)
		}
		first[name] = res.Executions[0]
	}
	if _, _, err := d.CollectionPut(ctx, store.CollectionPutParams{Collection: newCollection("off", "Disabled"), Now: t0}); err != nil {
		t.Fatal(err)
	}
	written, cancelled := map[string]int{}, map[string][]string{}
	for name, state := range map[string]string{"disabled": jobstate.Disabled, "collection": jobstate.Enabled, "kept": jobstate.Disabled} {
		j := *getJob(t, d, jobs[name].ID)
		j.State, j.Properties.State = state, state
		put, _, err := d.JobPut(ctx, store.JobPutParams{Job: j, ExpectVersion: j.Version, Now: t0.Add(time.Second), CancelBackfill: name != "kept"})
		if err != nil {
			t.Fatal(err)
		}
		written[name] = put.Status.ExecutionCount
		for _, x := range put.Cancelled {
			cancelled[name] = append(cancelled[name], fmt.Sprintf("%s %s backfill=%t job=%t", x.Tag, x.Scheduled.Sub(t0).Round(time.Millisecond), x.Backfill, x.JobID == j.ID && x.ID > 0))
		}
	}
	equal(t, "counts written", written, map[string]int{"disabled": 1, "collection": 1, "kept": 3})
	equal(t, "cancelled, as the writes return them", cancelled, map[string][]string{
		"disabled":   {"disabled-2 -23h0m0s backfill=true job=true", "disabled-3 -22h0m0s backfill=true job=true"},
		"collection": {"collection-2 -23h0m0s backfill=true job=true", "collection-3 -22h0m0s backfill=true job=true"},
	})
	equal(t, "stored after the writes", backfillState(t, d), []string{
		"disabled-1 -24h0m0s due 0s #1 backfill=true", "collection-1 -24h0m0s due 0s #1 backfill=true",
		"kept-1 -24h0m0s due 0s #1 backfill=true", "kept-2 -23h0m0s due waiting #2 backfill=true", "kept-3 -22h0m0s due waiting #3 backfill=true",
	})
	for _, name := range []string{"disabled", "collection", "kept"} {
		e := first[name]
		r := record(t, d, store.AttemptRecord{ExecutionID: e.ID, JobID: e.JobID, Finished: true, Backfill: true,
			History: entry(e, store.ActionMain, store.HistoryCompleted, 0, "ok")})
		if r.Gone {
			t.Fatalf("record %s: gone", e.Tag)
		}
		nextTag := ""
		for _, x := range unfinished(t, d) {
			if x.ID == r.BackfillNext {
				nextTag = x.Tag
			}
		}
		equal(t, e.Tag+": the next made due", []any{r.BackfillNext != 0, nextTag}, map[string][]any{
			"disabled": {false, ""}, "collection": {false, ""}, "kept": {true, "kept-2"}}[name])
	}
	equal(t, "stored after the running ones finished", backfillState(t, d), []string{
		"kept-2 -23h0m0s due 0s #2 backfill=true", "kept-3 -22h0m0s due waiting #3 backfill=true",
	})
	for name, want := range map[string][]any{
		"disabled":   {1, jobstate.Disabled, 1},
		"collection": {1, jobstate.Enabled, 1},
		"kept":       {3, jobstate.Disabled, 1},
	} {
		j := getJob(t, d, jobs[name].ID)
		hs, err := d.HistoryList(ctx, store.HistoryListParams{Job: j.Key})
		if err != nil {
			t.Fatal(err)
		}
		equal(t, name+": count, state, history", []any{j.Status.ExecutionCount, j.State, len(hs)}, want)
	}
}
