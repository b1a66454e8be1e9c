package dispatch_test

import (
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/dispatch"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store/testdb"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/jobstate"
)

// slowJob puts an every-minute job (first occurrence at t0+1m) under overlap policy policy whose
// target answers only once the returned release is called: slower than the job's period.
func slowJob(e *env, tg *target, name, policy string) (job *store.Job, release func()) {
	e.t.Helper()
	ch := make(chan struct{})
	var once sync.Once
	release = func() { once.Do(func() { close(ch) }) }
	e.t.Cleanup(release) // before the target closes
	tg.mu.Lock()
	if tg.blockPath == nil {
		tg.blockPath = map[string]chan struct{}{}
	}
	tg.blockPath["/"+name] = ch
	tg.mu.Unlock()
	props := everyMinute(t0.Add(time.Minute))
	props.Action = httpAction(tg.URL + "/" + name)
	props.Overlap = policy
	return e.putJob(name, props, "Enabled"), release
}

// newOverlapEnv is an env whose target takes as many attempts at once as the workers do, so that
// only the overlap policy keeps two executions of a job from running together.
func newOverlapEnv(t *testing.T, tweak func(*dispatch.Config)) *env {
	return newEnv(t, t0, func(c *dispatch.Config) {
		c.TargetConcurrency = c.Workers
		if tweak != nil {
			tweak(c)
		}
	})
}

// at is the job's occurrence n minutes after t0.
func at(n int) time.Time { return t0.Add(time.Duration(n) * time.Minute) }

// summary is a job's history as "status expected-time" lines, oldest expected time first, with
// the messages of the Skipped entries.
func summary(hs []*store.HistoryEntry) (lines, skipped []string) {
	sort.SliceStable(hs, func(i, j int) bool { return hs[i].ExpectedExecutionTime.Before(hs[j].ExpectedExecutionTime) })
	for _, h := range hs {
		lines = append(lines, h.Status+" "+h.ExpectedExecutionTime.UTC().Format("15:04"))
		if h.Status == store.HistorySkipped {
			skipped = append(skipped, h.Message)
		}
	}
	return lines, skipped
}

func (e *env) waitSkipped(sig *dispatch.TestSignals, jobID int64, scheduled time.Time) {
	e.t.Helper()
	if _, err := sig.Skipped.Wait(wait, func(s dispatch.Skipped) bool { return s.JobID == jobID && s.Scheduled.Equal(scheduled) }); err != nil {
		e.t.Fatalf("waiting for the occurrence at %s to be skipped: %v", scheduled, err)
	}
}

// Allow (the default) is Azure's behaviour: an occurrence due while the previous execution hangs
// runs anyway.
func TestOverlapAllowRunsWhileThePreviousRuns(t *testing.T) {
	tg := newTarget(t)
	e := newOverlapEnv(t, nil)
	j, release := slowJob(e, tg, "allow", "")
	e.start()
	e.quiet(at(1).Add(-lookahead))
	e.clock.Set(at(1))
	first := tg.next(t)
	e.clock.Set(at(2))
	second := tg.next(t) // while the first still waits for its answer
	release()
	e.record()
	e.record()
	equal(t, "expected times", []string{first.Header.Get("x-ms-scheduler-expected-execution-time"), second.Header.Get("x-ms-scheduler-expected-execution-time")},
		[]string{at(1).Format(time.RFC3339), at(2).Format(time.RFC3339)})
	lines, _ := summary(e.history(j))
	equal(t, "history", lines, []string{"Completed 09:01", "Completed 09:02"})
	equal(t, "executionCount", e.job(j.ID).Status.ExecutionCount, 2)
}

