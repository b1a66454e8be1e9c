package dispatch_test

import (
	"testing"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/dispatch"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store/testdb"
)

// With replicas on one PostgreSQL store (the leader's scheduler, two executors), the leader's
// scheduler resumes a job paused until 11:30 at 11:30 (its note kept, resumeAt gone, next run
// 12:00 as an enable at 11:30 computes it), and one replica runs its 12:00 occurrence once; the
// pause's occurrences (10:00, 11:00) are not replayed.
func TestPausedJobResumesAcrossReplicas(t *testing.T) {
	st := testdb.Postgres(t)
	tg := newTarget(t)
	e := newEnvOn(t, st, t0.Add(time.Hour), nil)
	j := e.pausedHourly(tg.URL + "/p")
	// The leader's term outlasts the test's clock jumps (hours).
	l, err := st.LeaderElect(t.Context(), store.LeaderElectParams{Replica: "a", TTL: 24 * time.Hour, Now: e.clock.Now()})
	if err != nil {
		t.Fatal(err)
	}
	s, _ := e.replicas(l.Term, 24*time.Hour)
	sig := s.TestSignals()

	e.clock.Set(t0.Add(2*time.Hour + 29*time.Minute))
	equal(t, "state at 11:29", e.job(j.ID).State, store.JobStateDisabled)
	e.clock.Set(t0.Add(2*time.Hour + 30*time.Minute))
	r, err := sig.Resumed.Wait(wait, func(r dispatch.Resumed) bool { return r.JobID == j.ID })
	if err != nil {
		t.Fatalf("waiting for the leader to resume the job: %v", err)
	}
	equal(t, "resumed", []time.Time{r.At, r.Next}, []time.Time{t0.Add(2*time.Hour + 30*time.Minute), t0.Add(3 * time.Hour)})
	got := e.job(j.ID)
	equal(t, "the job after its pause", []any{got.State, got.Properties.ResumeAt, got.Properties.Note, got.Status.NextExecutionTime.UTC()},
		[]any{store.JobStateEnabled, "", "database migration", t0.Add(3 * time.Hour)})

	e.clock.Set(t0.Add(3 * time.Hour))
	h := tg.next(t)
	equal(t, "first run after the pause", h.Header.Get("x-ms-scheduler-expected-execution-time"), "2026-06-01T12:00:00Z")
	rec := e.record()
	equal(t, "recorded by the replica that ran it", rec.Owner, h.Header.Get("x-ms-scheduler-execution-region"))
	got = e.job(j.ID)
	lines, _ := summary(e.history(j))
	equal(t, "after the run", []any{got.State, got.Status.ExecutionCount, got.Status.NextExecutionTime.UTC(), lines},
		[]any{store.JobStateEnabled, 1, t0.Add(4 * time.Hour), []string{"Completed 12:00"}})
}
