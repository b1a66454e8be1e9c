package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
)

// claim claims one occurrence of j and fails the test on any error.
func claim(t *testing.T, d store.Driver, c store.ExecutionClaim) store.ExecutionClaimResult {
	t.Helper()
	res, err := d.ExecutionClaimMany(t.Context(), store.ExecutionClaimManyParams{Claims: []store.ExecutionClaim{c}, Now: t0})
	if err != nil {
		t.Fatalf("claim: %v", err)
	}
	if len(res) != 1 || res[0].Err != nil {
		t.Fatalf("claim: %+v", res)
	}
	return res[0]
}

func scheduledClaim(j *store.Job, tag string, next time.Time) store.ExecutionClaim {
	return store.ExecutionClaim{
		Execution: store.Execution{
			JobID: j.ID, Tag: tag, Scheduled: j.Status.NextExecutionTime, Phase: store.ActionMain,
			DueAt: t0, ClaimedAt: t0,
		},
		ExpectVersion:     j.Version,
		NextExecutionTime: next,
	}
}

func testExecutionClaimScheduled(t *testing.T, d store.Driver) {
	ctx := t.Context()
	putCollection(t, d, "c", "Enabled")
	putCollection(t, d, "off", "Disabled")
	j := putJob(t, d, "c", "j", "Enabled", t0)
	stale := putJob(t, d, "c", "stale", "Enabled", t0)
	disabled := putJob(t, d, "c", "disabled", "Disabled", t0)
	inOff := putJob(t, d, "off", "j", "Enabled", t0)

	next := t0.Add(time.Minute)
	staleClaim := scheduledClaim(stale, "t2", next)
	staleClaim.ExpectVersion = stale.Version + 1
	gone := scheduledClaim(j, "t5", next)
	gone.Execution.JobID = j.ID + 1000
	res, err := d.ExecutionClaimMany(ctx, store.ExecutionClaimManyParams{Now: t0.Add(time.Second), Claims: []store.ExecutionClaim{
		scheduledClaim(j, "t1", next), staleClaim, scheduledClaim(disabled, "t3", next), scheduledClaim(inOff, "t4", next), gone,
	}})
	if err != nil {
		t.Fatal(err)
	}
	equal(t, "results", len(res), 5)
	if res[0].Err != nil {
		t.Fatalf("claim 0: %v", res[0].Err)
	}
	wantErr(t, "stale version", res[1].Err, store.ErrConflict)
	wantErr(t, "disabled job", res[2].Err, store.ErrConflict)
	wantErr(t, "job of a disabled collection", res[3].Err, store.ErrConflict)
	wantErr(t, "absent job", res[4].Err, store.ErrNotFound)
	for i := 1; i < 5; i++ {
		if res[i].Execution != nil {
			t.Fatalf("claim %d: execution %+v on error", i, res[i].Execution)
		}
	}
	e := res[0].Execution
	wantE := store.Execution{ID: e.ID, JobID: j.ID, Tag: "t1", Scheduled: t0, RepeatCount: 1, Phase: store.ActionMain, DueAt: t0, ClaimedAt: t0}
	equal(t, "execution", *e, wantE)
	equal(t, "version", res[0].Version, j.Version+1)

	got := getJob(t, d, j.ID)
	equal(t, "next", got.Status.NextExecutionTime, next)
	equal(t, "execution count", got.Status.ExecutionCount, 1)
	equal(t, "last execution", got.Status.LastExecutionTime, t0.Add(time.Second))
	equal(t, "version", got.Version, j.Version+1)
	equal(t, "stale job unchanged", *getJob(t, d, stale.ID), *stale)

	// The old version no longer claims; the new one does, and counts on.
	res2, err := d.ExecutionClaimMany(ctx, store.ExecutionClaimManyParams{Now: t0, Claims: []store.ExecutionClaim{scheduledClaim(j, "t6", next)}})
	if err != nil {
		t.Fatal(err)
	}
	wantErr(t, "claim with the pre-claim version", res2[0].Err, store.ErrConflict)
	r3 := claim(t, d, scheduledClaim(got, "t7", time.Time{}))
	equal(t, "repeat count", r3.Execution.RepeatCount, 2)
	got = getJob(t, d, j.ID)
	equal(t, "next after the last claim", got.Status.NextExecutionTime, time.Time{})
	equal(t, "execution count", got.Status.ExecutionCount, 2)
}