// Skip: the occurrences due while the previous execution hangs are skipped, each recorded as a
// Skipped entry naming the running execution's tag; they do not count; once it ended, the next
// occurrence runs.
func TestOverlapSkipRecordsTheSkippedOccurrences(t *testing.T) {
	tg := newTarget(t)
	e := newOverlapEnv(t, nil)
	j, release := slowJob(e, tg, "skip", jobstate.OverlapSkip)
	e.start()
	e.quiet(at(1))
	e.clock.Set(at(1))
	running := tg.next(t).Header.Get("x-ms-execution-tag")
	for n := 2; n <= 3; n++ {
		e.clock.Set(at(n))
		e.waitSkipped(&e.disp.TestSignals, j.ID, at(n))
	}
	tg.noHit(t)
	release()
	e.record()
	e.quiet(at(4))
	e.clock.Set(at(4))
	h := tg.next(t)
	equal(t, "the next occurrence runs", h.Header.Get("x-ms-scheduler-expected-execution-time"), at(4).Format(time.RFC3339))
	e.record()
	lines, skipped := summary(e.history(j))
	equal(t, "history", lines, []string{"Completed 09:01", "Skipped 09:02", "Skipped 09:03", "Completed 09:04"})
	want := jobstate.OverlapSkippedMessage(jobstate.OverlapSkip, running)
	equal(t, "skipped messages", skipped, []string{want, want})
	equal(t, "message names the running tag", strings.Contains(want, running), true)
	equal(t, "executionCount", e.job(j.ID).Status.ExecutionCount, 2)
	equal(t, "skips counted", metricValue(t, e.reg, "scheduler_occurrence_skips_total", ""), 2.0)
}

// BufferOne: the first occurrence due while the previous execution hangs waits and runs when it
// ends (with its own tag and its scheduled time); further ones are skipped and recorded.
func TestOverlapBufferOneRunsOneWhenThePreviousEnds(t *testing.T) {
	tg := newTarget(t)
	e := newOverlapEnv(t, nil)
	j, release := slowJob(e, tg, "buffer", jobstate.OverlapBufferOne)
	e.start()
	e.quiet(at(1))
	e.clock.Set(at(1))
	running := tg.next(t).Header.Get("x-ms-execution-tag")
	e.clock.Set(at(2))
	b, err := e.disp.TestSignals.Buffered.Wait(wait, func(b dispatch.Buffered) bool { return b.Scheduled.Equal(at(2)) })
	if err != nil {
		t.Fatal(err)
	}
	equal(t, "waiting", []any{len(e.unfinished()), e.unfinished()[1].DueAt.Equal(store.BufferedDueAt)}, []any{2, true})
	e.clock.Set(at(3))
	e.waitSkipped(&e.disp.TestSignals, j.ID, at(3))
	tg.noHit(t)

	release()
	r := e.record()
	equal(t, "first recorded", r.History.ExpectedExecutionTime.Equal(at(1)), true)
	h := tg.next(t) // the buffered one, released by that record
	equal(t, "buffered occurrence", []string{h.Header.Get("x-ms-scheduler-expected-execution-time"), h.Header.Get("x-ms-execution-tag")},
		[]string{at(2).Format(time.RFC3339), b.Tag})
	e.record()
	e.quiet(at(4))
	e.clock.Set(at(4))
	equal(t, "then on schedule", tg.next(t).Header.Get("x-ms-scheduler-expected-execution-time"), at(4).Format(time.RFC3339))
	e.record()
	lines, skipped := summary(e.history(j))
	equal(t, "history", lines, []string{"Completed 09:01", "Completed 09:02", "Skipped 09:03", "Completed 09:04"})
	equal(t, "skipped message", skipped, []string{jobstate.OverlapSkippedMessage(jobstate.OverlapBufferOne, running)})
	equal(t, "executionCount", e.job(j.ID).Status.ExecutionCount, 3)
	equal(t, "nothing left waiting", len(e.unfinished()), 0)
}

