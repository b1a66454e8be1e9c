package dispatch_test

import (
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/dispatch"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/secret"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"
)

func equal(t *testing.T, what string, got, want any) {
	t.Helper()
	if fmt.Sprintf("%#v", got) != fmt.Sprintf("%#v", want) {
		t.Fatalf("%s:\n got  %#v\n want %#v", what, got, want)
	}
}

func TestFiresOnScheduleWithHeadersHistoryAndStatus(t *testing.T) {
	tg := newTarget(t)
	e := newEnv(t, t0, nil)
	props := everyMinute(t0.Add(time.Minute))
	props.Action = httpAction(tg.URL + "/hook")
	props.Action.Request.Headers = map[string]string{"X-Job": "one"}
	j := e.putJob("job-1", props, "Enabled")
	e.start()
	e.quiet(t0.Add(time.Minute - lookahead)) // armed for the first occurrence's claim
	tg.noHit(t)                              // not due yet

	e.clock.Set(t0.Add(time.Minute))
	h := tg.next(t)
	equal(t, "method and path", h.Method+" "+h.Path+" "+h.Body, "POST /hook ping")
	tag := h.Header.Get("x-ms-execution-tag")
	if len(tag) != 36 {
		t.Fatalf("execution tag %q is not a UUID", tag)
	}
	for k, v := range map[string]string{
		"X-Job":                                  "one",
		"x-ms-scheduler-expected-execution-time": "2026-06-01T09:01:00Z",
		"x-ms-scheduler-jobid":                   "/subscriptions/sub/resourceGroups/rg/providers/Microsoft.Scheduler/jobCollections/coll/jobs/job-1",
		"x-ms-scheduler-jobcollectionid":         "/subscriptions/sub/resourceGroups/rg/providers/Microsoft.Scheduler/jobCollections/coll",
		"x-ms-scheduler-execution-region":        "test-region",
	} {
		equal(t, "header "+k, h.Header.Get(k), v)
	}
	if h.Header.Get("x-ms-client-request-id") == "" {
		t.Fatal("no x-ms-client-request-id")
	}
	r := e.record()
	equal(t, "record", [3]bool{r.Finished, r.Faulted, r.Failure}, [3]bool{true, false, false})

	hs := e.history(j)
	if len(hs) != 1 {
		t.Fatalf("%d history entries, want 1", len(hs))
	}
	got := *hs[0]
	want := store.HistoryEntry{
		ID: got.ID, JobID: j.ID, ExecutionID: got.ExecutionID, ExecutionTag: tag, ActionName: "MainAction", Status: "Completed",
		Message: "HTTP/1.1 200 OK\nanswer from /hook", RetryCount: 0, RepeatCount: 1,
		ExpectedExecutionTime: t0.Add(time.Minute), StartTime: t0.Add(time.Minute), EndTime: t0.Add(time.Minute),
	}
	equal(t, "history", got, want)
	st := e.job(j.ID).Status
	equal(t, "status", st, store.JobStatus{ExecutionCount: 1, LastExecutionTime: t0.Add(time.Minute), NextExecutionTime: t0.Add(2 * time.Minute)})

	// The next occurrence is computed from the schedule, with a new tag and the next repeat count.
	e.clock.Set(t0.Add(2*time.Minute + 10*time.Second))
	h2 := tg.next(t)
	equal(t, "second expected time", h2.Header.Get("x-ms-scheduler-expected-execution-time"), "2026-06-01T09:02:00Z")
	if h2.Header.Get("x-ms-execution-tag") == tag {
		t.Fatal("second occurrence reused the first one's tag")
	}
	r2 := e.record()
	equal(t, "second repeat count", r2.History.RepeatCount, 2)
	equal(t, "next after the second", e.job(j.ID).Status.NextExecutionTime, t0.Add(3*time.Minute))

	equal(t, "lateness samples", metricValue(t, e.reg, "scheduler_execution_lateness_seconds", ""), 2.0)
	equal(t, "completed executions", metricValue(t, e.reg, "scheduler_executions_total", "completed"), 2.0)
	equal(t, "faulted executions", metricValue(t, e.reg, "scheduler_executions_total", "faulted"), 0.0)
	equal(t, "backlog", metricValue(t, e.reg, "scheduler_due_backlog", ""), 0.0)
}

