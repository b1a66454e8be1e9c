package storetest

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/jobstate"
)

// overlapClaim is a scheduled claim of j's occurrence at t0 under the overlap policy policy:
// next execution a minute later when it runs or is buffered, two minutes later when skipped.
func overlapClaim(j *store.Job, policy, tag string) store.ExecutionClaim {
	c := scheduledClaim(j, tag, j.Status.NextExecutionTime.Add(time.Minute))
	c.Overlap, c.SkipNext = policy, j.Status.NextExecutionTime.Add(2*time.Minute)
	return c
}

// testRuleOverlap drives the driver through jobstate.OverlapTable: a job with an unfinished
// execution (or not) and a buffered one (or not) is claimed under the row's policy; the claim
// runs (an execution due when claimed), buffers (an execution due at store.BufferedDueAt) or
// skips (no execution, the skip's next execution, the count unchanged, one Skipped entry naming
// the unfinished execution's tag) exactly as jobstate.Overlap says. The drivers read the rule's
// inputs in the claim's transaction and call the rule.
func testRuleOverlap(t *testing.T, d store.Driver) {
	ctx := t.Context()
	putCollection(t, d, "c", "Enabled")
	at := t0.Truncate(time.Second)
	for i, c := range jobstate.OverlapTable {
		what := fmt.Sprintf("row %d (%q, unfinished %v, buffered %v)", i, c.Policy, c.Unfinished, c.Buffered)
		j := putJob(t, d, "c", fmt.Sprintf("o%d", i), "Enabled", at)
		running := fmt.Sprintf("run-%d", i)
		if c.Unfinished {
			r := claim(t, d, scheduledClaim(j, running, at))
			j = getJob(t, d, j.ID)
			equal(t, what+": setup: the first claim runs", r.Buffered || r.Skipped, false)
		}
		if c.Buffered {
			r := claim(t, d, overlapClaim(j, jobstate.OverlapBufferOne, fmt.Sprintf("wait-%d", i)))
			equal(t, what+": setup: buffered", r.Buffered, true)
			j = getJob(t, d, j.ID)
		}
		before := len(unfinished(t, d))
		cl := overlapClaim(j, c.Policy, fmt.Sprintf("tag-%d", i))
		r := claim(t, d, cl)
		after := getJob(t, d, j.ID)
		equal(t, what+": version", r.Version, j.Version+1)
		hs, err := d.HistoryList(ctx, store.HistoryListParams{Job: j.Key})
		if err != nil {
			t.Fatal(err)
		}
		switch c.Want {
		case jobstate.OverlapRun, jobstate.OverlapBuffer:
			if r.Execution == nil {
				t.Fatalf("%s: no execution", what)
			}
			due := t0
			if c.Want == jobstate.OverlapBuffer {
				due = store.BufferedDueAt
			}
			equal(t, what+": skipped, buffered, due", []any{r.Skipped, r.Buffered, r.Execution.DueAt.Truncate(Precision).UnixNano()},
				[]any{false, c.Want == jobstate.OverlapBuffer, due.Truncate(Precision).UnixNano()})
			equal(t, what+": next, count", []any{after.Status.NextExecutionTime.Equal(cl.NextExecutionTime), after.Status.ExecutionCount},
				[]any{true, j.Status.ExecutionCount + 1})
			equal(t, what+": executions stored", len(unfinished(t, d)), before+1)
			equal(t, what+": history", len(hs), 0)
		case jobstate.OverlapSkipIt:
			equal(t, what+": skipped, execution", []any{r.Skipped, r.Buffered, r.Execution == nil}, []any{true, false, true})
			equal(t, what+": next, count", []any{after.Status.NextExecutionTime.Equal(cl.SkipNext), after.Status.ExecutionCount},
				[]any{true, j.Status.ExecutionCount})
			equal(t, what+": executions stored", len(unfinished(t, d)), before)
			if len(hs) != 1 {
				t.Fatalf("%s: %d history entries, want 1", what, len(hs))
			}
			h := hs[0]
			equal(t, what+": history entry", []any{h.Status, h.Message, h.ExecutionTag, h.ActionName, h.ExpectedExecutionTime.Equal(cl.Execution.Scheduled)},
				[]any{"Skipped", jobstate.OverlapSkippedMessage(c.Policy, running), cl.Execution.Tag, store.ActionMain, true})
		}
	}
}

