package storetest

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
)

// backfillParams is a backfill of j's n occurrences, an hour apart from t0-24h, tags "<prefix>1"...
func backfillParams(j *store.Job, prefix string, n int, now time.Time) store.ExecutionBackfillParams {
	p := store.ExecutionBackfillParams{JobID: j.ID, Now: now}
	for i := range n {
		p.Executions = append(p.Executions, store.Execution{Tag: fmt.Sprintf("%s%d", prefix, i+1), Scheduled: t0.Add(time.Duration(i-24) * time.Hour)})
	}
	return p
}

// backfillState is what the store holds of a job's executions: tag, expected time, due time
// (relative to t0, "waiting" for store.BackfillWaiting), repeat count.
func backfillState(t *testing.T, d store.Driver) []string {
	t.Helper()
	var out []string
	for _, e := range unfinished(t, d) {
		due := e.DueAt.Sub(t0).Round(time.Millisecond).String() // PostgreSQL keeps microseconds
		if e.DueAt.Equal(store.BackfillWaiting) {
			due = "waiting"
		}
		out = append(out, fmt.Sprintf("%s %s due %s #%d backfill=%t", e.Tag, e.Scheduled.Sub(t0).Round(time.Millisecond), due, e.RepeatCount, e.Backfill))
	}
	return out
}

// testExecutionBackfill: a backfill stores one execution per occurrence in order, the first due
// now and the others waiting, counted in the job's executionCount (their RepeatCount in order);
// a second backfill of the job while one is stored is refused naming its tag (other jobs are
// not held up); each record that finishes a backfill execution makes the next one due at the
// record's time, none other; once the last one finished the job is backfilled again.
func testExecutionBackfill(t *testing.T, d store.Driver) {
	ctx := t.Context()
	putCollection(t, d, "c", "Enabled")
	j := putJob(t, d, "c", "j", "Enabled", t0.Add(time.Hour))
	other := putJob(t, d, "c", "other", "Enabled", t0.Add(time.Hour))
	claim(t, d, manualClaim(j, "m1")) // one execution before: the backfill's count from 2

	res, err := d.ExecutionBackfill(ctx, backfillParams(j, "b", 3, t0))
	if err != nil {
		t.Fatal(err)
	}
	got := []string{}
	for _, e := range res.Executions {
		got = append(got, fmt.Sprintf("%s %s #%d %t", e.Tag, e.Scheduled.Sub(t0), e.RepeatCount, e.ID > 0 && e.Backfill))
	}
	equal(t, "executions returned", got, []string{"b1 -24h0m0s #2 true", "b2 -23h0m0s #3 true", "b3 -22h0m0s #4 true"})
	after := getJob(t, d, j.ID)
	equal(t, "job after the backfill", []any{after.Status.ExecutionCount, after.Version, res.Count, res.Version, res.Previous},
		[]any{4, res.Version, 4, after.Version, after.Version - 1})
	equal(t, "stored", backfillState(t, d), []string{
		"m1 0s due 0s #1 backfill=false",
		"b1 -24h0m0s due 0s #2 backfill=true", "b2 -23h0m0s due waiting #3 backfill=true", "b3 -22h0m0s due waiting #4 backfill=true",
	})

	_, err = d.ExecutionBackfill(ctx, backfillParams(j, "again", 2, t0))
	var inFlight *store.BackfillInFlightError
	if !errors.As(err, &inFlight) || inFlight.Tag != "b1" || !errors.Is(err, store.ErrConflict) {
		t.Fatalf("second backfill: %v, want a backfill in flight naming b1", err)
	}
	if _, err := d.ExecutionBackfill(ctx, backfillParams(other, "o", 1, t0)); err != nil {
		t.Fatalf("backfill of another job: %v", err)
	}
	if _, err := d.ExecutionBackfill(ctx, store.ExecutionBackfillParams{JobID: 1 << 40, Now: t0,
		Executions: []store.Execution{{Tag: "x", Scheduled: t0}}}); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("backfill of a job that does not exist: %v", err)
	}
	equal(t, "execution count after the refused backfill", getJob(t, d, j.ID).Status.ExecutionCount, 4)

	byTag := map[string]*store.Execution{}
	for _, e := range unfinished(t, d) {
		byTag[e.Tag] = e
	}
	finish := func(tag string, at time.Time) {
		t.Helper()
		e := byTag[tag]
		r, err := d.AttemptRecordMany(ctx, store.AttemptRecordManyParams{Now: at, Records: []store.AttemptRecord{{
			ExecutionID: e.ID, JobID: e.JobID, History: entry(e, store.ActionMain, store.HistoryCompleted, 0, "ok"), Finished: true,
			Backfill: e.Backfill,
		}}})
		if err != nil || r[0].Gone {
			t.Fatalf("record %s: %+v %v", tag, r, err)
		}
	}
	// A retry of b1 releases nothing; the manual run finishing releases nothing.
	record(t, d, store.AttemptRecord{ExecutionID: byTag["b1"].ID, JobID: j.ID, History: entry(byTag["b1"], store.ActionMain, store.HistoryFailed, 0, "503"),
		Next: t0.Add(time.Minute), Phase: store.ActionMain, Attempt: 1, Failure: false})
	finish("m1", t0.Add(time.Second))
	finish("o1", t0.Add(time.Second))
	equal(t, "after a retry and other executions", backfillState(t, d), []string{
		"b1 -24h0m0s due 1m0s #2 backfill=true", "b2 -23h0m0s due waiting #3 backfill=true", "b3 -22h0m0s due waiting #4 backfill=true",
	})
	finish("b1", t0.Add(2*time.Minute))
	equal(t, "after b1", backfillState(t, d), []string{
		"b2 -23h0m0s due 2m0s #3 backfill=true", "b3 -22h0m0s due waiting #4 backfill=true",
	})
	finish("b2", t0.Add(3*time.Minute))
	equal(t, "after b2", backfillState(t, d), []string{"b3 -22h0m0s due 3m0s #4 backfill=true"})
	if _, err := d.ExecutionBackfill(ctx, backfillParams(j, "again", 1, t0)); !errors.As(err, &inFlight) || inFlight.Tag != "b3" {
		t.Fatalf("backfill while the last execution runs: %v, want in flight naming b3", err)
	}
	finish("b3", t0.Add(4*time.Minute))
	equal(t, "after b3", backfillState(t, d), []string(nil))
	if _, err := d.ExecutionBackfill(ctx, backfillParams(j, "again", 1, t0.Add(5*time.Minute))); err != nil {
		t.Fatalf("backfill once the first one finished: %v", err)
	}
	equal(t, "job state", getJob(t, d, j.ID).State, store.JobStateEnabled)
}