func TestRetriesErrorActionAndFaulted(t *testing.T) {
	tg := newTarget(t)
	tg.answer("/main", http.StatusInternalServerError)
	tg.answer("/error", http.StatusBadGateway)
	e := newEnv(t, t0, nil) // FaultedAfter 2
	props := everyMinute(t0.Add(time.Minute))
	props.Action = httpAction(tg.URL + "/main")
	props.Action.RetryPolicy = &wire.RetryPolicy{RetryType: "Fixed", RetryInterval: "PT15S", RetryCount: intp(2)}
	props.Action.ErrorAction = &wire.JobErrorAction{Type: "Http", Request: &wire.HTTPRequest{URI: tg.URL + "/error", Method: "PUT"},
		RetryPolicy: &wire.RetryPolicy{RetryType: "None"}}
	j := e.putJob("flaky", props, "Enabled")
	e.start()

	occurrence := func(at time.Time) string {
		t.Helper()
		e.clock.Set(at)
		var tags []string
		requestIDs := map[string]bool{}
		for i := range 3 {
			h := tg.next(t)
			equal(t, fmt.Sprintf("attempt %d path", i), h.Path, "/main")
			tags = append(tags, h.Header.Get("x-ms-execution-tag"))
			requestIDs[h.Header.Get("x-ms-client-request-id")] = true
			r := e.record()
			equal(t, fmt.Sprintf("attempt %d retry count", i), r.History.RetryCount, i)
			if i < 2 {
				equal(t, "retry due", r.Next, r.History.EndTime.Add(15*time.Second))
				e.clock.Advance(15 * time.Second)
			} else {
				equal(t, "on to the error action", [3]any{r.Failure, r.Phase, r.Finished}, [3]any{true, "ErrorAction", false})
			}
		}
		h := tg.next(t)
		equal(t, "error action", h.Method+" "+h.Path, "PUT /error")
		equal(t, "the error action is told what failed", [3]string{h.Header.Get("x-ms-scheduler-failed-status"),
			h.Header.Get("x-ms-scheduler-failed-reason"), h.Header.Get("x-ms-scheduler-attempts")},
			[3]string{"500", "HTTP/1.1 500 Internal Server Error", "3"})
		tags = append(tags, h.Header.Get("x-ms-execution-tag"))
		r := e.record()
		equal(t, "error action record", [3]bool{r.Finished, r.Faulted, r.Failure}, [3]bool{true, true, false})
		for _, tag := range tags[1:] {
			equal(t, "tag stable across attempts", tag, tags[0])
		}
		equal(t, "a new client request id per attempt", len(requestIDs), 3)
		return tags[0]
	}
	tag := occurrence(t0.Add(time.Minute))
	got := e.job(j.ID)
	equal(t, "state after one faulted occurrence", got.State, "Enabled")
	equal(t, "status", got.Status, store.JobStatus{ExecutionCount: 1, FailureCount: 1, FaultedCount: 1, ConsecutiveFaults: 1,
		LastExecutionTime: t0.Add(time.Minute), NextExecutionTime: t0.Add(2 * time.Minute)})
	hs := e.history(j)
	var lines []string
	for _, h := range hs {
		lines = append(lines, fmt.Sprintf("%s %s retry=%d repeat=%d tag-ok=%v", h.ActionName, h.Status, h.RetryCount, h.RepeatCount, h.ExecutionTag == tag))
	}
	equal(t, "history, newest first", lines, []string{
		"ErrorAction Failed retry=0 repeat=1 tag-ok=true",
		"MainAction Failed retry=2 repeat=1 tag-ok=true",
		"MainAction Failed retry=1 repeat=1 tag-ok=true",
		"MainAction Failed retry=0 repeat=1 tag-ok=true",
	})
	equal(t, "error message", hs[0].Message, "HTTP/1.1 502 Bad Gateway\nanswer from /error")

	occurrence(t0.Add(2 * time.Minute))
	got = e.job(j.ID)
	equal(t, "state after two faulted occurrences in a row", got.State, "Faulted")
	equal(t, "next", got.Status.NextExecutionTime, time.Time{})
	equal(t, "counters", [3]int{got.Status.ExecutionCount, got.Status.FailureCount, got.Status.FaultedCount}, [3]int{2, 2, 2})
	e.quiet(time.Time{}) // nothing scheduled any more
	e.clock.Set(t0.Add(10 * time.Minute))
	tg.noHit(t)
	equal(t, "faulted executions", metricValue(t, e.reg, "scheduler_executions_total", "faulted"), 2.0)
}