// testRuleOverlapRelease pins each driver's release of a buffered execution (its SQL is the twin
// of jobstate.BufferedRuns): the record that ends a job's last unfinished execution, with
// Release, makes the buffered one due at the record's now, in the same transaction; while
// another execution of the job is unfinished it stays buffered. No executor takes a buffered
// execution.
func testRuleOverlapRelease(t *testing.T, d store.Driver) {
	ctx := t.Context()
	putCollection(t, d, "c", "Enabled")
	at := t0.Truncate(time.Second)
	j := putJob(t, d, "c", "j", "Enabled", at)
	first := claim(t, d, scheduledClaim(j, "first", at)).Execution
	j = getJob(t, d, j.ID)
	second := claim(t, d, scheduledClaim(j, "second", at.Add(time.Minute))).Execution // Allow: both unfinished
	j = getJob(t, d, j.ID)
	buf := claim(t, d, overlapClaim(j, jobstate.OverlapBufferOne, "waiting"))
	equal(t, "buffered", buf.Buffered, true)

	taken, err := d.ExecutionTake(ctx, store.ExecutionTakeParams{Owner: "r1", Limit: 10, DueBefore: t0.Add(24 * time.Hour), Lease: time.Minute, Now: t0})
	if err != nil {
		t.Fatal(err)
	}
	tags := []string{}
	for _, x := range taken {
		tags = append(tags, x.Execution.Tag)
	}
	equal(t, "taken: not the buffered one", tags, []string{"first", "second"})

	end := func(x *store.Execution) store.AttemptRecordResult {
		return record(t, d, store.AttemptRecord{ExecutionID: x.ID, JobID: j.ID, Owner: "r1", Finished: true, Release: true,
			History: entry(x, store.ActionMain, store.HistoryCompleted, 0, "ok")})
	}
	r := end(first)
	equal(t, "released while another execution is unfinished", r.Released == nil, true)
	r = end(second)
	if r.Released == nil {
		t.Fatal("the last unfinished execution ended: nothing released")
	}
	equal(t, "released", []any{r.Released.ID, r.Released.Tag, r.Released.DueAt.Truncate(Precision).UnixNano()},
		[]any{buf.Execution.ID, "waiting", t0.Truncate(Precision).UnixNano()})
	xs := unfinished(t, d)
	equal(t, "stored after the release", []any{len(xs), xs[0].Tag, xs[0].DueAt.Truncate(Precision).UnixNano()}, []any{1, "waiting", t0.Truncate(Precision).UnixNano()})
}

