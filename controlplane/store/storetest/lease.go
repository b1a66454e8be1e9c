package storetest

import (
	"fmt"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
)

const lease = 10 * time.Second

func take(t *testing.T, d store.Driver, p store.ExecutionTakeParams) []store.TakenExecution {
	t.Helper()
	if p.Lease == 0 {
		p.Lease = lease
	}
	got, err := d.ExecutionTake(t.Context(), p)
	if err != nil {
		t.Fatalf("ExecutionTake(%s): %v", p.Owner, err)
	}
	return got
}

func takenIDs(ts []store.TakenExecution) []int64 {
	out := []int64{}
	for _, x := range ts {
		out = append(out, x.Execution.ID)
	}
	return out
}

func renew(t *testing.T, d store.Driver, p store.ExecutionLeaseRenewParams) []int64 {
	t.Helper()
	if p.Lease == 0 {
		p.Lease = lease
	}
	lost, err := d.ExecutionLeaseRenew(t.Context(), p)
	if err != nil {
		t.Fatalf("ExecutionLeaseRenew(%s): %v", p.Owner, err)
	}
	return lost
}

func rescue(t *testing.T, d store.Driver, now time.Time) int64 {
	t.Helper()
	n, err := d.ExecutionRescue(t.Context(), store.ExecutionRescueParams{Now: now})
	if err != nil {
		t.Fatalf("ExecutionRescue: %v", err)
	}
	return n
}

// claimDue claims one occurrence of a new job due at due.
func claimDue(t *testing.T, d store.Driver, name string, due time.Time) *store.Execution {
	t.Helper()
	j := putJob(t, d, "c", name, "Enabled", due)
	c := scheduledClaim(j, "tag-"+name, due.Add(time.Hour))
	c.Execution.DueAt = due
	return claim(t, d, c).Execution
}

// testExecutionTake: a take returns unowned executions due by DueBefore, earliest due first, at
// most Limit, each with its job, and owns them (Owner, LeaseUntil); taken ones are not taken again;
// IDs takes given ones whatever their due time.
func testExecutionTake(t *testing.T, d store.Driver) {
	putCollection(t, d, "c", "Enabled")
	late := claimDue(t, d, "late", t0.Add(3*time.Second))
	early := claimDue(t, d, "early", t0.Add(time.Second))
	mid := claimDue(t, d, "mid", t0.Add(2*time.Second))
	far := claimDue(t, d, "far", t0.Add(time.Hour))

	got := take(t, d, store.ExecutionTakeParams{Owner: "a", Limit: 2, DueBefore: t0.Add(3 * time.Second), Now: t0})
	equal(t, "first take", takenIDs(got), []int64{early.ID, mid.ID})
	want := *early
	want.Owner, want.LeaseUntil = "a", t0.Add(lease)
	equal(t, "taken execution", *got[0].Execution, want)
	equal(t, "its job", got[0].Job, getJob(t, d, early.JobID))
	equal(t, "second take", takenIDs(take(t, d, store.ExecutionTakeParams{Owner: "b", Limit: 5, DueBefore: t0.Add(3 * time.Second), Now: t0})),
		[]int64{late.ID})
	equal(t, "nothing left due", takenIDs(take(t, d, store.ExecutionTakeParams{Owner: "b", Limit: 5, DueBefore: t0.Add(time.Minute), Now: t0})),
		[]int64{})
	equal(t, "by ID, owned ones skipped", takenIDs(take(t, d, store.ExecutionTakeParams{Owner: "c", IDs: []int64{early.ID, far.ID}, Now: t0})),
		[]int64{far.ID})
	owners := map[int64]string{}
	for _, x := range unfinished(t, d) {
		owners[x.ID] = x.Owner
	}
	equal(t, "owners", owners, map[int64]string{early.ID: "a", mid.ID: "a", late.ID: "b", far.ID: "c"})
}

