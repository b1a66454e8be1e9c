package dispatch_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/dispatch"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store/testdb"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/jobstate"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"
)

// hourly is a Disabled job every hour from t0 (nothing scheduled: only the backfill runs).
func (e *env) hourly(name, uri string) *store.Job {
	e.t.Helper()
	props := wire.JobProperties{
		StartTime:  t0.Format(time.RFC3339),
		Recurrence: &wire.JobRecurrence{Frequency: "Hour", Interval: intp(1)},
		Action:     httpAction(uri),
	}
	return e.putJob(name, props, store.JobStateDisabled)
}

// hours are t0 and the n-1 hours after it.
func hours(n int) []time.Time {
	out := make([]time.Time, n)
	for i := range out {
		out[i] = t0.Add(time.Duration(i) * time.Hour)
	}
	return out
}

// stored lists the job's unfinished executions as "tag due-or-waiting".
func storedBackfill(e *env) (tags []string, waiting int) {
	for _, x := range e.unfinished() {
		tags = append(tags, x.Tag)
		if x.DueAt.Equal(store.BackfillWaiting) {
			waiting++
		}
	}
	return tags, waiting
}

// A backfill runs each occurrence as its own execution with its own tag and the occurrence as
// its expected time, one after the other, oldest first (the target's lane would let four run at
// once); a second backfill while it is unfinished is refused naming its first tag.
func TestBackfillRunsOneAfterTheOtherInOrder(t *testing.T) {
	tg := newTarget(t)
	release := make(chan struct{})
	tg.blockPath = map[string]chan struct{}{"/b": release}
	e := newEnv(t, t0.Add(5*time.Hour+30*time.Minute), func(c *dispatch.Config) { c.TargetConcurrency = 4 })
	j := e.hourly("b", tg.URL+"/b")
	e.start()
	if err := e.disp.Backfill(t.Context(), j.ID, hours(5)); err != nil {
		t.Fatal(err)
	}
	first := tg.next(t)
	equal(t, "first expected time", first.Header.Get("x-ms-scheduler-expected-execution-time"), "2026-06-01T09:00:00Z")
	tags, waiting := storedBackfill(e)
	equal(t, "stored while the first runs: five, four waiting", []int{len(tags), waiting}, []int{5, 4})
	equal(t, "the first's tag", first.Header.Get("x-ms-execution-tag"), tags[0])

	err := e.disp.Backfill(t.Context(), j.ID, hours(2))
	var inFlight *store.BackfillInFlightError
	if !errors.As(err, &inFlight) || inFlight.Tag != tags[0] {
		t.Fatalf("second backfill: %v, want a backfill in flight naming %s", err, tags[0])
	}

	close(release)
	got := []string{first.Header.Get("x-ms-scheduler-expected-execution-time")}
	gotTags := []string{first.Header.Get("x-ms-execution-tag")}
	for range 4 {
		h := tg.next(t)
		got = append(got, h.Header.Get("x-ms-scheduler-expected-execution-time"))
		gotTags = append(gotTags, h.Header.Get("x-ms-execution-tag"))
	}
	equal(t, "expected times, in order", got, []string{
		"2026-06-01T09:00:00Z", "2026-06-01T10:00:00Z", "2026-06-01T11:00:00Z", "2026-06-01T12:00:00Z", "2026-06-01T13:00:00Z"})
	equal(t, "tags, in order", gotTags, tags)
	for range 5 {
		e.record()
	}
	e.quiet(time.Time{})
	tg.noHit(t)
	equal(t, "unfinished", len(e.unfinished()), 0)
	hs := e.history(j)
	var statuses []string
	for _, h := range hs {
		statuses = append(statuses, h.Status+" "+h.ExpectedExecutionTime.Format(time.RFC3339))
	}
	equal(t, "history, newest first", statuses, []string{"Completed 2026-06-01T13:00:00Z", "Completed 2026-06-01T12:00:00Z",
		"Completed 2026-06-01T11:00:00Z", "Completed 2026-06-01T10:00:00Z", "Completed 2026-06-01T09:00:00Z"})
	got2 := e.job(j.ID)
	equal(t, "job after", []any{got2.State, got2.Status.ExecutionCount, got2.Status.NextExecutionTime.IsZero()},
		[]any{store.JobStateDisabled, 5, true})
	if err := e.disp.Backfill(t.Context(), j.ID, hours(1)); err != nil {
		t.Fatalf("a backfill once the first one finished: %v", err)
	}
	equal(t, "its one execution", tg.next(t).Header.Get("x-ms-scheduler-expected-execution-time"), "2026-06-01T09:00:00Z")
	e.record()
}

