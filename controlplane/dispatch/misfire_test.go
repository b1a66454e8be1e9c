package dispatch_test

import (
	"sort"
	"testing"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/internal/jobstate"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/recurrence"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"
)

// After ten minutes down, a RunAll job runs each missed occurrence as its own execution (with
// its own scheduled time as the expected one); the daemon's threshold is one minute.
func TestMisfireRunAllRunsEachMissedOccurrence(t *testing.T) {
	tg := newTarget(t)
	e := newEnv(t, t0, nil)
	props := everyMinute(t0)
	props.Action = httpAction(tg.URL + "/all")
	props.Misfire = &wire.JobMisfire{Policy: "RunAll"}
	j := e.putJob("all", props, "Enabled")
	e.clock.Set(t0.Add(10*time.Minute + 30*time.Second))
	e.start()
	var got, tags []string
	for range 11 {
		h := tg.next(t)
		got = append(got, h.Header.Get("x-ms-scheduler-expected-execution-time"))
		tags = append(tags, h.Header.Get("x-ms-execution-tag"))
	}
	sort.Strings(got) // attempts run in parallel
	want := make([]string, 11)
	for i := range want {
		want[i] = t0.Add(time.Duration(i) * time.Minute).Format(time.RFC3339)
	}
	equal(t, "each missed occurrence runs", got, want)
	sort.Strings(tags)
	for i := 1; i < len(tags); i++ {
		if tags[i] == tags[i-1] {
			t.Fatalf("two executions share the tag %s", tags[i])
		}
	}
	for range 11 {
		e.record()
	}
	equal(t, "executionCount", e.job(j.ID).Status.ExecutionCount, 11)
	e.quiet(t0.Add(11*time.Minute - lookahead))
	tg.noHit(t)
}

// A job's own misfire threshold replaces the daemon's: five minutes late by two and a half,
// each occurrence runs (the daemon's one minute would coalesce them).
func TestJobMisfireThresholdReplacesTheDaemons(t *testing.T) {
	tg := newTarget(t)
	e := newEnv(t, t0, nil)
	props := everyMinute(t0)
	props.Action = httpAction(tg.URL + "/m")
	props.Misfire = &wire.JobMisfire{Threshold: "PT5M"}
	e.putJob("late", props, "Enabled")
	e.clock.Set(t0.Add(2*time.Minute + 30*time.Second))
	e.start()
	var got []string
	for range 3 {
		got = append(got, tg.next(t).Header.Get("x-ms-scheduler-expected-execution-time"))
	}
	sort.Strings(got)
	equal(t, "each occurrence runs", got, []string{"2026-06-01T09:00:00Z", "2026-06-01T09:01:00Z", "2026-06-01T09:02:00Z"})
	e.quiet(t0.Add(3*time.Minute - lookahead))
	tg.noHit(t)
}

// A job with a jitter starts at its scheduled time plus the rulebook's offset for it (never
// before), and reports its scheduled time as the expected one.
func TestJitteredOccurrenceStartsAtItsOffset(t *testing.T) {
	tg := newTarget(t)
	e := newEnv(t, t0, nil)
	props := everyMinute(t0.Add(time.Minute))
	props.Recurrence.Interval = intp(10)
	props.Recurrence.Jitter = "PT5M"
	props.Action = httpAction(tg.URL + "/j")
	j := e.putJob("jittered", props, "Enabled")
	rule, err := recurrence.Compile(props.StartTime, props.Recurrence, j.CreatedAt)
	if err != nil {
		t.Fatal(err)
	}
	scheduled := t0.Add(time.Minute)
	start := jobstate.StartAt(rule, j.Key.CanonicalID(), scheduled)
	if off := start.Sub(scheduled); off <= lookahead || off >= 5*time.Minute {
		t.Fatalf("offset %v: pick another job name so that the test can tell the start from the scheduled time", off)
	}
	e.start()
	e.quiet(start.Add(-lookahead))
	e.clock.Set(scheduled) // due by the rule, not started: its start is later
	tg.noHit(t)
	e.clock.Set(start)
	h := tg.next(t)
	equal(t, "expected time", h.Header.Get("x-ms-scheduler-expected-execution-time"), scheduled.Format(time.RFC3339))
	e.record()
	got := e.job(j.ID)
	equal(t, "one execution, not a misfire", [2]any{got.Status.ExecutionCount, e.history(j)[0].Message}, [2]any{1, "HTTP/1.1 200 OK\nanswer from /j"})
}