// testClaimSkip pins store.ExecutionClaim.Skip (the misfire policy Skip's record): no execution,
// the job's next execution set and its count unchanged, one history entry; with nothing left and
// no execution stored, the job is Completed.
func testClaimSkip(t *testing.T, d store.Driver) {
	ctx := t.Context()
	putCollection(t, d, "c", "Enabled")
	at := t0.Truncate(time.Second)
	j := putJob(t, d, "c", "j", "Enabled", at)
	msg := jobstate.MisfireSkippedMessage(10, at, at.Add(9*time.Minute), time.Minute)
	skip := func(j *store.Job, next time.Time) store.ExecutionClaimResult {
		c := scheduledClaim(j, "skip", next)
		c.Skip = &store.HistoryEntry{ExecutionTag: "skip", ActionName: store.ActionMain, Status: store.HistorySkipped, Message: msg,
			ExpectedExecutionTime: at, StartTime: at.Add(10 * time.Minute), EndTime: at.Add(10 * time.Minute)}
		return claim(t, d, c)
	}
	r := skip(j, at.Add(10*time.Minute))
	got := getJob(t, d, j.ID)
	equal(t, "skip claim", []any{r.Skipped, r.Execution == nil, r.Version, got.Version, got.Status.ExecutionCount, got.State,
		got.Status.NextExecutionTime.Equal(at.Add(10 * time.Minute))}, []any{true, true, j.Version + 1, j.Version + 1, 0, "Enabled", true})
	equal(t, "executions", len(unfinished(t, d)), 0)
	hs, err := d.HistoryList(ctx, store.HistoryListParams{Job: j.Key})
	if err != nil {
		t.Fatal(err)
	}
	if len(hs) != 1 {
		t.Fatalf("%d history entries, want 1", len(hs))
	}
	equal(t, "entry", []any{hs[0].Status, hs[0].Message, hs[0].ExpectedExecutionTime.Equal(at), hs[0].EndTime.Equal(at.Add(10 * time.Minute))},
		[]any{"Skipped", msg, true, true})

	// Stale version: a conflict, nothing stored.
	res, err := d.ExecutionClaimMany(ctx, store.ExecutionClaimManyParams{Now: t0, Claims: []store.ExecutionClaim{{
		Execution: store.Execution{JobID: j.ID, Tag: "stale"}, ExpectVersion: j.Version, Skip: &store.HistoryEntry{Status: store.HistorySkipped}}}})
	if err != nil {
		t.Fatal(err)
	}
	wantErr(t, "stale skip", res[0].Err, store.ErrConflict)

	// Nothing left: Completed.
	skip(got, time.Time{})
	got = getJob(t, d, j.ID)
	equal(t, "nothing left", []any{got.State, got.Status.NextExecutionTime.IsZero()}, []any{"Completed", true})
}

// testOverlapRace pins the overlap rule across replicas: a BufferOne claim of a job's next
// occurrence (the leader) and the record that ends the job's unfinished execution with Release
// (another replica) made at the same time, round after round. Whichever commits first, the
// occurrence is never left waiting with nothing unfinished to release it: it runs (the claim saw
// the end) or it is buffered and released by the record (the record saw the buffered one).
func testOverlapRace(t *testing.T, d store.Driver) {
	ctx := t.Context()
	putCollection(t, d, "c", "Enabled")
	at := t0.Truncate(time.Second)
	ran, buffered := 0, 0
	for round := range 40 {
		j := putJob(t, d, "c", fmt.Sprintf("race%d", round), "Enabled", at)
		first := claim(t, d, scheduledClaim(j, "first", at)).Execution
		j = getJob(t, d, j.ID)
		var (
			wg     sync.WaitGroup
			start  = make(chan struct{})
			cl     []store.ExecutionClaimResult
			rec    []store.AttemptRecordResult
			cErr   error
			rErr   error
			second = overlapClaim(j, jobstate.OverlapBufferOne, "second")
		)
		wg.Go(func() {
			<-start
			cl, cErr = d.ExecutionClaimMany(ctx, store.ExecutionClaimManyParams{Now: t0, Claims: []store.ExecutionClaim{second}})
		})
		wg.Go(func() {
			<-start
			rec, rErr = d.AttemptRecordMany(ctx, store.AttemptRecordManyParams{Now: t0, Records: []store.AttemptRecord{{
				ExecutionID: first.ID, JobID: j.ID, Finished: true, Release: true,
				History: entry(first, store.ActionMain, store.HistoryCompleted, 0, "ok")}}})
		})
		close(start)
		wg.Wait()
		if cErr != nil || rErr != nil || cl[0].Err != nil || rec[0].Gone {
			t.Fatalf("round %d: claim %v %+v, record %v %+v", round, cErr, cl, rErr, rec)
		}
		if cl[0].Buffered {
			buffered++
			equal(t, fmt.Sprintf("round %d: the buffered one released by the record", round), rec[0].Released != nil, true)
		} else {
			ran++
			equal(t, fmt.Sprintf("round %d: ran, nothing to release", round), rec[0].Released == nil, true)
		}
		xs := unfinished(t, d)
		for _, x := range xs {
			if x.JobID == j.ID && x.DueAt.Equal(store.BufferedDueAt) {
				t.Fatalf("round %d: the occurrence waits with nothing unfinished to release it (claim buffered %v)", round, cl[0].Buffered)
			}
		}
	}
	t.Logf("%d rounds ran the occurrence, %d buffered and released it", ran, buffered)
}

