package dispatch_test

import (
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/dispatch"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/testsignal"
)

// replicaExecutor is an env whose executor is replica "a"'s, on the fake clock: Lease 3 s
// (looked at every half second, renewed once 2 s or less are left), Poll 1 s.
func replicaExecutor(t *testing.T) *env {
	t.Helper()
	return newEnv(t, t0, func(c *dispatch.Config) { c.Owner, c.Lease, c.Poll = "a", 3*time.Second, time.Second })
}

// leaderClaim claims an occurrence of j due at due, unowned, as the leader's scheduler does.
func (e *env) leaderClaim(j *store.Job, tag string, due time.Time) *store.Execution {
	e.t.Helper()
	res, err := e.store.ExecutionClaimMany(e.t.Context(), store.ExecutionClaimManyParams{Now: e.clock.Now(), Claims: []store.ExecutionClaim{{
		ExpectVersion: j.Version, NextExecutionTime: due.Add(time.Minute),
		Execution: store.Execution{JobID: j.ID, Tag: tag, Scheduled: due, Phase: store.ActionMain, DueAt: due, ClaimedAt: e.clock.Now()},
	}}})
	if err != nil || res[0].Err != nil {
		e.t.Fatalf("claim: %v %+v", err, res)
	}
	return res[0].Execution
}

// waitIDs waits for a signal carrying exactly ids.
func waitIDs(t *testing.T, what string, sig *testsignal.Signal[[]int64], ids ...int64) {
	t.Helper()
	if _, err := sig.Wait(wait, func(got []int64) bool { return slices.Equal(got, ids) }); err != nil {
		t.Fatalf("%s %v: %v", what, ids, err)
	}
}

// TestAReplicasExecutorTakesHoldsUntilDueAndRecordsAsOwner: woken, a replica's executor takes an
// execution due within its horizon, holds it until due on the fake clock, runs it with its tag
// and records it as its owner.
func TestAReplicasExecutorTakesHoldsUntilDueAndRecordsAsOwner(t *testing.T) {
	tg := newTarget(t)
	e := replicaExecutor(t)
	props := everyMinute(t0.Add(time.Hour))
	props.Action = httpAction(tg.URL + "/taken")
	j := e.putJob("j", props, "Enabled")
	e.start()
	x := e.leaderClaim(j, "leader-claim", t0.Add(time.Second))
	e.exec.Wake()
	waitIDs(t, "taken", &e.exec.TestSignals.Taken, x.ID)
	equal(t, "owner in the store", e.unfinished()[0].Owner, "a")
	tg.noHit(t) // held: due at t0+1s

	e.clock.Set(t0.Add(time.Second))
	h := tg.next(t)
	equal(t, "tag", h.Header.Get("x-ms-execution-tag"), "leader-claim")
	r := e.record()
	equal(t, "recorded as its owner", [2]any{r.Owner, r.Finished}, [2]any{"a", true})
	equal(t, "unfinished executions", len(e.unfinished()), 0)
}

// hangingAttempt starts replica "a"'s executor with a job whose attempt hangs until the test
// ends (cut short on stop): the leader claims it at t0 with tag, and when hangingAttempt returns
// the executor has taken it and its attempt is under way.
func hangingAttempt(t *testing.T, tag string) (*env, *store.Execution) {
	t.Helper()
	tg := newTarget(t)
	hang := make(chan struct{})
	tg.block = hang
	e := replicaExecutor(t)
	e.cfg.ShutdownGrace = time.Millisecond // the hanging attempt is cut short on stop
	props := everyMinute(t0.Add(time.Hour))
	props.Action = httpAction(tg.URL + "/hangs")
	j := e.putJob("j", props, "Enabled")
	e.start()
	t.Cleanup(func() { close(hang) })
	x := e.leaderClaim(j, tag, t0)
	e.exec.Wake()
	waitIDs(t, "taken", &e.exec.TestSignals.Taken, x.ID)
	tg.next(t) // under way, hanging
	return e, x
}

// TestAReplicasExecutorRenewsWhatItRunsAndReleasesOnStop: while its attempt hangs, the executor
// renews the lease whenever it comes near its end (every second here), so the leader's rescue
// finds nothing to rescue long after the first lease would have ended; stopped, it releases the
// execution, which another replica takes at once.
func TestAReplicasExecutorRenewsWhatItRunsAndReleasesOnStop(t *testing.T) {
	e, x := hangingAttempt(t, "renewed")
	l, err := e.store.LeaderElect(t.Context(), store.LeaderElectParams{Replica: "leader", TTL: time.Hour, Now: t0})
	if err != nil {
		t.Fatal(err)
	}
	for range 9 { // 9 s: three leases
		e.clock.Advance(time.Second)
		waitIDs(t, "renewed", &e.exec.TestSignals.Renewed, x.ID)
		n, err := e.store.ExecutionRescue(t.Context(), store.ExecutionRescueParams{Now: e.clock.Now(), Term: l.Term})
		if err != nil || n != 0 {
			t.Fatalf("rescue at %s: %d, %v; want nothing (the lease is renewed)", e.clock.Now().Sub(t0), n, err)
		}
	}
	e.stopAdvancing() // the grace period runs on the fake clock
	waitIDs(t, "released", &e.exec.TestSignals.Released, x.ID)
	taken, err := e.store.ExecutionTake(t.Context(), store.ExecutionTakeParams{Owner: "b", IDs: []int64{x.ID}, Lease: time.Second, Now: e.clock.Now()})
	if err != nil || len(taken) != 1 {
		t.Fatalf("replica b takes the released execution: %d, %v; want it", len(taken), err)
	}
}