// A daemon stopped in the middle of a backfill carries on where it was when it starts again:
// the execution cut short by the stop runs again with its tag (at least once), then the rest, in
// order; none runs twice otherwise.
func TestBackfillCarriesOnAfterARestart(t *testing.T) {
	third := t0.Add(2 * time.Hour).Format(time.RFC3339)
	hold := make(chan struct{})
	hits := make(chan http.Header, 16)
	var held atomic.Bool
	held.Store(true)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits <- r.Header.Clone()
		if r.Header.Get("x-ms-scheduler-expected-execution-time") == third && held.Load() {
			<-hold
		}
		w.WriteHeader(http.StatusOK)
	}))
	defer srv.Close()
	defer close(hold)
	next := func() http.Header {
		t.Helper()
		select {
		case h := <-hits:
			return h
		case <-time.After(wait):
			t.Fatal("no request reached the target")
			return nil
		}
	}
	e := newEnv(t, t0.Add(5*time.Hour+30*time.Minute), nil)
	j := e.hourly("r", srv.URL+"/r")
	e.start()
	if err := e.disp.Backfill(t.Context(), j.ID, hours(5)); err != nil {
		t.Fatal(err)
	}
	var got, tags []string
	for range 3 {
		h := next()
		got = append(got, h.Get("x-ms-scheduler-expected-execution-time"))
		tags = append(tags, h.Get("x-ms-execution-tag"))
	}
	e.record()
	e.record()
	// Stop with the third attempt under way: it is cut short when the grace period ends.
	stopped := make(chan struct{})
	go func() {
		e.stop()
		close(stopped)
	}()
	for done := false; !done; {
		select {
		case <-stopped:
			done = true
		case <-e.clock.TimerCreated():
			e.clock.Advance(dispatch.DefaultShutdownGrace)
		case <-time.After(wait):
			t.Fatal("the dispatcher did not stop")
		}
	}
	storedTags, waiting := storedBackfill(e)
	equal(t, "stored after the stop: the third and two waiting", []int{len(storedTags), waiting}, []int{3, 2})
	equal(t, "the third is stored with its tag", storedTags[0], tags[2])

	held.Store(false)
	e.start()
	for range 3 {
		h := next()
		got = append(got, h.Get("x-ms-scheduler-expected-execution-time"))
		tags = append(tags, h.Get("x-ms-execution-tag"))
	}
	for range 3 {
		e.record()
	}
	e.quiet(time.Time{})
	equal(t, "expected times: the third again after the restart, then the rest", got, []string{
		"2026-06-01T09:00:00Z", "2026-06-01T10:00:00Z", "2026-06-01T11:00:00Z",
		"2026-06-01T11:00:00Z", "2026-06-01T12:00:00Z", "2026-06-01T13:00:00Z"})
	equal(t, "the third's tag is kept", tags[3], tags[2])
	equal(t, "history entries", len(e.history(j)), 5)
	equal(t, "unfinished", len(e.unfinished()), 0)
	equal(t, "execution count", e.job(j.ID).Status.ExecutionCount, 5)
}