// testExecutionTakeRace: takers racing over the same executions take disjoint sets that cover
// them all.
func testExecutionTakeRace(t *testing.T, d store.Driver) {
	putCollection(t, d, "c", "Enabled")
	const n = 60
	all := map[int64]bool{}
	for i := range n {
		all[claimDue(t, d, fmt.Sprintf("j%02d", i), t0.Add(time.Duration(i)*time.Millisecond)).ID] = true
	}
	var (
		wg    sync.WaitGroup
		start = make(chan struct{})
		got   [3][]int64
		errs  [3]error
	)
	for i := range 3 {
		wg.Go(func() {
			<-start
			for {
				ts, err := d.ExecutionTake(t.Context(), store.ExecutionTakeParams{Owner: fmt.Sprintf("owner%d", i), Limit: 7,
					DueBefore: t0.Add(time.Second), Lease: lease, Now: t0})
				if err != nil {
					errs[i] = err
					return
				}
				if len(ts) == 0 {
					return
				}
				got[i] = append(got[i], takenIDs(ts)...)
			}
		})
	}
	close(start)
	wg.Wait()
	seen := map[int64]string{}
	for i := range 3 {
		if errs[i] != nil {
			t.Fatalf("taker %d: %v", i, errs[i])
		}
		for _, id := range got[i] {
			if o, dup := seen[id]; dup {
				t.Fatalf("execution %d taken by %s and owner%d", id, o, i)
			}
			seen[id] = fmt.Sprintf("owner%d", i)
		}
	}
	equal(t, "executions taken", len(seen), n)
	for _, x := range unfinished(t, d) {
		if !all[x.ID] || x.Owner != seen[x.ID] {
			t.Fatalf("execution %d: owner %q in the store, taken by %q", x.ID, x.Owner, seen[x.ID])
		}
	}
}

// testLeaseExpiresAndIsRescued: an owner that stops renewing loses its execution once the lease
// ends: the rescuer re-queues it (same ID, tag, phase and attempt), another owner takes it, the
// old owner's renewal reports it lost and its record is not applied (Gone, no history); the new
// owner's is. An owner that renews keeps its execution past the old lease's end.
func testLeaseExpiresAndIsRescued(t *testing.T, d store.Driver) {
	putCollection(t, d, "c", "Enabled")
	x := claimDue(t, d, "dies", t0)
	kept := claimDue(t, d, "lives", t0)
	// A retry recorded by the first owner: the rescued execution goes on from there.
	taken := take(t, d, store.ExecutionTakeParams{Owner: "a", Limit: 2, DueBefore: t0, Now: t0})
	equal(t, "taken by a", takenIDs(taken), []int64{x.ID, kept.ID})
	equal(t, "retry recorded by a", record(t, d, store.AttemptRecord{ExecutionID: x.ID, JobID: x.JobID, Owner: "a",
		History: entry(x, store.ActionMain, store.HistoryFailed, 0, "HTTP 500"), Next: t0.Add(time.Second), Phase: store.ActionMain, Attempt: 1}),
		store.AttemptRecordResult{})

	// a renews kept only; x's lease ends at t0+10s.
	equal(t, "renewal by a", renew(t, d, store.ExecutionLeaseRenewParams{Owner: "a", IDs: []int64{kept.ID}, Now: t0.Add(5 * time.Second)}),
		[]int64{})
	equal(t, "rescue before the lease ends", rescue(t, d, t0.Add(9*time.Second)), int64(0))
	equal(t, "b cannot take an owned execution", takenIDs(take(t, d, store.ExecutionTakeParams{Owner: "b", Limit: 5,
		DueBefore: t0.Add(time.Minute), Now: t0.Add(9 * time.Second)})), []int64{})
	equal(t, "rescue after the lease ended", rescue(t, d, t0.Add(11*time.Second)), int64(1))
	equal(t, "rescued once", rescue(t, d, t0.Add(11*time.Second)), int64(0))

	got := take(t, d, store.ExecutionTakeParams{Owner: "b", Limit: 5, DueBefore: t0.Add(time.Minute), Now: t0.Add(11 * time.Second)})
	want := *x
	want.Attempt, want.DueAt, want.Owner, want.LeaseUntil = 1, t0.Add(time.Second), "b", t0.Add(11*time.Second+lease)
	equal(t, "taken again by b", len(got), 1)
	equal(t, "the rescued execution", *got[0].Execution, want)

	equal(t, "a's renewal after the rescue", renew(t, d, store.ExecutionLeaseRenewParams{Owner: "a", IDs: []int64{x.ID, kept.ID},
		Now: t0.Add(12 * time.Second)}), []int64{x.ID})
	j := getJob(t, d, x.JobID)
	equal(t, "a's record after the rescue", record(t, d, store.AttemptRecord{ExecutionID: x.ID, JobID: x.JobID, Owner: "a", Finished: true,
		History: entry(x, store.ActionMain, store.HistoryCompleted, 1, "by a")}), store.AttemptRecordResult{Gone: true})
	equal(t, "a's cancel after the rescue", record(t, d, store.AttemptRecord{ExecutionID: x.ID, JobID: x.JobID, Owner: "a", Finished: true,
		Cancelled: true}), store.AttemptRecordResult{Gone: true})
	equal(t, "an unowned record after the rescue", record(t, d, store.AttemptRecord{ExecutionID: x.ID, JobID: x.JobID, Finished: true,
		History: entry(x, store.ActionMain, store.HistoryCompleted, 1, "nobody's")}), store.AttemptRecordResult{Gone: true})
	equal(t, "job untouched", getJob(t, d, x.JobID), j)
	equal(t, "history: a's retry only", len(history(t, d, j, store.HistoryListParams{})), 1)
	equal(t, "b's record", record(t, d, store.AttemptRecord{ExecutionID: x.ID, JobID: x.JobID, Owner: "b", Finished: true,
		History: entry(x, store.ActionMain, store.HistoryCompleted, 1, "by b")}), store.AttemptRecordResult{})
	hs := history(t, d, j, store.HistoryListParams{})
	equal(t, "history after b's record", []string{hs[0].Message, hs[1].Message}, []string{"by b", "HTTP 500"})
	equal(t, "one tag", hs[0].ExecutionTag, hs[1].ExecutionTag)

	// a's last renewal (at t0+12s) kept its lease on kept until t0+22s.
	equal(t, "renewed lease kept", rescue(t, d, t0.Add(21*time.Second)), int64(0))
	equal(t, "renewed lease ended", rescue(t, d, t0.Add(23*time.Second)), int64(1))
	left := unfinished(t, d)
	equal(t, "kept, unowned", []string{left[0].Tag, left[0].Owner}, []string{kept.Tag, ""})
	equal(t, "its lease cleared", left[0].LeaseUntil, time.Time{})
}