// A single process restarted while an occurrence is buffered: the unfinished execution runs again
// (same tag) and its end releases the buffered one; nothing runs twice.
func TestOverlapBufferedSurvivesARestart(t *testing.T) {
	tg := newTarget(t)
	e := newOverlapEnv(t, func(c *dispatch.Config) { c.ShutdownGrace = 10 * time.Millisecond })
	j, release := slowJob(e, tg, "restart", jobstate.OverlapBufferOne)
	e.start()
	e.quiet(at(1))
	e.clock.Set(at(1))
	running := tg.next(t).Header.Get("x-ms-execution-tag")
	e.clock.Set(at(2))
	if _, err := e.disp.TestSignals.Buffered.Wait(wait, func(b dispatch.Buffered) bool { return b.Scheduled.Equal(at(2)) }); err != nil {
		t.Fatal(err)
	}
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		e.stop()
	}()
	// The hanging attempt is cut short once the stop's grace period passed on the fake clock.
	for waiting := true; waiting; {
		select {
		case <-stopped:
			waiting = false
		case <-time.After(time.Millisecond):
			e.clock.Advance(20 * time.Millisecond)
		}
	}
	release()
	equal(t, "stored", len(e.unfinished()), 2)
	e.start()
	again := tg.next(t)
	equal(t, "the unfinished execution again", again.Header.Get("x-ms-execution-tag"), running)
	e.record()
	h := tg.next(t)
	equal(t, "then the buffered one", h.Header.Get("x-ms-scheduler-expected-execution-time"), at(2).Format(time.RFC3339))
	e.record()
	lines, _ := summary(e.history(j))
	equal(t, "history", lines, []string{"Completed 09:01", "Completed 09:02"})
	equal(t, "nothing left waiting", len(e.unfinished()), 0)
}

// The overlap rule holds across replicas: with the leader's scheduler and two replicas'
// executors on one PostgreSQL store (fake clock), a BufferOne job's occurrence due while the
// first execution hangs on one replica is buffered (no executor takes it), the next one is
// skipped naming the running tag, and the end of the first, recorded by its replica, releases
// the buffered one, which an executor takes and runs.
func TestOverlapAcrossReplicas(t *testing.T) {
	st := testdb.Postgres(t)
	tg := newTarget(t)
	e := newEnvOn(t, st, t0, nil)
	j, release := slowJob(e, tg, "replicas", jobstate.OverlapBufferOne)
	l, err := st.LeaderElect(t.Context(), store.LeaderElectParams{Replica: "a", TTL: time.Hour, Now: t0})
	if err != nil {
		t.Fatal(err)
	}
	// Leases longer than the test's clock jumps (minutes).
	s, _ := e.replicas(l.Term, time.Hour)
	t.Cleanup(release) // before the replicas stop (cleanups run last first): no attempt left hanging
	sig := s.TestSignals()

	e.clock.Set(at(1))
	first := tg.next(t)
	tag, owner := first.Header.Get("x-ms-execution-tag"), first.Header.Get("x-ms-scheduler-execution-region")
	e.clock.Set(at(2))
	b, err := sig.Buffered.Wait(wait, func(b dispatch.Buffered) bool { return b.Scheduled.Equal(at(2)) })
	if err != nil {
		t.Fatal(err)
	}
	xs := e.unfinished()
	equal(t, "stored: the running one (owned) and the buffered one (nobody's)",
		[]any{len(xs), xs[0].Tag, xs[0].Owner, xs[1].Tag, xs[1].Owner, xs[1].DueAt.Equal(store.BufferedDueAt)},
		[]any{2, tag, owner, b.Tag, "", true})
	e.clock.Set(at(3))
	e.waitSkipped(sig, j.ID, at(3))
	release()
	r := e.record()
	equal(t, "the first ended, recorded by its replica", []any{r.History.ExecutionTag, r.Owner, r.Release}, []any{tag, owner, true})
	h := tg.next(t) // the buffered one, released by that record, taken by a replica
	equal(t, "the buffered one runs", []string{h.Header.Get("x-ms-execution-tag"), h.Header.Get("x-ms-scheduler-expected-execution-time")},
		[]string{b.Tag, at(2).Format(time.RFC3339)})
	e.record()
	lines, skipped := summary(e.history(j))
	equal(t, "history", lines, []string{"Completed 09:01", "Completed 09:02", "Skipped 09:03"})
	equal(t, "skipped names the running tag", skipped, []string{jobstate.OverlapSkippedMessage(jobstate.OverlapBufferOne, tag)})
	equal(t, "nothing left", len(e.unfinished()), 0)
}