// An occurrence claimed before it is due: the job's last execution is when the attempt starts
// (its DueAt), not when it was claimed; in a batch of distinct jobs and alone.
func testExecutionClaimAhead(t *testing.T, d store.Driver) {
	ctx := t.Context()
	putCollection(t, d, "c", "Enabled")
	a := putJob(t, d, "c", "a", "Enabled", t0)
	b := putJob(t, d, "c", "b", "Enabled", t0)
	due := t0.Add(400 * time.Millisecond)
	ahead := func(j *store.Job, tag string) store.ExecutionClaim {
		c := scheduledClaim(j, tag, t0.Add(time.Minute))
		c.Execution.Scheduled, c.Execution.DueAt = due, due
		return c
	}
	claim := func(claims ...store.ExecutionClaim) {
		t.Helper()
		res, err := d.ExecutionClaimMany(ctx, store.ExecutionClaimManyParams{Now: t0, Claims: claims})
		if err != nil {
			t.Fatal(err)
		}
		for i, r := range res {
			if r.Err != nil {
				t.Fatalf("claim %d: %v", i, r.Err)
			}
		}
	}
	claim(ahead(a, "ta")) // a batch of distinct scheduled claims
	equal(t, "last execution of a, claimed ahead in a batch", getJob(t, d, a.ID).Status.LastExecutionTime, due)
	manual := store.ExecutionClaim{Execution: store.Execution{JobID: a.ID, Tag: "tm", Scheduled: t0, Manual: true, Phase: store.ActionMain, DueAt: t0, ClaimedAt: t0}}
	claim(ahead(b, "tb"), manual) // a mixed batch goes row by row
	equal(t, "last execution of b, claimed ahead alone", getJob(t, d, b.ID).Status.LastExecutionTime, due)
	equal(t, "last execution of a, run now", getJob(t, d, a.ID).Status.LastExecutionTime, t0)
}