func TestErrorActionSucceedsAfterMainFails(t *testing.T) {
	tg := newTarget(t)
	tg.answer("/main", http.StatusNotFound)
	e := newEnv(t, t0, nil)
	props := wire.JobProperties{StartTime: t0.Add(time.Minute).Format(time.RFC3339), Action: httpAction(tg.URL + "/main")}
	props.Action.RetryPolicy = &wire.RetryPolicy{RetryType: "None"}
	props.Action.ErrorAction = &wire.JobErrorAction{Type: "Http", Request: &wire.HTTPRequest{URI: tg.URL + "/error", Method: "POST"}}
	j := e.putJob("one-shot", props, "Enabled")
	e.start()
	e.clock.Set(t0.Add(time.Minute))
	equal(t, "main", tg.next(t).Path, "/main")
	e.record()
	equal(t, "error action", tg.next(t).Path, "/error")
	e.record()
	got := e.job(j.ID)
	equal(t, "one-shot job after its only execution", got.State, "Completed")
	equal(t, "counters", [3]int{got.Status.ExecutionCount, got.Status.FailureCount, got.Status.FaultedCount}, [3]int{1, 1, 0})
	equal(t, "failed executions", metricValue(t, e.reg, "scheduler_executions_total", "failed"), 1.0)
}

func TestMisfiredOccurrencesAreCoalesced(t *testing.T) {
	tg := newTarget(t)
	e := newEnv(t, t0, nil)
	props := everyMinute(t0)
	props.Action = httpAction(tg.URL + "/m")
	j := e.putJob("late", props, "Enabled") // next = t0
	// The daemon was down for 10.5 minutes.
	e.clock.Set(t0.Add(10*time.Minute + 30*time.Second))
	e.start()
	h := tg.next(t)
	equal(t, "expected time of the coalesced execution", h.Header.Get("x-ms-scheduler-expected-execution-time"), "2026-06-01T09:10:00Z")
	e.record()
	hs := e.history(j)
	if len(hs) != 1 {
		t.Fatalf("%d history entries, want 1", len(hs))
	}
	equal(t, "message", hs[0].Message,
		"10 missed occurrence(s) before 2026-06-01T09:10:00Z were coalesced into this execution (misfire threshold 1m0s).\nHTTP/1.1 200 OK\nanswer from /m")
	got := e.job(j.ID)
	equal(t, "status", got.Status, store.JobStatus{ExecutionCount: 1, LastExecutionTime: t0.Add(10*time.Minute + 30*time.Second),
		NextExecutionTime: t0.Add(11 * time.Minute)})
	e.quiet(t0.Add(11*time.Minute - lookahead)) // the coalesced ones are not run one by one
	tg.noHit(t)
}

func TestLateWithinThresholdCatchesUpEachOccurrence(t *testing.T) {
	tg := newTarget(t)
	e := newEnv(t, t0, func(c *dispatch.Config) { c.MisfireThreshold = 5 * time.Minute })
	props := everyMinute(t0)
	props.Action = httpAction(tg.URL + "/m")
	e.putJob("late", props, "Enabled")
	e.clock.Set(t0.Add(2*time.Minute + 30*time.Second))
	e.start()
	var got []string
	for range 3 {
		got = append(got, tg.next(t).Header.Get("x-ms-scheduler-expected-execution-time"))
	}
	sort.Strings(got) // attempts run in parallel
	equal(t, "each occurrence runs", got, []string{"2026-06-01T09:00:00Z", "2026-06-01T09:01:00Z", "2026-06-01T09:02:00Z"})
	e.quiet(t0.Add(3*time.Minute - lookahead)) // the next is not due yet
	tg.noHit(t)
}