// TestAReplicasExecutorRenewsOnlyLeasesNearTheirEnd: the executor looks at its leases every
// Lease/6 of the fake clock and renews only those ending within 2/3 of the lease: with a 3 s
// lease, an execution taken at t0 is left alone at 0.5 s (2.5 s left), renewed at 1 s (2 s
// left, the store's lease moved to 4 s), left alone at 1.5 s and renewed again at 2 s.
func TestAReplicasExecutorRenewsOnlyLeasesNearTheirEnd(t *testing.T) {
	e, x := hangingAttempt(t, "near-end")
	for i, want := range [][]int64{{}, {x.ID}, {}, {x.ID}} {
		e.clock.Advance(500 * time.Millisecond)
		waitIDs(t, fmt.Sprintf("renewed at %s", e.clock.Now().Sub(t0)), &e.exec.TestSignals.Renewed, want...)
		if i == 1 {
			equal(t, "lease in the store after the renewal at 1s", e.unfinished()[0].LeaseUntil, t0.Add(4*time.Second))
		}
	}
}

// TestAReplicasExecutorDropsWhatItLost: an execution the executor holds, rescued by the leader
// after the lease ran out (the replica lost the database for a while), is dropped when the next
// renewal says so: it does not run here; another replica takes it and runs it with its tag.
func TestAReplicasExecutorDropsWhatItLost(t *testing.T) {
	tg := newTarget(t)
	a := replicaExecutor(t)
	a.cfg.Poll = time.Hour // a takes only when woken: it does not take the execution back
	props := everyMinute(t0.Add(time.Hour))
	props.Action = httpAction(tg.URL + "/lost")
	j := a.putJob("j", props, "Enabled")
	a.start()
	due := t0.Add(1200 * time.Millisecond) // within the take's horizon, after a's first renewal
	x := a.leaderClaim(j, "lost", due)
	a.exec.Wake()
	waitIDs(t, "taken", &a.exec.TestSignals.Taken, x.ID)

	// The leader rescues it as if a's lease had run out (a's clock has not moved: its renewals
	// have not come yet), and replica b takes it.
	l, err := a.store.LeaderElect(t.Context(), store.LeaderElectParams{Replica: "leader", TTL: time.Hour, Now: t0})
	if err != nil {
		t.Fatal(err)
	}
	if n, err := a.store.ExecutionRescue(t.Context(), store.ExecutionRescueParams{Now: t0.Add(time.Minute), Term: l.Term}); err != nil || n != 1 {
		t.Fatalf("rescue: %d, %v; want 1", n, err)
	}
	a.clock.Advance(time.Second) // a's renewal: lost (the execution is due 200 ms later)
	waitIDs(t, "lost", &a.exec.TestSignals.Lost, x.ID)

	b := &env{t: t, store: a.store, box: a.box, clock: a.clock, records: make(chan store.AttemptRecord, 10), coll: a.coll, cfg: a.cfg}
	b.cfg.Owner = "b"
	b.cfg.OnRecord = func(r store.AttemptRecord, _ store.AttemptRecordResult) { b.records <- r }
	b.start()
	b.exec.Wake()
	waitIDs(t, "taken by b", &b.exec.TestSignals.Taken, x.ID)
	a.clock.Set(due)
	h := tg.next(t)
	equal(t, "tag", h.Header.Get("x-ms-execution-tag"), "lost")
	r := b.record()
	equal(t, "recorded by b", r.Owner, "b")
	equal(t, "a recorded nothing", len(a.records), 0)
	equal(t, "requests", len(tg.hits), 0)
}

// stopAdvancing stops the executor while moving the fake clock on 1 ms at a time, so that its
// shutdown grace period passes.
func (e *env) stopAdvancing() {
	e.t.Helper()
	e.cancel()
	e.cancel = nil
	deadline := time.After(wait)
	for {
		select {
		case err := <-e.done:
			if err != nil {
				e.t.Errorf("Run: %v", err)
			}
			return
		case <-deadline:
			e.t.Fatal("Run did not return")
		case <-time.After(10 * time.Millisecond):
			e.clock.Advance(time.Millisecond)
		}
	}
}