// testExecutionClaimManual: a manual claim runs a Disabled job (of an Enabled collection: a
// collection that is not refuses it, ManualRun/Refused) and leaves its next execution alone.
func testExecutionClaimManual(t *testing.T, d store.Driver) {
	putCollection(t, d, "c", "Enabled")
	j := putJob(t, d, "c", "j", "Disabled", t0.Add(time.Hour))
	r := claim(t, d, store.ExecutionClaim{Execution: store.Execution{JobID: j.ID, Tag: "m", Scheduled: t0, Manual: true, DueAt: t0, ClaimedAt: t0}})
	equal(t, "execution", *r.Execution, store.Execution{ID: r.Execution.ID, JobID: j.ID, Tag: "m", Scheduled: t0, RepeatCount: 1,
		Manual: true, Phase: store.ActionMain, DueAt: t0, ClaimedAt: t0})
	got := getJob(t, d, j.ID)
	equal(t, "next unchanged", got.Status.NextExecutionTime, t0.Add(time.Hour))
	equal(t, "execution count", got.Status.ExecutionCount, 1)
	equal(t, "state", got.State, "Disabled")

	res, err := d.ExecutionClaimMany(t.Context(), store.ExecutionClaimManyParams{Now: t0, Claims: []store.ExecutionClaim{
		{Execution: store.Execution{JobID: j.ID + 99, Tag: "x", Manual: true}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	wantErr(t, "manual claim of an absent job", res[0].Err, store.ErrNotFound)
}

func testExecutionListUnfinished(t *testing.T, d store.Driver) {
	putCollection(t, d, "c", "Enabled")
	var want []*store.Execution
	for i := range 5 {
		j := putJob(t, d, "c", fmt.Sprintf("j%d", i), "Enabled", t0.Add(time.Duration(i)*time.Minute))
		c := scheduledClaim(j, fmt.Sprintf("tag-%d", i), time.Time{})
		c.Execution.Missed = i
		c.Execution.DueAt = t0.Add(time.Duration(i) * time.Second)
		want = append(want, claim(t, d, c).Execution)
	}
	equal(t, "all", unfinished(t, d), want)
	page, err := d.ExecutionListUnfinished(t.Context(), store.ExecutionListUnfinishedParams{AfterID: want[1].ID, Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	equal(t, "page", page, want[2:4])
	one, err := d.ExecutionListUnfinished(t.Context(), store.ExecutionListUnfinishedParams{JobID: want[3].JobID})
	if err != nil {
		t.Fatal(err)
	}
	equal(t, "one job's", one, want[3:4])
}

// testLargeBatches claims and records batches larger than a driver's statement chunks.
func testLargeBatches(t *testing.T, d store.Driver) {
	ctx := t.Context()
	putCollection(t, d, "c", "Enabled")
	const n = 150
	jobs := make([]*store.Job, n)
	claims := make([]store.ExecutionClaim, n)
	for i := range n {
		jobs[i] = putJob(t, d, "c", fmt.Sprintf("j%03d", i), "Enabled", t0)
		claims[i] = scheduledClaim(jobs[i], fmt.Sprintf("tag-%03d", i), t0.Add(time.Minute))
	}
	res, err := d.ExecutionClaimMany(ctx, store.ExecutionClaimManyParams{Claims: claims, Now: t0})
	if err != nil {
		t.Fatal(err)
	}
	equal(t, "results", len(res), n)
	records := make([]store.AttemptRecord, n)
	var prev int64
	for i, r := range res {
		if r.Err != nil {
			t.Fatalf("claim %d: %v", i, r.Err)
		}
		x := r.Execution
		if x.ID <= prev || x.Tag != fmt.Sprintf("tag-%03d", i) || x.JobID != jobs[i].ID || x.RepeatCount != 1 {
			t.Fatalf("claim %d: %+v (previous ID %d)", i, x, prev)
		}
		prev = x.ID
		records[i] = store.AttemptRecord{ExecutionID: x.ID, JobID: x.JobID, Finished: true,
			History: entry(x, store.ActionMain, store.HistoryCompleted, 0, fmt.Sprintf("m%03d", i))}
	}
	listed := unfinished(t, d)
	equal(t, "unfinished", len(listed), n)
	for i, x := range listed {
		equal(t, fmt.Sprintf("listed %d", i), *x, *res[i].Execution)
	}
	out, err := d.AttemptRecordMany(ctx, store.AttemptRecordManyParams{Records: records, Now: t0})
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range out {
		// A good occurrence of a job with more to run and no faults changes nothing in it.
		equal(t, fmt.Sprintf("record %d", i), r, store.AttemptRecordResult{})
	}
	for _, i := range []int{0, n - 1} {
		equal(t, fmt.Sprintf("job %d version after its record", i), getJob(t, d, jobs[i].ID).Version, res[i].Version)
	}
	equal(t, "unfinished after the records", unfinished(t, d), []*store.Execution{})
	for _, i := range []int{0, 63, 64, 127, 128, n - 1} {
		hs := history(t, d, jobs[i], store.HistoryListParams{})
		if len(hs) != 1 || hs[0].Message != fmt.Sprintf("m%03d", i) || hs[0].ExecutionID != res[i].Execution.ID {
			t.Fatalf("history of job %d: %+v", i, hs)
		}
	}
}

// testExecutionClaimLoopBatch: a batch as the leader's claim loop makes it (scheduled claims of
// distinct jobs, each due when scheduled, claimed ahead, fenced by the leader's term; a driver
// may take a shorter path for these), with claims that win and claims that lose, in any order;
// then the same batch under a term that is no longer the leader's.
func testExecutionClaimLoopBatch(t *testing.T, d store.Driver) {
	ctx := t.Context()
	putCollection(t, d, "c", "Enabled")
	putCollection(t, d, "off", "Disabled")
	a := putJob(t, d, "c", "a", "Enabled", t0)
	stale := putJob(t, d, "c", "stale", "Enabled", t0)
	b := putJob(t, d, "c", "b", "Enabled", t0)
	disabled := putJob(t, d, "c", "disabled", "Disabled", t0)
	inOff := putJob(t, d, "off", "j", "Enabled", t0)
	due, claimedAt, next := t0.Add(time.Second).Truncate(time.Microsecond), t0.Add(500*time.Millisecond), t0.Add(time.Hour)
	loopClaim := func(j *store.Job, tag string, missed int) store.ExecutionClaim {
		return store.ExecutionClaim{
			Execution: store.Execution{JobID: j.ID, Tag: tag, Scheduled: due, Missed: missed, Phase: store.ActionMain,
				DueAt: due, ClaimedAt: claimedAt},
			ExpectVersion: j.Version, NextExecutionTime: next,
		}
	}
	staleClaim := loopClaim(stale, "t-stale", 0)
	staleClaim.ExpectVersion++
	gone := loopClaim(a, "t-gone", 0)
	gone.Execution.JobID = b.ID + 1000
	last := loopClaim(b, "t-b", 2)
	last.NextExecutionTime = time.Time{} // b's last occurrence
	claims := []store.ExecutionClaim{loopClaim(a, "t-a", 0), staleClaim, gone, loopClaim(disabled, "t-disabled", 0), last,
		loopClaim(inOff, "t-off", 0)}
	l := elect(t, d, "leader", t0)
	res, err := d.ExecutionClaimMany(ctx, store.ExecutionClaimManyParams{Now: claimedAt, Term: l.Term, Claims: claims})
	if err != nil {
		t.Fatal(err)
	}
	equal(t, "results", len(res), len(claims))
	wantErr(t, "stale version", res[1].Err, store.ErrConflict)
	wantErr(t, "absent job", res[2].Err, store.ErrNotFound)
	wantErr(t, "disabled job", res[3].Err, store.ErrConflict)
	wantErr(t, "job of a disabled collection", res[5].Err, store.ErrConflict)
	for _, i := range []int{1, 2, 3, 5} {
		if res[i].Execution != nil || res[i].Version != 0 {
			t.Fatalf("claim %d: %+v on error", i, res[i])
		}
	}
	for _, c := range []struct {
		i   int
		job *store.Job
	}{{0, a}, {4, b}} {
		r := res[c.i]
		if r.Err != nil {
			t.Fatalf("claim %d: %v", c.i, r.Err)
		}
		x := claims[c.i].Execution
		equal(t, "execution", *r.Execution, store.Execution{ID: r.Execution.ID, JobID: c.job.ID, Tag: x.Tag, Scheduled: due,
			Missed: x.Missed, RepeatCount: 1, Phase: store.ActionMain, DueAt: due, ClaimedAt: claimedAt})
		got := getJob(t, d, c.job.ID)
		equal(t, "version", r.Version, c.job.Version+1)
		equal(t, "job's version", got.Version, c.job.Version+1)
		equal(t, "next", got.Status.NextExecutionTime, claims[c.i].NextExecutionTime)
		equal(t, "execution count", got.Status.ExecutionCount, 1)
		equal(t, "last execution (the due time: claimed ahead)", got.Status.LastExecutionTime, due)
	}
	if res[0].Execution.ID >= res[4].Execution.ID {
		t.Fatalf("execution IDs %d, %d: not in claim order", res[0].Execution.ID, res[4].Execution.ID)
	}
	equal(t, "executions stored", unfinished(t, d), []*store.Execution{res[0].Execution, res[4].Execution})
	equal(t, "stale job unchanged", *getJob(t, d, stale.ID), *stale)

	// The same batch again (with a's and b's new versions) once another replica took over.
	a, b = getJob(t, d, a.ID), getJob(t, d, b.ID)
	claims[0], claims[4] = loopClaim(a, "t-a2", 0), loopClaim(b, "t-b2", 0)
	equal(t, "new leader's term", elect(t, d, "other", t0.Add(11*time.Second)).Term, l.Term+1)
	_, err = d.ExecutionClaimMany(ctx, store.ExecutionClaimManyParams{Now: claimedAt, Term: l.Term, Claims: claims})
	wantErr(t, "claims of the old leader", err, store.ErrStaleTerm)
	equal(t, "a untouched", getJob(t, d, a.ID), a)
	equal(t, "b untouched", getJob(t, d, b.ID), b)
	equal(t, "nothing more claimed", len(unfinished(t, d)), 2)
}
