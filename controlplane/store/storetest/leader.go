package storetest

import (
	"sync"
	"testing"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
)

func elect(t *testing.T, d store.Driver, replica string, now time.Time) *store.Leader {
	t.Helper()
	l, err := d.LeaderElect(t.Context(), store.LeaderElectParams{Replica: replica, TTL: 10 * time.Second, Now: now})
	if err != nil {
		t.Fatalf("LeaderElect(%s): %v", replica, err)
	}
	l.ExpiresAt = l.ExpiresAt.Truncate(Precision)
	return l
}

// testLeaderTermExpiry: the first replica to ask leads in term 1; another one is refused while
// the term lasts and takes over (term 2) once it expired; the old leader's renewal then reports
// the new leader. A renewal keeps the term; a resignation lets another replica in at once.
func testLeaderTermExpiry(t *testing.T, d store.Driver) {
	exp := func(at time.Time) time.Time { return at.Add(10 * time.Second).Truncate(Precision) }
	equal(t, "a elected", *elect(t, d, "a", t0), store.Leader{Replica: "a", Term: 1, ExpiresAt: exp(t0)})
	equal(t, "b refused", *elect(t, d, "b", t0.Add(5*time.Second)), store.Leader{Replica: "a", Term: 1, ExpiresAt: exp(t0)})
	equal(t, "a renews", *elect(t, d, "a", t0.Add(6*time.Second)), store.Leader{Replica: "a", Term: 1, ExpiresAt: exp(t0.Add(6 * time.Second))})
	equal(t, "b still refused", *elect(t, d, "b", t0.Add(15*time.Second)), store.Leader{Replica: "a", Term: 1, ExpiresAt: exp(t0.Add(6 * time.Second))})
	equal(t, "b takes over", *elect(t, d, "b", t0.Add(16*time.Second)), store.Leader{Replica: "b", Term: 2, ExpiresAt: exp(t0.Add(16 * time.Second))})
	equal(t, "a sees b", *elect(t, d, "a", t0.Add(17*time.Second)), store.Leader{Replica: "b", Term: 2, ExpiresAt: exp(t0.Add(16 * time.Second))})
	// A resignation in another term changes nothing; b's own ends its term now.
	if err := d.LeaderResign(t.Context(), store.LeaderResignParams{Replica: "b", Term: 1}); err != nil {
		t.Fatal(err)
	}
	equal(t, "stale resign ignored", elect(t, d, "a", t0.Add(18*time.Second)).Replica, "b")
	if err := d.LeaderResign(t.Context(), store.LeaderResignParams{Replica: "b", Term: 2}); err != nil {
		t.Fatal(err)
	}
	equal(t, "a after resign", *elect(t, d, "a", t0.Add(19*time.Second)), store.Leader{Replica: "a", Term: 3, ExpiresAt: exp(t0.Add(19 * time.Second))})
}

// testStaleLeaderRefused: claims fenced by a term that is no longer the leader's claim nothing
// and fail with ErrStaleTerm; the new leader's claims (and unfenced manual runs) go through.
func testStaleLeaderRefused(t *testing.T, d store.Driver) {
	ctx := t.Context()
	putCollection(t, d, "c", "Enabled")
	j := putJob(t, d, "c", "j", "Enabled", t0.Add(time.Minute))
	_, err := d.ExecutionClaimMany(ctx, store.ExecutionClaimManyParams{Now: t0, Term: 1,
		Claims: []store.ExecutionClaim{scheduledClaim(j, "no-leader", t0.Add(2*time.Minute))}})
	wantErr(t, "claim before any leader", err, store.ErrStaleTerm)
	equal(t, "a", elect(t, d, "a", t0).Term, int64(1))
	equal(t, "b", elect(t, d, "b", t0.Add(11*time.Second)).Term, int64(2))
	_, err = d.ExecutionClaimMany(ctx, store.ExecutionClaimManyParams{Now: t0, Term: 1,
		Claims: []store.ExecutionClaim{scheduledClaim(j, "stale", t0.Add(2*time.Minute))}})
	wantErr(t, "stale claim", err, store.ErrStaleTerm)
	equal(t, "job untouched", getJob(t, d, j.ID), j)
	equal(t, "nothing claimed", len(unfinished(t, d)), 0)
	res, err := d.ExecutionClaimMany(ctx, store.ExecutionClaimManyParams{Now: t0, Term: 2,
		Claims: []store.ExecutionClaim{scheduledClaim(j, "current", t0.Add(2*time.Minute))}})
	if err != nil || res[0].Err != nil {
		t.Fatalf("claim in the current term: %v %+v", err, res)
	}
	equal(t, "claimed", unfinished(t, d)[0].Tag, "current")
}

// testClaimRace: two claims of one occurrence (the same job at the same version) made at the
// same time by two callers: exactly one wins, the other gets ErrConflict, one execution exists.
func testClaimRace(t *testing.T, d store.Driver) {
	putCollection(t, d, "c", "Enabled")
	for round := range 10 {
		j := putJob(t, d, "c", "j"+string(rune('a'+round)), "Enabled", t0.Add(time.Minute))
		c := scheduledClaim(j, "racer", t0.Add(2*time.Minute))
		results := raceClaims(t, d, round, [2]store.ExecutionClaim{c, c})
		won := 0
		for i := range 2 {
			if results[i].Err == nil {
				won++
			} else {
				wantErr(t, "loser", results[i].Err, store.ErrConflict)
			}
		}
		equal(t, "winners", won, 1)
		equal(t, "execution count", getJob(t, d, j.ID).Status.ExecutionCount, 1)
	}
	equal(t, "executions", len(unfinished(t, d)), 10)
}

// raceClaims makes the two claims at the same time, each in its own call (two replicas), and
// returns their results; a call that fails (not a claim that loses) fails the test.
func raceClaims(t *testing.T, d store.Driver, round int, claims [2]store.ExecutionClaim) [2]store.ExecutionClaimResult {
	t.Helper()
	var (
		wg      sync.WaitGroup
		start   = make(chan struct{})
		results [2]store.ExecutionClaimResult
		errs    [2]error
	)
	for i := range 2 {
		wg.Go(func() {
			<-start
			res, err := d.ExecutionClaimMany(t.Context(), store.ExecutionClaimManyParams{Now: t0,
				Claims: []store.ExecutionClaim{claims[i]}})
			errs[i] = err
			if err == nil {
				results[i] = res[0]
			}
		})
	}
	close(start)
	wg.Wait()
	for i := range 2 {
		if errs[i] != nil {
			t.Fatalf("round %d claim %d: %v", round, i, errs[i])
		}
	}
	return results
}
