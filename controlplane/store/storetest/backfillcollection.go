package storetest

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/jobstate"
)

// testRuleBackfillCollectionDisabled pins store.CollectionPutParams.CancelBackfillOf
// (jobstate.BackfillOnCollectionChange) on both drivers: the write that disables a collection
// cancels, in its own transaction, the waiting executions of its jobs in those states (an Enabled
// job's backfill, a Disabled job's backfill, a BufferOne job's buffered occurrence): deleted with
// no history, off each job's executionCount, its version bumped, listed by the collection
// returned. The executions under way stay and finish, making nothing due; another collection's
// backfill goes on. A write that fails (a stale version) cancels nothing.
func testRuleBackfillCollectionDisabled(t *testing.T, d store.Driver) {
	ctx := t.Context()
	c := putCollection(t, d, "c", "Enabled")
	putCollection(t, d, "other", "Enabled")
	next := t0.Add(time.Hour)
	buffered, bufferedFirst := bufferedJob(t, d, "buffered")
	jobs := map[string]*store.Job{
		"enabled":  putJob(t, d, "c", "enabled", "Enabled", next),
		"disabled": putJob(t, d, "c", "disabled", "Disabled", time.Time{}),
		"other":    putJob(t, d, "other", "other", "Enabled", next),
	}
	first := map[string]*store.Execution{"buffered": bufferedFirst}
	for _, name := range []string{"enabled", "disabled", "other"} {
		res, err := d.ExecutionBackfill(ctx, backfillParams(jobs[name], name+"-", 3, t0))
		if err != nil {
			t.Fatal(err)
		}
		first[name] = res.Executions[0]
	}
	for name := range jobs {
		jobs[name] = getJob(t, d, jobs[name].ID)
	}
	jobs["buffered"] = buffered
	states := jobstate.BackfillOnCollectionChange(jobstate.CollectionEnabled, "Disabled")
	equal(t, "the states whose backfill the disabling cancels", states, []string{jobstate.Enabled, jobstate.Disabled})
	before := backfillState(t, d)

	off := newCollection("c", "Disabled")
	_, _, err := d.CollectionPut(ctx, store.CollectionPutParams{Collection: off, ExpectVersion: c.Version + 1, Now: t0.Add(time.Second), CancelBackfillOf: states})
	wantErr(t, "a disabling with a stale version", err, store.ErrConflict)
	equal(t, "a failed write cancels nothing", backfillState(t, d), before)

	put, created, err := d.CollectionPut(ctx, store.CollectionPutParams{Collection: off, ExpectVersion: c.Version, Now: t0.Add(time.Second), CancelBackfillOf: states})
	if err != nil || created {
		t.Fatalf("disabling: created=%v err=%v", created, err)
	}
	var cancelled []string
	for _, x := range put.Cancelled {
		cancelled = append(cancelled, fmt.Sprintf("%s %s backfill=%t id=%t", x.Tag, x.Scheduled.Sub(t0).Round(time.Second), x.Backfill, x.ID > 0))
	}
	// By job (in the order they were created), oldest first.
	equal(t, "cancelled, as the write returns them", cancelled, []string{
		"waiting-buffered 0s backfill=false id=true",
		"enabled-2 -23h0m0s backfill=true id=true", "enabled-3 -22h0m0s backfill=true id=true",
		"disabled-2 -23h0m0s backfill=true id=true", "disabled-3 -22h0m0s backfill=true id=true",
	})
	equal(t, "the collection written", []any{put.Properties.State, put.Version}, []any{"Disabled", c.Version + 1})
	equal(t, "stored after the write", backfillState(t, d), []string{
		"first-buffered -123ms due 0s #1 backfill=false",
		"enabled-1 -24h0m0s due 0s #1 backfill=true", "disabled-1 -24h0m0s due 0s #1 backfill=true",
		"other-1 -24h0m0s due 0s #1 backfill=true", "other-2 -23h0m0s due waiting #2 backfill=true", "other-3 -22h0m0s due waiting #3 backfill=true",
	})
	for name, want := range map[string][]any{
		"buffered": {1, jobs["buffered"].Version + 1, jobstate.Enabled},
		"enabled":  {1, jobs["enabled"].Version + 1, jobstate.Enabled},
		"disabled": {1, jobs["disabled"].Version + 1, jobstate.Disabled},
		"other":    {3, jobs["other"].Version, jobstate.Enabled},
	} {
		j := getJob(t, d, jobs[name].ID)
		equal(t, name+": count, version, state after the write", []any{j.Status.ExecutionCount, j.Version, j.State}, want)
	}

	for _, name := range []string{"buffered", "enabled", "disabled", "other"} {
		e := first[name]
		r := record(t, d, store.AttemptRecord{ExecutionID: e.ID, JobID: e.JobID, Finished: true, Backfill: e.Backfill, Release: !e.Backfill,
			History: entry(e, store.ActionMain, store.HistoryCompleted, 0, "ok")})
		equal(t, e.Tag+": the record makes nothing due but in the other collection", []any{r.Gone, r.BackfillNext != 0, r.Released != nil},
			[]any{false, name == "other", false})
	}
	equal(t, "stored after the running ones finished", backfillState(t, d), []string{
		"other-2 -23h0m0s due 0s #2 backfill=true", "other-3 -22h0m0s due waiting #3 backfill=true",
	})
	for _, name := range []string{"buffered", "enabled", "disabled"} {
		j := getJob(t, d, jobs[name].ID)
		hs, err := d.HistoryList(ctx, store.HistoryListParams{Job: j.Key})
		if err != nil {
			t.Fatal(err)
		}
		equal(t, name+": count, history", []any{j.Status.ExecutionCount, len(hs)}, []any{1, 1})
	}

	// Enabled again: a write without CancelBackfillOf (it cancels nothing) leaves the other
	// collection's backfill alone.
	on := newCollection("c", "Enabled")
	put, _, err = d.CollectionPut(ctx, store.CollectionPutParams{Collection: on, ExpectVersion: put.Version, Now: t0.Add(2 * time.Second)})
	if err != nil {
		t.Fatal(err)
	}
	equal(t, "enabling cancels nothing", []any{put.Cancelled == nil, len(backfillState(t, d))}, []any{true, 2})
}