// testExecutionBackfillRace: two callers (two replicas) backfill one job at the same time: one
// backfill is stored, the other is refused naming its first tag.
func testExecutionBackfillRace(t *testing.T, d store.Driver) {
	putCollection(t, d, "c", "Enabled")
	for round := range 5 {
		j := putJob(t, d, "c", fmt.Sprintf("j%d", round), "Enabled", t0.Add(time.Hour))
		errs := make(chan error, 2)
		for _, side := range []string{"left", "right"} {
			go func() {
				_, err := d.ExecutionBackfill(t.Context(), backfillParams(j, side, 3, t0))
				errs <- err
			}()
		}
		var ok, refused int
		for range 2 {
			var inFlight *store.BackfillInFlightError
			switch err := <-errs; {
			case err == nil:
				ok++
			case errors.As(err, &inFlight) && (inFlight.Tag == "left1" || inFlight.Tag == "right1"):
				refused++
			default:
				t.Fatalf("round %d: %v", round, err)
			}
		}
		equal(t, "stored and refused", []int{ok, refused}, []int{1, 1})
		equal(t, "execution count", getJob(t, d, j.ID).Status.ExecutionCount, 3)
	}
	equal(t, "executions", len(unfinished(t, d)), 15)
}

// testJobListPaused: the Disabled jobs whose definition holds a resumeAt are listed, by ID and
// page by page; Enabled ones, Disabled ones without it and final ones are not.
func testJobListPaused(t *testing.T, d store.Driver) {
	ctx := t.Context()
	putCollection(t, d, "c", "Enabled")
	put := func(name, state, resumeAt, note string) {
		t.Helper()
		j := newJob("c", name, state, time.Time{})
		j.Properties.ResumeAt, j.Properties.Note = resumeAt, note
		if _, _, err := d.JobPut(ctx, store.JobPutParams{Job: j, Now: t0}); err != nil {
			t.Fatal(err)
		}
	}
	put("p1", "Disabled", "2026-12-01T00:00:00Z", "migration")
	put("enabled", "Enabled", "", "")
	put("plain", "Disabled", "", "no end")
	put("p2", "Disabled", "2026-12-02T00:00:00Z", "")
	put("done", "Completed", "", "")
	put("p3", "Disabled", "2026-12-03T00:00:00Z", "")
	var got []string
	var after int64
	for {
		js, err := d.JobListPaused(ctx, store.JobListPausedParams{AfterID: after, Limit: 2})
		if err != nil {
			t.Fatal(err)
		}
		for _, j := range js {
			got = append(got, j.Key.Name+" "+j.Properties.ResumeAt)
			after = j.ID
		}
		if len(js) < 2 {
			break
		}
	}
	equal(t, "paused jobs", got, []string{"p1 2026-12-01T00:00:00Z", "p2 2026-12-02T00:00:00Z", "p3 2026-12-03T00:00:00Z"})
}