// A backfill meets the job's overlap policy like any execution: an occurrence that falls due
// while one of the backfill's executions runs is skipped naming its tag (Skip), or waits until
// the whole backfill has ended and then runs (BufferOne); the backfill itself goes on, in order.
func TestBackfillMeetsTheOverlapPolicy(t *testing.T) {
	for _, policy := range []string{jobstate.OverlapSkip, jobstate.OverlapBufferOne} {
		t.Run(policy, func(t *testing.T) {
			tg := newTarget(t)
			release := make(chan struct{})
			tg.blockPath = map[string]chan struct{}{"/o": release}
			e := newEnv(t, t0.Add(10*time.Minute+30*time.Second), func(c *dispatch.Config) { c.TargetConcurrency = c.Workers })
			props := everyMinute(t0)
			props.Action = httpAction(tg.URL + "/o")
			props.Overlap = policy
			j := e.putJob("o", props, store.JobStateEnabled)
			e.start()
			if err := e.disp.Backfill(t.Context(), j.ID, []time.Time{t0, at(1), at(2)}); err != nil {
				t.Fatal(err)
			}
			first := tg.next(t)
			bfTag := first.Header.Get("x-ms-execution-tag")
			e.clock.Set(at(11)) // the scheduled 09:11 falls due while the backfill's 09:00 runs
			if policy == jobstate.OverlapSkip {
				e.waitSkipped(&e.disp.TestSignals, j.ID, at(11))
			} else if _, err := e.disp.TestSignals.Buffered.Wait(wait, func(b dispatch.Buffered) bool { return b.Scheduled.Equal(at(11)) }); err != nil {
				t.Fatal(err)
			}
			close(release)
			got := []string{first.Header.Get("x-ms-scheduler-expected-execution-time")}
			n := 2
			if policy == jobstate.OverlapBufferOne {
				n = 3
			}
			for range n {
				got = append(got, tg.next(t).Header.Get("x-ms-scheduler-expected-execution-time"))
			}
			for range n + 1 {
				e.record()
			}
			want := []string{"2026-06-01T09:00:00Z", "2026-06-01T09:01:00Z", "2026-06-01T09:02:00Z"}
			lines := []string{"Completed 09:00", "Completed 09:01", "Completed 09:02", "Skipped 09:11"}
			if policy == jobstate.OverlapBufferOne {
				want = append(want, "2026-06-01T09:11:00Z")
				lines[3] = "Completed 09:11"
			}
			equal(t, "requests, in order", got, want)
			e.quiet(at(12)) // a job with an overlap policy is claimed when due, not ahead
			hs, skipped := summary(e.history(j))
			equal(t, "history", hs, lines)
			if policy == jobstate.OverlapSkip {
				equal(t, "the skip names the backfill's running execution", skipped, []string{jobstate.OverlapSkippedMessage(policy, bfTag)})
			}
			equal(t, "nothing left", len(e.unfinished()), 0)
		})
	}
}

// With replicas (two executors on one PostgreSQL store), a backfill asked of one runs one
// execution after the other, in order, whichever replica takes each: the record that ends one
// makes the next due, and an executor takes it.
func TestBackfillAcrossReplicas(t *testing.T) {
	st := testdb.Postgres(t)
	tg := newTarget(t)
	e := newEnvOn(t, st, t0.Add(5*time.Hour+30*time.Minute), nil)
	j := e.hourly("r", tg.URL+"/r")
	_, executors := e.replicas(0, time.Hour)
	xs, err := executors[1].Backfill(t.Context(), j.ID, hours(4))
	if err != nil {
		t.Fatal(err)
	}
	var got, tags []string
	for range 4 {
		h := tg.next(t)
		got = append(got, h.Header.Get("x-ms-scheduler-expected-execution-time"))
		tags = append(tags, h.Header.Get("x-ms-execution-tag"))
		r := e.record()
		equal(t, "recorded by the replica that ran it", r.Owner, h.Header.Get("x-ms-scheduler-execution-region"))
	}
	equal(t, "expected times, in order", got, []string{"2026-06-01T09:00:00Z", "2026-06-01T10:00:00Z", "2026-06-01T11:00:00Z", "2026-06-01T12:00:00Z"})
	want := make([]string, len(xs))
	for i, x := range xs {
		want[i] = x.Tag
	}
	equal(t, "tags, in order", tags, want)
	equal(t, "history entries", len(e.history(j)), 4)
	equal(t, "nothing left", len(e.unfinished()), 0)
}

// loadGate is a store whose first read of the unfinished executions (a starting dispatcher's
// load) waits for release, and that says when a backfill or a manual run was stored.
type loadGate struct {
	store.Driver
	entered, release, stored chan struct{}
	first, once              sync.Once
}

func newLoadGate(st store.Driver) *loadGate {
	return &loadGate{Driver: st, entered: make(chan struct{}), release: make(chan struct{}), stored: make(chan struct{})}
}