func TestResumesClaimedExecutionsWithTheSameTag(t *testing.T) {
	tg := newTarget(t)
	e := newEnv(t, t0, nil)
	props := everyMinute(t0.Add(time.Hour))
	props.Action = httpAction(tg.URL + "/r")
	j := e.putJob("resumed", props, "Enabled")
	ctx := t.Context()
	// A previous process claimed two occurrences and died: one before its first attempt, one
	// waiting for a retry due at t0+30s.
	res, err := e.store.ExecutionClaimMany(ctx, store.ExecutionClaimManyParams{Now: t0, Claims: []store.ExecutionClaim{
		{ExpectVersion: j.Version, NextExecutionTime: t0.Add(time.Hour), Execution: store.Execution{
			JobID: j.ID, Tag: "tag-before-crash", Scheduled: t0.Add(-time.Minute), Phase: "MainAction", DueAt: t0.Add(-time.Minute), ClaimedAt: t0}},
		{Execution: store.Execution{JobID: j.ID, Tag: "tag-retrying", Scheduled: t0.Add(-2 * time.Minute), Manual: true,
			Phase: "MainAction", DueAt: t0.Add(-2 * time.Minute), ClaimedAt: t0}},
	}})
	if err != nil || res[0].Err != nil || res[1].Err != nil {
		t.Fatalf("claims: %v %+v", err, res)
	}
	x2 := res[1].Execution
	if _, err := e.store.AttemptRecordMany(ctx, store.AttemptRecordManyParams{Now: t0, Records: []store.AttemptRecord{{
		ExecutionID: x2.ID, JobID: j.ID, Next: t0.Add(30 * time.Second), Phase: "MainAction", Attempt: 1,
		History: store.HistoryEntry{ExecutionTag: x2.Tag, ActionName: "MainAction", Status: "Failed", Message: "HTTP/1.1 500", RepeatCount: 2,
			StartTime: t0, EndTime: t0},
	}}}); err != nil {
		t.Fatal(err)
	}

	e.start()
	h := tg.next(t)
	equal(t, "resumed tag", h.Header.Get("x-ms-execution-tag"), "tag-before-crash")
	equal(t, "resumed expected time", h.Header.Get("x-ms-scheduler-expected-execution-time"), "2026-06-01T08:59:00Z")
	r := e.record()
	equal(t, "resumed record", [2]any{r.History.ExecutionTag, r.History.RepeatCount}, [2]any{"tag-before-crash", 1})
	e.quiet(t0.Add(30 * time.Second)) // the retry is not due before t0+30s
	tg.noHit(t)
	e.clock.Set(t0.Add(30 * time.Second))
	h = tg.next(t)
	equal(t, "retried tag", h.Header.Get("x-ms-execution-tag"), "tag-retrying")
	r = e.record()
	equal(t, "retry count of the resumed retry", r.History.RetryCount, 1)
	equal(t, "unfinished executions", len(e.unfinished()), 0)
	equal(t, "history entries", len(e.history(j)), 3)
}

func TestRunNowOnADisabledJob(t *testing.T) {
	tg := newTarget(t)
	e := newEnv(t, t0, nil)
	props := everyMinute(t0.Add(time.Minute))
	props.Action = httpAction(tg.URL + "/now")
	j := e.putJob("manual", props, "Disabled")
	e.start()
	if err := e.disp.RunNow(t.Context(), j); err != nil {
		t.Fatal(err)
	}
	h := tg.next(t)
	equal(t, "expected time of a manual run", h.Header.Get("x-ms-scheduler-expected-execution-time"), "2026-06-01T09:00:00Z")
	e.record()
	got := e.job(j.ID)
	equal(t, "state", got.State, "Disabled")
	equal(t, "status", got.Status, store.JobStatus{ExecutionCount: 1, LastExecutionTime: t0})
	// Disabled: the schedule itself does not fire.
	e.quiet(time.Time{})
	e.clock.Set(t0.Add(5 * time.Minute))
	tg.noHit(t)

	err := e.disp.RunNow(t.Context(), &store.Job{ID: j.ID + 100, Properties: j.Properties})
	if !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("RunNow of an absent job: %v, want ErrNotFound", err)
	}
}