// testLeaseRelease: a released execution is unowned at once (no rescue needed); releasing or
// renewing another owner's execution changes nothing and reports it lost.
func testLeaseRelease(t *testing.T, d store.Driver) {
	putCollection(t, d, "c", "Enabled")
	x := claimDue(t, d, "x", t0)
	y := claimDue(t, d, "y", t0)
	take(t, d, store.ExecutionTakeParams{Owner: "a", IDs: []int64{x.ID}, Now: t0})
	take(t, d, store.ExecutionTakeParams{Owner: "b", IDs: []int64{y.ID}, Now: t0})
	equal(t, "a releases x and y", renew(t, d, store.ExecutionLeaseRenewParams{Owner: "a", IDs: []int64{x.ID, y.ID}, Release: true}),
		[]int64{y.ID})
	left := unfinished(t, d)
	sort.Slice(left, func(i, j int) bool { return left[i].ID < left[j].ID })
	equal(t, "owners", []string{left[0].Owner, left[1].Owner}, []string{"", "b"})
	equal(t, "c takes the released one", takenIDs(take(t, d, store.ExecutionTakeParams{Owner: "c", Limit: 5, DueBefore: t0, Now: t0})),
		[]int64{x.ID})
}

// testRescueFenced: a rescue in a term that is no longer the leader's re-queues nothing.
func testRescueFenced(t *testing.T, d store.Driver) {
	putCollection(t, d, "c", "Enabled")
	x := claimDue(t, d, "x", t0)
	take(t, d, store.ExecutionTakeParams{Owner: "a", IDs: []int64{x.ID}, Now: t0})
	equal(t, "a", elect(t, d, "a", t0).Term, int64(1))
	equal(t, "b", elect(t, d, "b", t0.Add(11*time.Second)).Term, int64(2))
	_, err := d.ExecutionRescue(t.Context(), store.ExecutionRescueParams{Now: t0.Add(time.Hour), Term: 1})
	wantErr(t, "stale rescue", err, store.ErrStaleTerm)
	equal(t, "still owned", unfinished(t, d)[0].Owner, "a")
	n, err := d.ExecutionRescue(t.Context(), store.ExecutionRescueParams{Now: t0.Add(time.Hour), Term: 2})
	if err != nil {
		t.Fatal(err)
	}
	equal(t, "rescued in the current term", n, int64(1))
}