// atItsBound starts a replica's executor ("a") with Workers 2 (8 owned at most), BatchSize 2 and
// a Poll of an hour, hands it 13 executions due now, and returns once the first (on a target that
// hangs until hang is closed) is under way; the 12 others go to tg.
func atItsBound(t *testing.T) (e *env, tg *target, hang chan struct{}) {
	t.Helper()
	tg, stuck := newTarget(t), newTarget(t)
	hang = make(chan struct{})
	stuck.block = hang
	e = newEnv(t, t0, func(c *dispatch.Config) {
		c.Owner, c.Lease, c.Poll, c.Workers, c.BatchSize = "a", time.Hour, time.Hour, 2, 2
	})
	props := everyMinute(t0.Add(time.Hour))
	props.Action = httpAction(stuck.URL + "/hangs")
	first := e.putJob("hangs", props, "Enabled")
	e.start()
	e.leaderClaim(first, "hangs", t0)
	props.Action = httpAction(tg.URL + "/runs")
	for i := range 12 {
		e.leaderClaim(e.putJob(fmt.Sprintf("j%02d", i), props, "Enabled"), fmt.Sprintf("runs-%02d", i), t0)
	}
	e.exec.Wake()
	stuck.next(t)
	return e, tg, hang
}

// TestAReplicasExecutorTakesAgainWhenRecordsFreeItsRoom: what an executor owns is bounded (4 ×
// Workers), and the executions whose attempts ended stay owned until their records commit. When
// the taker stopped at that bound, the commit of those records wakes it: the rest are taken at
// once, not at the next Poll (an hour here, and the fake clock does not move). Workers 2 (8
// owned at most), BatchSize 2 (records wait while an attempt is under way, until 8 pile up): one
// attempt hangs while 7 others run and wait for their records, then it ends.
func TestAReplicasExecutorTakesAgainWhenRecordsFreeItsRoom(t *testing.T) {
	e, tg, hang := atItsBound(t)
	for range 7 { // then the bound: the hanging one and 7 waiting for their records
		tg.next(t)
	}
	close(hang)
	for i := range 5 {
		if h := tg.next(t); h.Path != "/runs" {
			t.Fatalf("request %d after the records: %s", i, h.Path)
		}
	}
	for range 13 {
		<-e.records
	}
	equal(t, "unfinished executions", len(e.unfinished()), 0)
}

// TestAReplicasRecordsDoNotHoldItsTakesBack: records wait while attempts are under way, but not
// when they are what keeps a replica's executor at its bound of owned executions. Workers 2 (8
// owned at most), BatchSize 2: one attempt hangs throughout (so the executor is busy and, on the
// fake clock, maxRecordWait never passes) while the 12 others all run: their records commit as
// the bound nears instead of waiting for the hanging one, so that the executor takes the rest.
func TestAReplicasRecordsDoNotHoldItsTakesBack(t *testing.T) {
	e, tg, hang := atItsBound(t)
	for range 12 { // all of them, while the one hangs
		tg.next(t)
	}
	close(hang)
	for range 13 {
		<-e.records
	}
	equal(t, "unfinished executions", len(e.unfinished()), 0)
}

// TestABurstsRecordsWaitUntilItsLastAttemptsStart: while attempts wait to start (here for their
// target's turn: TargetConcurrency 1), their records are kept back; once none waits, they are
// committed. 20 jobs due at one instant on one target that answers one request at a time,
// released by the test, claimed ahead and held until due (Lookahead 500 ms), as a burst is: the
// first record commits once the 19th attempt has ended, not at the 8th (4 batches of 2, the bound
// for attempts that are only under way, which it fails with).
func TestABurstsRecordsWaitUntilItsLastAttemptsStart(t *testing.T) {
	tg := newTarget(t)
	release := make(chan struct{})
	tg.block = release
	var released, firstAt atomic.Int64
	firstAt.Store(-1)
	e := newEnv(t, t0, func(c *dispatch.Config) {
		c.Workers, c.TargetConcurrency, c.BatchSize = 8, 1, 2
		onRecord := c.OnRecord
		c.OnRecord = func(r store.AttemptRecord, res store.AttemptRecordResult) {
			firstAt.CompareAndSwap(-1, released.Load())
			onRecord(r, res)
		}
	})
	props := everyMinute(t0.Add(time.Minute))
	props.Action = httpAction(tg.URL + "/runs")
	const burst = 20
	for i := range burst {
		e.putJob(fmt.Sprintf("j%02d", i), props, "Enabled")
	}
	e.start()
	e.clock.Set(t0.Add(time.Minute - 400*time.Millisecond))
	for len(e.unfinished()) < burst {
		e.quiet(t0.Add(time.Minute)) // every occurrence claimed and held
	}
	e.clock.Set(t0.Add(time.Minute))
	for range burst {
		tg.next(t) // one under way at a time
		released.Add(1)
		release <- struct{}{}
	}
	for range burst {
		e.record()
	}
	if got := firstAt.Load(); got < burst-1 {
		t.Fatalf("first record committed after %d of %d attempts ended, want %d or %d", got, burst, burst-1, burst)
	}
	equal(t, "unfinished executions", len(e.unfinished()), 0)
}