// TestAManualRunInFlightOnOneReplicaIsRefusedOnAnother: a job runs on request once at a time
// across replicas: while replica a's manual run hangs on its target, replica b (another
// dispatcher on the same store, with its own memory) is refused, naming the run's tag.
func TestAManualRunInFlightOnOneReplicaIsRefusedOnAnother(t *testing.T) {
	hang, tags := make(chan struct{}), make(chan string, 10)
	tg := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tags <- r.Header.Get("x-ms-execution-tag")
		<-hang
	}))
	t.Cleanup(tg.Close)
	defer close(hang) // before tg.Close (a cleanup): the hanging request returns
	executor := func(owner string) func(*dispatch.Config) {
		return func(c *dispatch.Config) { c.Owner = owner }
	}
	a := newEnv(t, t0, executor("a"))
	props := everyMinute(t0.Add(time.Hour))
	props.Action = httpAction(tg.URL + "/manual")
	j := a.putJob("manual", props, "Enabled")
	a.start()
	b := &env{t: t, store: a.store, box: a.box, clock: a.clock, records: make(chan store.AttemptRecord, 10), coll: a.coll, cfg: a.cfg}
	executor("b")(&b.cfg)
	b.cfg.OnRecord = func(r store.AttemptRecord, _ store.AttemptRecordResult) { b.records <- r }
	b.start()

	if err := a.exec.RunNow(t.Context(), j); err != nil {
		t.Fatal(err)
	}
	var tag string
	select {
	case tag = <-tags:
	case <-time.After(wait):
		t.Fatal("the manual run did not reach its target")
	}
	err := b.exec.RunNow(t.Context(), j)
	var inFlight interface{ InFlightTag() string }
	if !errors.As(err, &inFlight) || inFlight.InFlightTag() != tag {
		t.Fatalf("manual run on replica b while a's (%s) is in flight: %v, want refused naming it", tag, err)
	}
	equal(t, "runs counted", a.job(j.ID).Status.ExecutionCount, 1)
}

func TestCountCompletesTheJob(t *testing.T) {
	tg := newTarget(t)
	e := newEnv(t, t0, nil)
	props := everyMinute(t0.Add(time.Minute))
	props.Recurrence.Count = intp(2)
	props.Action = httpAction(tg.URL + "/c")
	j := e.putJob("twice", props, "Enabled")
	e.start()
	for i := 1; i <= 2; i++ {
		e.clock.Set(t0.Add(time.Duration(i) * time.Minute))
		tg.next(t)
		e.record()
	}
	got := e.job(j.ID)
	equal(t, "state", got.State, "Completed")
	equal(t, "status", got.Status, store.JobStatus{ExecutionCount: 2, LastExecutionTime: t0.Add(2 * time.Minute)})
	e.quiet(time.Time{})
	e.clock.Set(t0.Add(10 * time.Minute))
	tg.noHit(t)
}

func TestDisabledCollectionDoesNotFire(t *testing.T) {
	tg := newTarget(t)
	e := newEnv(t, t0, nil)
	props := everyMinute(t0.Add(time.Minute))
	props.Action = httpAction(tg.URL + "/coll")
	j := e.putJob("j", props, "Enabled")
	e.start()
	setState := func(state string, next time.Time) {
		t.Helper()
		c := *e.coll
		c.Properties.State = state
		stored, _, err := e.store.CollectionPut(t.Context(), store.CollectionPutParams{Collection: c, Now: e.clock.Now()})
		if err != nil {
			t.Fatal(err)
		}
		e.coll = stored
		e.disp.CollectionChanged(stored.ID)
		e.quiet(next)
	}
	setState("Suspended", time.Time{})
	e.clock.Set(t0.Add(90 * time.Second))
	tg.noHit(t)

	// Enabling resumes from the next candidate after now (as the API computes it).
	cur := e.job(j.ID)
	cur.Status.NextExecutionTime = t0.Add(2 * time.Minute)
	if _, _, err := e.store.JobPut(t.Context(), store.JobPutParams{Job: *cur, ExpectVersion: cur.Version, Now: e.clock.Now()}); err != nil {
		t.Fatal(err)
	}
	setState("Enabled", t0.Add(2*time.Minute-lookahead))
	tg.noHit(t)
	e.clock.Set(t0.Add(2 * time.Minute))
	equal(t, "after enable", tg.next(t).Header.Get("x-ms-scheduler-expected-execution-time"), "2026-06-01T09:02:00Z")
}

