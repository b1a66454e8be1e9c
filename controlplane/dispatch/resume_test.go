package dispatch_test

import (
	"log/slog"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/dispatch"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/testlog"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"
)

// pausedHourly is a job "paused" every hour from t0 (09:00), Disabled until 11:30 with a note.
func (e *env) pausedHourly(uri string) *store.Job {
	e.t.Helper()
	return e.putJob("paused", pausedProps(uri), store.JobStateDisabled)
}

// pausedProps are pausedHourly's properties.
func pausedProps(uri string) wire.JobProperties {
	return wire.JobProperties{
		StartTime:  t0.Format(time.RFC3339),
		Recurrence: &wire.JobRecurrence{Frequency: "Hour", Interval: intp(1)},
		Action:     httpAction(uri),
		ResumeAt:   "2026-06-01T11:30:00Z",
		Note:       "database migration",
	}
}

// resumed waits for the resume of a job.
func (e *env) resumed(id int64) dispatch.Resumed {
	e.t.Helper()
	r, err := e.disp.TestSignals.Resumed.Wait(wait, func(r dispatch.Resumed) bool { return r.JobID == id })
	if err != nil {
		e.t.Fatalf("waiting for job %d to resume: %v", id, err)
	}
	return r
}

// A job paused until 11:30 becomes Enabled by itself at 11:30, its note kept and its resumeAt
// gone; its next run is computed from 11:30 as an enable computes it (12:00): the occurrences of
// the pause (10:00, 11:00) are not replayed.
func TestPausedJobResumesAtItsResumeAt(t *testing.T) {
	tg := newTarget(t)
	logs := &testlog.Buffer{}
	e := newEnv(t, t0.Add(time.Hour), func(c *dispatch.Config) { c.Logger = slog.New(slog.NewJSONHandler(logs, nil)) })
	j := e.pausedHourly(tg.URL + "/p")
	e.start()
	e.clock.Set(t0.Add(2*time.Hour + 29*time.Minute))
	if got := e.job(j.ID); got.State != store.JobStateDisabled {
		t.Fatalf("state at 11:29: %s", got.State)
	}
	e.clock.Set(t0.Add(2*time.Hour + 30*time.Minute))
	r := e.resumed(j.ID)
	equal(t, "resumed", []time.Time{r.At, r.Next}, []time.Time{t0.Add(2*time.Hour + 30*time.Minute), t0.Add(3 * time.Hour)})
	got := e.job(j.ID)
	equal(t, "the job after its pause", []any{got.State, got.Properties.ResumeAt, got.Properties.Note, got.Status.NextExecutionTime.UTC()},
		[]any{store.JobStateEnabled, "", "database migration", t0.Add(3 * time.Hour)})
	if line := regexp.MustCompile(`\{[^\n]*"msg":"job resumed: its pause ended"[^\n]*\}`).FindString(logs.String()); !strings.Contains(line, `"job":"paused"`) ||
		!strings.Contains(line, `"resume_at":"2026-06-01T11:30:00Z"`) || !strings.Contains(line, `"note":"database migration"`) ||
		!strings.Contains(line, `"next_execution_time":"2026-06-01T12:00:00Z"`) {
		t.Errorf("the log says %q", line)
	}
	e.quiet(t0.Add(3*time.Hour - lookahead))
	tg.noHit(t)
	e.clock.Set(t0.Add(3 * time.Hour))
	equal(t, "first run after the pause", tg.next(t).Header.Get("x-ms-scheduler-expected-execution-time"), "2026-06-01T12:00:00Z")
	e.record()
	equal(t, "execution count", e.job(j.ID).Status.ExecutionCount, 1)
}

// A pause that ended while the daemon was stopped ends when it starts again, as of its resumeAt:
// the job is Enabled with its next run computed from 11:30 (12:00, late by ten minutes: the
// misfire rule applies to it as to any occurrence missed while the daemon was down); the pause's
// occurrences are not replayed.
func TestPausedJobResumesAfterARestart(t *testing.T) {
	tg := newTarget(t)
	e := newEnv(t, t0.Add(time.Hour), nil)
	j := e.pausedHourly(tg.URL + "/p")
	e.start()
	e.quiet(time.Time{})
	e.stop()
	e.clock.Set(t0.Add(3*time.Hour + 10*time.Minute))
	e.start()
	r := e.resumed(j.ID)
	equal(t, "resumed", []time.Time{r.At, r.Next}, []time.Time{t0.Add(2*time.Hour + 30*time.Minute), t0.Add(3 * time.Hour)})
	equal(t, "the only run", tg.next(t).Header.Get("x-ms-scheduler-expected-execution-time"), "2026-06-01T12:00:00Z")
	e.record()
	e.quiet(t0.Add(4*time.Hour - lookahead))
	tg.noHit(t)
	got := e.job(j.ID)
	equal(t, "the job", []any{got.State, got.Properties.ResumeAt, got.Properties.Note, got.Status.ExecutionCount},
		[]any{store.JobStateEnabled, "", "database migration", 1})
}

// A pause moved to a later time (the job written again) ends at the new time, not the old one.
func TestPauseMovedEndsAtTheNewTime(t *testing.T) {
	tg := newTarget(t)
	e := newEnv(t, t0.Add(time.Hour), nil)
	j := e.pausedHourly(tg.URL + "/p")
	e.start()
	props := j.Properties.Clone()
	props.ResumeAt = "2026-06-01T12:30:00Z"
	e.changeJob("paused", props, store.JobStateDisabled) // tells the dispatcher its ID: JobChanged
	e.clock.Set(t0.Add(3 * time.Hour))                   // past the old end, before the new one
	e.clock.Set(t0.Add(3*time.Hour + 30*time.Minute))
	r := e.resumed(j.ID)
	equal(t, "resumed at the new time", []time.Time{r.At, r.Next}, []time.Time{t0.Add(3*time.Hour + 30*time.Minute), t0.Add(4 * time.Hour)})
}

// A pause written while the dispatcher runs (it hears of it through JobChanged) ends by itself.
func TestPauseWrittenWhileRunningEnds(t *testing.T) {
	tg := newTarget(t)
	e := newEnv(t, t0.Add(time.Hour), nil)
	e.start()
	j := e.pausedHourly(tg.URL + "/p")
	e.clock.Set(t0.Add(2*time.Hour + 30*time.Minute))
	r := e.resumed(j.ID)
	equal(t, "resumed", r.Next, t0.Add(3*time.Hour))
}

// A pause written by someone else (another replica: the dispatcher hears only the job's ID and
// its loop reads the job) ends by itself too.
func TestPauseChangedWhileRunningEnds(t *testing.T) {
	tg := newTarget(t)
	e := newEnv(t, t0.Add(time.Hour), nil)
	e.start()
	e.changeJob("paused", pausedProps(tg.URL+"/p"), store.JobStateDisabled)
	e.clock.Set(t0.Add(2*time.Hour + 30*time.Minute))
	r := e.resumed(1)
	equal(t, "resumed", r.Next, t0.Add(3*time.Hour))
}