// testExecutionBackfillRefused: a backfill is stored only for a job that may run on request as
// its state and its collection's are in the backfill's transaction (jobstate.ManualRunAllowed):
// in a collection disabled or suspended since the caller read it, or of a job that became final,
// it is refused (a *RunRefusedError, an ErrConflict) and nothing is stored or counted; a Disabled
// job of an Enabled collection is backfilled.
func testExecutionBackfillRefused(t *testing.T, d store.Driver) {
	ctx := t.Context()
	putCollection(t, d, "on", "Enabled")
	putCollection(t, d, "off", "Disabled")
	putCollection(t, d, "suspended", "Suspended")
	jobs := []*store.Job{
		putJob(t, d, "off", "enabled-in-off", jobstate.Enabled, time.Time{}),
		putJob(t, d, "suspended", "disabled-in-suspended", jobstate.Disabled, time.Time{}),
		putJob(t, d, "on", "completed", jobstate.Completed, time.Time{}),
		putJob(t, d, "on", "disabled", jobstate.Disabled, time.Time{}),
	}
	got := map[string]string{}
	for _, j := range jobs {
		_, err := d.ExecutionBackfill(ctx, backfillParams(j, j.Key.Name+"-", 2, t0))
		var refused *store.RunRefusedError
		switch {
		case err == nil:
			got[j.Key.Name] = "stored"
		case errors.As(err, &refused) && errors.Is(err, store.ErrConflict):
			got[j.Key.Name] = "refused: " + refused.State + " in " + refused.CollectionState
		default:
			t.Fatalf("backfill %s: %v", j.Key.Name, err)
		}
	}
	equal(t, "backfills", got, map[string]string{
		"enabled-in-off":        "refused: Enabled in Disabled",
		"disabled-in-suspended": "refused: Disabled in Suspended",
		"completed":             "refused: Completed in Enabled",
		"disabled":              "stored",
	})
	equal(t, "stored", backfillState(t, d), []string{
		"disabled-1 -24h0m0s due 0s #1 backfill=true", "disabled-2 -23h0m0s due waiting #2 backfill=true",
	})
	for _, j := range jobs[:3] {
		equal(t, j.Key.Name+": executionCount", getJob(t, d, j.ID).Status.ExecutionCount, 0)
	}
}

// testBackfillCollectionDisabledRace: backfills of a collection's jobs stored at the same time as
// the collection's disabling (CancelBackfillOf) never leave a backfill waiting in the disabled
// collection, whichever commits first: a backfill stored before the disabling is cancelled by it
// (its first execution is under way: it stays), one after it is refused (a *RunRefusedError).
func testBackfillCollectionDisabledRace(t *testing.T, d store.Driver) {
	ctx := t.Context()
	for round := range 5 {
		name := fmt.Sprintf("c%d", round)
		c := putCollection(t, d, name, "Enabled")
		var jobs []*store.Job
		for i := range 8 {
			jobs = append(jobs, putJob(t, d, name, fmt.Sprintf("j%d", i), "Enabled", t0.Add(time.Hour)))
		}
		errs := make(chan error, len(jobs)+1)
		for _, j := range jobs {
			go func() {
				_, err := d.ExecutionBackfill(ctx, backfillParams(j, j.Key.Name+"-", 3, t0))
				var refused *store.RunRefusedError
				if errors.As(err, &refused) {
					err = nil
				}
				errs <- err
			}()
		}
		go func() {
			_, _, err := d.CollectionPut(ctx, store.CollectionPutParams{Collection: newCollection(name, "Disabled"), ExpectVersion: c.Version,
				Now: t0, CancelBackfillOf: jobstate.BackfillOnCollectionChange(jobstate.CollectionEnabled, "Disabled")})
			errs <- err
		}()
		for range len(jobs) + 1 {
			if err := <-errs; err != nil {
				t.Fatalf("round %d: %v", round, err)
			}
		}
		for _, x := range unfinished(t, d) {
			if x.DueAt.Equal(store.BackfillWaiting) {
				t.Fatalf("round %d: %s waits in the disabled collection", round, x.Tag)
			}
		}
	}
}