func TestJobChangedTakesTheNewDefinition(t *testing.T) {
	tg := newTarget(t)
	e := newEnv(t, t0, nil)
	props := everyMinute(t0.Add(time.Minute))
	props.Action = httpAction(tg.URL + "/old")
	e.putJob("j", props, "Enabled")
	e.start()
	props.Action = httpAction(tg.URL + "/new")
	e.clock.Set(t0.Add(30 * time.Second))
	e.putJob("j", props, "Enabled") // replaces and calls JobChanged
	e.clock.Set(t0.Add(time.Minute))
	equal(t, "path after the update", tg.next(t).Path, "/new")
	e.record()

	// Disabling stops it.
	e.putJob("j", props, "Disabled")
	e.quiet(time.Time{})
	e.clock.Set(t0.Add(5 * time.Minute))
	tg.noHit(t)
}

func TestSecretsAreOpenedOnlyForTheAttempt(t *testing.T) {
	tg := newTarget(t)
	e := newEnv(t, t0, nil)
	props := everyMinute(t0.Add(time.Minute))
	props.Action = httpAction(tg.URL + "/auth")
	props.Action.Request.Authentication = &wire.HTTPAuthentication{Type: "Basic", Username: "bob", Password: "hunter2"}
	j := e.putJob("auth", props, "Enabled")
	stored := e.job(j.ID).Properties.Action.Request.Authentication.Password
	if !secret.IsSealed(stored) || strings.Contains(stored, "hunter2") {
		t.Fatalf("stored password %q is not sealed", stored)
	}
	e.start()
	e.clock.Set(t0.Add(time.Minute))
	h := tg.next(t)
	equal(t, "Authorization", h.Header.Get("Authorization"), "Basic "+base64.StdEncoding.EncodeToString([]byte("bob:hunter2")))
	e.record()
	if got := e.job(j.ID).Properties.Action.Request.Authentication.Password; got != stored {
		t.Fatalf("stored password changed to %q", got)
	}
}

func TestShutdownWaitsForRunningAttempts(t *testing.T) {
	tg := newTarget(t)
	block := make(chan struct{})
	tg.block = block
	e := newEnv(t, t0, nil)
	props := everyMinute(t0.Add(time.Minute))
	props.Action = httpAction(tg.URL + "/slow")
	j := e.putJob("slow", props, "Enabled")
	e.start()
	e.clock.Set(t0.Add(time.Minute))
	tg.next(t) // the attempt is running

	e.cancel()
	select {
	case err := <-e.done:
		t.Fatalf("Run returned (%v) while an attempt was running", err)
	case <-time.After(50 * time.Millisecond):
	}
	close(block)
	select {
	case err := <-e.done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(wait):
		t.Fatal("Run did not return")
	}
	e.cancel = nil
	hs := e.history(j)
	equal(t, "recorded before Run returned", len(hs), 1)
	equal(t, "unfinished executions", len(e.unfinished()), 0)
}