func (g *loadGate) ExecutionListUnfinished(ctx context.Context, p store.ExecutionListUnfinishedParams) ([]*store.Execution, error) {
	first := false
	g.first.Do(func() { first = true })
	if first {
		close(g.entered)
		<-g.release
	}
	return g.Driver.ExecutionListUnfinished(ctx, p)
}

func (g *loadGate) ExecutionBackfill(ctx context.Context, p store.ExecutionBackfillParams) (*store.ExecutionBackfillResult, error) {
	res, err := g.Driver.ExecutionBackfill(ctx, p)
	g.once.Do(func() { close(g.stored) })
	return res, err
}

func (g *loadGate) ExecutionClaimMany(ctx context.Context, p store.ExecutionClaimManyParams) ([]store.ExecutionClaimResult, error) {
	res, err := g.Driver.ExecutionClaimMany(ctx, p)
	g.once.Do(func() { close(g.stored) })
	return res, err
}

// duringTheLoad starts a dispatcher on gate, holds its load of the unfinished executions, runs
// handOver (a backfill or a run now) meanwhile and lets the load go on once handOver either
// stored its executions or waits for the load (AwaitsLoad); it returns handOver's error.
func duringTheLoad(t *testing.T, e *env, gate *loadGate, jobID int64, handOver func() error) error {
	t.Helper()
	e.launch()
	select {
	case <-gate.entered:
	case <-time.After(wait):
		t.Fatal("the dispatcher did not start loading")
	}
	errc := make(chan error, 1)
	go func() { errc <- handOver() }()
	awaits := make(chan error, 1)
	go func() {
		_, err := e.disp.TestSignals.AwaitsLoad.Wait(wait, func(id int64) bool { return id == jobID })
		awaits <- err
	}()
	select {
	case <-gate.stored:
	case err := <-awaits:
		if err != nil {
			t.Fatalf("the hand-over neither stored nor waited for the load: %v", err)
		}
	}
	close(gate.release)
	select {
	case err := <-errc:
		return err
	case <-time.After(wait):
		t.Fatal("the hand-over did not return")
		return nil
	}
}

// A backfill stored while a starting dispatcher loads the unfinished executions runs each of
// its executions once: it waits for the load before it stores anything (were it stored first,
// the load would read its first execution and the hand-over would run it a second time).
func TestBackfillStoredDuringTheStartRunsOnce(t *testing.T) {
	tg := newTarget(t)
	gate := newLoadGate(testdb.Open(t))
	e := newEnvOn(t, gate, t0.Add(3*time.Hour+30*time.Minute), nil)
	j := e.hourly("b", tg.URL+"/b")
	if err := duringTheLoad(t, e, gate, j.ID, func() error { return e.disp.Backfill(t.Context(), j.ID, hours(2)) }); err != nil {
		t.Fatal(err)
	}
	var got []string
	for range 2 {
		got = append(got, tg.next(t).Header.Get("x-ms-scheduler-expected-execution-time"))
		e.record()
	}
	equal(t, "expected times", got, []string{"2026-06-01T09:00:00Z", "2026-06-01T10:00:00Z"})
	e.quiet(time.Time{})
	tg.noHit(t)
	equal(t, "unfinished", len(e.unfinished()), 0)
	equal(t, "executions counted", e.job(j.ID).Status.ExecutionCount, 2)
}

// A run now stored while a starting dispatcher loads the unfinished executions runs once.
func TestRunNowDuringTheStartRunsOnce(t *testing.T) {
	tg := newTarget(t)
	gate := newLoadGate(testdb.Open(t))
	e := newEnvOn(t, gate, t0.Add(3*time.Hour+30*time.Minute), nil)
	j := e.hourly("r", tg.URL+"/r")
	if err := duringTheLoad(t, e, gate, j.ID, func() error { return e.disp.RunNow(t.Context(), j) }); err != nil {
		t.Fatal(err)
	}
	equal(t, "the run", tg.next(t).Path, "/r")
	e.record()
	e.quiet(time.Time{})
	tg.noHit(t)
	equal(t, "unfinished", len(e.unfinished()), 0)
	equal(t, "executions counted", e.job(j.ID).Status.ExecutionCount, 1)
}
