package dispatch_test

import (
	"testing"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/dispatch"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store/faulty"
)

// recordAdvancing waits for the next record, moving the fake clock on in small steps so that the
// writer's back-off timers fire.
func (e *env) recordAdvancing(step time.Duration) store.AttemptRecord {
	e.t.Helper()
	deadline := time.After(wait)
	for {
		select {
		case r := <-e.records:
			return r
		case <-deadline:
			e.t.Fatal("no attempt was recorded")
		case <-time.After(20 * time.Millisecond):
			e.clock.Advance(step)
		}
	}
}

func TestFailedCommitsLoseNothing(t *testing.T) {
	tg := newTarget(t)
	var f *faulty.Driver
	e := newEnv(t, t0, func(c *dispatch.Config) {
		f = faulty.Wrap(c.Store)
		c.Store = f
	})
	props := everyMinute(t0.Add(time.Minute))
	props.Action = httpAction(tg.URL + "/f")
	j := e.putJob("j", props, "Enabled")
	e.start()
	f.Fail("ExecutionClaimMany", 1)
	f.Fail("AttemptRecordMany", 2)

	e.clock.Set(t0.Add(time.Minute))
	e.quiet(t0.Add(time.Minute + time.Second)) // the claim failed: tried again in a second
	tg.noHit(t)                                // nothing runs unclaimed
	e.clock.Advance(time.Second)               // the claim is tried again
	h := tg.next(t)
	equal(t, "expected time", h.Header.Get("x-ms-scheduler-expected-execution-time"), "2026-06-01T09:01:00Z")
	r := e.recordAdvancing(100 * time.Millisecond)
	equal(t, "recorded tag", r.History.ExecutionTag, h.Header.Get("x-ms-execution-tag"))
	equal(t, "record commits tried", f.Calls("AttemptRecordMany"), 3)
	e.quiet(t0.Add(2*time.Minute - lookahead))
	tg.noHit(t) // the attempt itself was not repeated

	equal(t, "history entries", len(e.history(j)), 1)
	equal(t, "unfinished executions", len(e.unfinished()), 0)
	got := e.job(j.ID)
	equal(t, "execution count", got.Status.ExecutionCount, 1)
	equal(t, "next", got.Status.NextExecutionTime, t0.Add(2*time.Minute))
}

func TestUnrecordedAttemptRunsAgainAfterRestartWithTheSameTag(t *testing.T) {
	tg := newTarget(t)
	var f *faulty.Driver
	e := newEnv(t, t0, func(c *dispatch.Config) {
		f = faulty.Wrap(c.Store)
		c.Store = f
	})
	props := everyMinute(t0.Add(time.Minute))
	props.Action = httpAction(tg.URL + "/again")
	j := e.putJob("j", props, "Enabled")
	e.start()
	f.Fail("AttemptRecordMany", -1) // the database is gone for good: results cannot be stored

	e.clock.Set(t0.Add(time.Minute))
	first := tg.next(t).Header.Get("x-ms-execution-tag")
	e.stop()
	equal(t, "history while the store failed", len(e.history(j)), 0)

	f.Clear("AttemptRecordMany")
	e.start()
	h := tg.next(t)
	equal(t, "tag of the repeated attempt", h.Header.Get("x-ms-execution-tag"), first)
	equal(t, "expected time of the repeated attempt", h.Header.Get("x-ms-scheduler-expected-execution-time"), "2026-06-01T09:01:00Z")
	e.record()
	hs := e.history(j)
	equal(t, "history entries", len(hs), 1)
	equal(t, "history tag", hs[0].ExecutionTag, first)
	equal(t, "execution count (one occurrence)", e.job(j.ID).Status.ExecutionCount, 1)
}

func TestConcurrentAPIWriteWinsOverAClaim(t *testing.T) {
	tg := newTarget(t)
	var f *faulty.Driver
	e := newEnv(t, t0, func(c *dispatch.Config) {
		f = faulty.Wrap(c.Store)
		c.Store = f
	})
	props := everyMinute(t0.Add(time.Minute))
	props.Action = httpAction(tg.URL + "/old")
	j := e.putJob("j", props, "Enabled")
	e.start()
	// Just before the dispatcher's claim commits, the API replaces the job (new target, same
	// schedule) without telling the dispatcher yet.
	f.Before("ExecutionClaimMany", func() {
		cur := e.job(j.ID)
		cur.Properties.Action.Request.URI = tg.URL + "/new"
		if _, _, err := e.store.JobPut(t.Context(), store.JobPutParams{Job: *cur, ExpectVersion: cur.Version, Now: e.clock.Now()}); err != nil {
			t.Error(err)
		}
	})
	e.clock.Set(t0.Add(time.Minute))
	h := tg.next(t)
	equal(t, "the API's version fired", h.Path, "/new")
	equal(t, "expected time", h.Header.Get("x-ms-scheduler-expected-execution-time"), "2026-06-01T09:01:00Z")
	e.record()
	e.quiet(t0.Add(2*time.Minute - lookahead))
	tg.noHit(t)
	if n := f.Calls("ExecutionClaimMany"); n != 2 {
		t.Fatalf("claim commits = %d, want 2 (the first lost to the API write)", n)
	}
	got := e.job(j.ID)
	equal(t, "execution count", got.Status.ExecutionCount, 1)
	equal(t, "next", got.Status.NextExecutionTime, t0.Add(2*time.Minute))
}

func TestDeletedCollectionStopsItsJobs(t *testing.T) {
	tg := newTarget(t)
	e := newEnv(t, t0, nil)
	props := everyMinute(t0.Add(time.Minute))
	props.Action = httpAction(tg.URL + "/gone")
	e.putJob("j", props, "Enabled")
	e.start()
	if err := e.store.CollectionDelete(t.Context(), store.CollectionDeleteParams{Key: e.coll.Key}); err != nil {
		t.Fatal(err)
	}
	e.disp.CollectionChanged(e.coll.ID)
	e.quiet(time.Time{})
	e.clock.Set(t0.Add(5 * time.Minute))
	tg.noHit(t)
	equal(t, "unfinished executions", len(e.unfinished()), 0)
}

func TestResumedExecutionWhoseJobCannotBeReadIsTriedAgain(t *testing.T) {
	tg := newTarget(t)
	var f *faulty.Driver
	e := newEnv(t, t0, func(c *dispatch.Config) {
		f = faulty.Wrap(c.Store)
		c.Store = f
	})
	props := everyMinute(t0.Add(time.Hour))
	props.Action = httpAction(tg.URL + "/later")
	j := e.putJob("j", props, "Disabled") // not scheduled: the loop does not hold it
	res, err := e.store.ExecutionClaimMany(t.Context(), store.ExecutionClaimManyParams{Now: t0, Claims: []store.ExecutionClaim{
		{Execution: store.Execution{JobID: j.ID, Tag: "left-over", Scheduled: t0, Manual: true, Phase: "MainAction", DueAt: t0, ClaimedAt: t0}},
	}})
	if err != nil || res[0].Err != nil {
		t.Fatalf("claim: %v %+v", err, res)
	}
	f.Fail("JobGetByID", 1)
	e.start()
	e.quiet(t0.Add(time.Minute)) // the read failed: tried again in a minute
	tg.noHit(t)
	e.clock.Advance(time.Minute)
	equal(t, "tag", tg.next(t).Header.Get("x-ms-execution-tag"), "left-over")
	e.record()
	equal(t, "unfinished executions", len(e.unfinished()), 0)
}