func TestShutdownGraceCutsAttemptsShortAndKeepsTheClaim(t *testing.T) {
	tg := newTarget(t)
	block := make(chan struct{})
	defer close(block)
	tg.block = block
	e := newEnv(t, t0, func(c *dispatch.Config) { c.ShutdownGrace = 5 * time.Second })
	props := everyMinute(t0.Add(time.Minute))
	props.Action = httpAction(tg.URL + "/stuck")
	j := e.putJob("stuck", props, "Enabled")
	e.start()
	e.clock.Set(t0.Add(time.Minute))
	tag := tg.next(t).Header.Get("x-ms-execution-tag")
	e.cancel()
	e.cancel = nil
	for {
		e.clock.Advance(5 * time.Second)
		select {
		case err := <-e.done:
			if err != nil {
				t.Fatal(err)
			}
			equal(t, "history of the cut attempt", len(e.history(j)), 0)
			xs := e.unfinished()
			equal(t, "claimed execution kept", len(xs), 1)
			equal(t, "its tag", xs[0].Tag, tag)
			return
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func TestScheduleChangeAtTheSameInstantRecompilesTheRule(t *testing.T) {
	tg := newTarget(t)
	e := newEnv(t, t0, nil)
	props := everyMinute(t0.Add(time.Minute))
	props.Action = httpAction(tg.URL + "/s")
	j := e.putJob("j", props, "Enabled")
	e.start()
	hourly := wire.JobProperties{
		StartTime:  t0.Add(2 * time.Minute).Format(time.RFC3339),
		Recurrence: &wire.JobRecurrence{Frequency: "Hour", Interval: intp(1)},
		Action:     httpAction(tg.URL + "/s"),
	}
	e.putJob("j", hourly, "Enabled") // same clock instant as the creation
	e.clock.Set(t0.Add(2 * time.Minute))
	equal(t, "first of the new schedule", tg.next(t).Header.Get("x-ms-scheduler-expected-execution-time"), "2026-06-01T09:02:00Z")
	e.record()
	equal(t, "next from the new rule", e.job(j.ID).Status.NextExecutionTime, t0.Add(time.Hour+2*time.Minute))
}

func TestClaimsAheadButStartsWhenDue(t *testing.T) {
	tg := newTarget(t)
	e := newEnv(t, t0, nil) // Lookahead 500 ms
	props := everyMinute(t0.Add(time.Minute))
	props.Action = httpAction(tg.URL + "/ahead")
	j := e.putJob("j", props, "Enabled")
	e.start()
	e.clock.Set(t0.Add(time.Minute - 400*time.Millisecond))
	x := e.claimed()
	equal(t, "claimed execution", [3]any{x.Scheduled, x.DueAt, x.ClaimedAt}, [3]any{t0.Add(time.Minute), t0.Add(time.Minute), t0.Add(time.Minute - 400*time.Millisecond)})
	equal(t, "next advanced by the claim", e.job(j.ID).Status.NextExecutionTime, t0.Add(2*time.Minute))
	equal(t, "last execution: when the attempt starts, not when it was claimed", e.job(j.ID).Status.LastExecutionTime, t0.Add(time.Minute))
	e.quiet(t0.Add(time.Minute)) // claimed, held until due
	tg.noHit(t)
	e.clock.Set(t0.Add(time.Minute))
	h := tg.next(t)
	equal(t, "tag of the claimed execution", h.Header.Get("x-ms-execution-tag"), x.Tag)
	r := e.record()
	equal(t, "attempt start", r.History.StartTime, t0.Add(time.Minute))
}

// TestASlowAttemptHoldsBackOtherRecordsAtMostAQuarterSecond: records wait while attempts are
// under way (the rest of a burst), but a slow target holds back the others' records for 250 ms
// at most.
func TestASlowAttemptHoldsBackOtherRecordsAtMostAQuarterSecond(t *testing.T) {
	tg := newTarget(t)
	release := make(chan struct{})
	tg.blockPath = map[string]chan struct{}{"/slow": release}
	var once sync.Once
	unblock := func() { once.Do(func() { close(release) }) }
	defer unblock()
	e := newEnv(t, t0, func(c *dispatch.Config) { c.TargetConcurrency = 2 }) // both on one target
	e.start()
	for _, name := range []string{"slow", "quick"} {
		p := everyMinute(t0.Add(time.Minute))
		p.Action = httpAction(tg.URL + "/" + name)
		e.putJob(name, p, store.JobStateEnabled)
	}
	e.quiet(t0.Add(time.Minute - lookahead))
	e.clock.Advance(time.Minute)
	got := map[string]bool{tg.next(t).Path: true, tg.next(t).Path: true}
	equal(t, "requests", got, map[string]bool{"/slow": true, "/quick": true})

	// The clock moves 10 ms at a time: the quick record is committed 250 ms after it was made.
	var advanced time.Duration
	for {
		select {
		case r := <-e.records:
			equal(t, "the record committed while the slow attempt runs", strings.Contains(r.History.Message, "answer from /quick"), true)
			if advanced < 250*time.Millisecond || advanced > time.Second {
				t.Fatalf("the quick record was committed %s after the attempts started, want 250 ms to 1 s", advanced)
			}
			unblock()
			r = e.record()
			equal(t, "the slow record, once its attempt ends", strings.Contains(r.History.Message, "answer from /slow"), true)
			return
		case <-time.After(20 * time.Millisecond):
		}
		if advanced > 2*time.Second {
			t.Fatal("the quick record was not committed")
		}
		e.clock.Advance(10 * time.Millisecond)
		advanced += 10 * time.Millisecond
	}
}

// TestAChangeCancelsAnOccurrenceClaimedAhead: an occurrence claimed ahead that has not started
// is cancelled by a change of its job (here one that keeps it due at the same time): it never
// runs, its execution is gone and it does not count; the occurrence runs once, as changed.
func TestAChangeCancelsAnOccurrenceClaimedAhead(t *testing.T) {
	tg := newTarget(t)
	e := newEnv(t, t0, func(c *dispatch.Config) { c.Workers = 1 }) // Lookahead 500 ms
	props := everyMinute(t0.Add(time.Minute))
	props.Action = httpAction(tg.URL + "/old")
	e.putJob("j", props, "Enabled")
	e.start()
	e.clock.Set(t0.Add(time.Minute - 400*time.Millisecond))
	claimed := e.claimed()
	// The update, as the API makes it: status kept, scheduled at the claimed occurrence again.
	j := e.job(claimed.JobID)
	j.Properties.Action = httpAction(tg.URL + "/new")
	j.Status.NextExecutionTime = t0.Add(time.Minute)
	if _, _, err := e.store.JobPut(t.Context(), store.JobPutParams{Job: *j, ExpectVersion: j.Version, Now: e.clock.Now()}); err != nil {
		t.Fatal(err)
	}
	e.disp.JobChanged(j.ID)
	if _, err := e.disp.TestSignals.Cancelled.Wait(wait, func(c dispatch.Cancelled) bool { return c.Tag == claimed.Tag }); err != nil {
		t.Fatal(err)
	}
	// Claimed again, as changed, and held until due: a quiet moment once the new claim is stored
	// (a quiet sent before the cancellation, or before the new claim, does not end the wait; the
	// new claim's own can come before the test looks, so none is drained).
	for {
		e.quiet(t0.Add(time.Minute))
		if xs := e.unfinished(); len(xs) == 1 && xs[0].Tag != claimed.Tag {
			break
		}
	}
	e.clock.Set(t0.Add(time.Minute))
	h := tg.next(t)
	equal(t, "the occurrence, as changed", h.Path, "/new")
	if h.Header.Get("x-ms-execution-tag") == claimed.Tag {
		t.Fatal("the occurrence claimed before the change ran")
	}
	r := e.record()
	equal(t, "record", [2]any{r.History.ExpectedExecutionTime, r.History.RepeatCount}, [2]any{t0.Add(time.Minute), 1})
	// The next occurrence (one worker: after the cancelled one, had it run) is the only other.
	e.clock.Set(t0.Add(2 * time.Minute))
	equal(t, "next request", tg.next(t).Path, "/new")
	e.record()
	equal(t, "requests", len(tg.hits), 0)
	equal(t, "history entries", len(e.history(j)), 2)
	equal(t, "unfinished executions", len(e.unfinished()), 0)
	equal(t, "executions", e.job(j.ID).Status.ExecutionCount, 2)
}

// TestAStartTimeFinerThanAMicrosecondFiresOnce: a one-shot job whose startTime has seven
// fractional digits (as .NET's Azure SDK writes it) fires once, on either store. PostgreSQL keeps
// the next execution time to the microsecond: the loop took that earlier instant for an
// occurrence of its own, and then fired again at the startTime itself.
func TestAStartTimeFinerThanAMicrosecondFiresOnce(t *testing.T) {
	tg := newTarget(t)
	e := newEnv(t, t0, nil)
	due := t0.Add(time.Minute + 123456700*time.Nanosecond)
	j := e.putJob("seven-digits", wire.JobProperties{StartTime: "2026-06-01T09:01:00.1234567Z", Action: httpAction(tg.URL + "/once")}, "Enabled")
	equal(t, "due", due.Format(time.RFC3339Nano), "2026-06-01T09:01:00.1234567Z")
	e.start()
	e.clock.Set(due.Add(time.Second))
	equal(t, "request", tg.next(t).Path, "/once")
	for e.job(j.ID).State != store.JobStateCompleted {
		e.record() // one per execution: fails the test when none comes
	}
	got := e.job(j.ID)
	equal(t, "executions", got.Status.ExecutionCount, 1)
	equal(t, "history", len(e.history(got)), 1)
	equal(t, "requests", len(tg.hits), 0)
}