// testRuleOverlapReleaseDisabled: a buffered execution whose job was disabled while it waited is
// not released but cancelled when the job's unfinished execution ends (deleted with no history,
// off the job's executionCount), as a change cancels an occurrence claimed ahead.
func testRuleOverlapReleaseDisabled(t *testing.T, d store.Driver) {
	ctx := t.Context()
	putCollection(t, d, "c", "Enabled")
	at := t0.Truncate(time.Second)
	j := putJob(t, d, "c", "j", "Enabled", at)
	first := claim(t, d, scheduledClaim(j, "first", at)).Execution
	j = getJob(t, d, j.ID)
	equal(t, "buffered", claim(t, d, overlapClaim(j, jobstate.OverlapBufferOne, "waiting")).Buffered, true)
	j = getJob(t, d, j.ID)
	equal(t, "count with the buffered one", j.Status.ExecutionCount, 2)
	off := *j
	off.State, off.Properties.State = "Disabled", "Disabled"
	if _, _, err := d.JobPut(ctx, store.JobPutParams{Job: off, Now: t0}); err != nil {
		t.Fatal(err)
	}
	r := record(t, d, store.AttemptRecord{ExecutionID: first.ID, JobID: j.ID, Finished: true, Release: true,
		History: entry(first, store.ActionMain, store.HistoryCompleted, 0, "ok")})
	equal(t, "released", r.Released == nil, true)
	got := getJob(t, d, j.ID)
	equal(t, "after", []any{len(unfinished(t, d)), got.Status.ExecutionCount, got.State}, []any{0, 1, "Disabled"})
	hs, err := d.HistoryList(ctx, store.HistoryListParams{Job: j.Key})
	if err != nil {
		t.Fatal(err)
	}
	equal(t, "history: the first only", len(hs), 1)
}

// testClaimMixedBatch: a batch of the scheduler's claims mixing plain ones (made a chunk per
// statement) with special ones (an overlap policy, a skip), as the claim loop sends them: each
// gets its own result, in claim order.
func testClaimMixedBatch(t *testing.T, d store.Driver) {
	ctx := t.Context()
	putCollection(t, d, "c", "Enabled")
	at := t0.Truncate(time.Second)
	var claims []store.ExecutionClaim
	want := map[string]string{} // job name → run, skip or buffer
	for i := range 6 {
		name := fmt.Sprintf("m%d", i)
		j := putJob(t, d, "c", name, "Enabled", at)
		switch i % 3 {
		case 0:
			claims = append(claims, scheduledClaim(j, "plain-"+name, at.Add(time.Minute)))
			want[name] = "run"
		case 1: // an unfinished execution: Skip skips
			claim(t, d, scheduledClaim(j, "running-"+name, at))
			j = getJob(t, d, j.ID)
			claims = append(claims, overlapClaim(j, jobstate.OverlapSkip, "skip-"+name))
			want[name] = "skip"
		case 2: // an unfinished execution: BufferOne buffers
			claim(t, d, scheduledClaim(j, "running-"+name, at))
			j = getJob(t, d, j.ID)
			claims = append(claims, overlapClaim(j, jobstate.OverlapBufferOne, "buffer-"+name))
			want[name] = "buffer"
		}
	}
	res, err := d.ExecutionClaimMany(ctx, store.ExecutionClaimManyParams{Now: t0, Claims: claims})
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range res {
		name := fmt.Sprintf("m%d", i)
		got := "run"
		switch {
		case r.Err != nil:
			t.Fatalf("%s: %v", name, r.Err)
		case r.Skipped:
			got = "skip"
		case r.Buffered:
			got = "buffer"
		}
		equal(t, name, got, want[name])
		if r.Execution != nil {
			equal(t, name+": tag", r.Execution.Tag, claims[i].Execution.Tag)
		}
	}
	equal(t, "executions stored", len(unfinished(t, d)), 2+4+2) // 2 plain, 4 running, 2 buffered
}
