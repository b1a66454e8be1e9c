package jobstate_test

import (
	"testing"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/internal/jobstate"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/recurrence"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"
)

func TestResumeDue(t *testing.T) {
	at := time.Date(2026, 11, 20, 8, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		state    string
		resumeAt time.Time
		now      time.Time
		want     bool
	}{
		{jobstate.Disabled, at, at.Add(-time.Nanosecond), false},
		{jobstate.Disabled, at, at, true},
		{jobstate.Disabled, at, at.Add(time.Hour), true},
		{jobstate.Disabled, time.Time{}, at, false},
		{jobstate.Enabled, at, at, false},
		{jobstate.Completed, at, at, false},
	} {
		if got := jobstate.ResumeDue(tc.state, tc.resumeAt, tc.now); got != tc.want {
			t.Errorf("ResumeDue(%s, %v, %v) = %v, want %v", tc.state, tc.resumeAt, tc.now, got, tc.want)
		}
	}
}

// Resumed drops resumeAt, keeps the note, and schedules from resumeAt as FirstRun does: the
// pause's occurrences are not replayed, a job with its count spent is Completed.
func TestResumed(t *testing.T) {
	rec := &wire.JobRecurrence{Frequency: "Hour", Interval: new(1)}
	created := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	rule, err := recurrence.Compile("2026-11-18T09:00:00Z", rec, created)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 18, 11, 30, 0, 0, time.UTC)
	p := wire.JobProperties{ResumeAt: "2026-11-18T11:30:00Z", Note: "migration"}
	next, state := jobstate.Resumed(&p, rule, jobstate.CollectionEnabled, 3, at)
	if p.ResumeAt != "" || p.Note != "migration" || state != jobstate.Enabled || !next.Equal(at.Add(30*time.Minute)) {
		t.Fatalf("Resumed: %+v next %v state %s", p, next, state)
	}
	if next, state := jobstate.Resumed(&p, rule, "Disabled", 3, at); !next.IsZero() || state != jobstate.Enabled {
		t.Fatalf("in a disabled collection: next %v state %s, want none and Enabled", next, state)
	}
	rec.Count = new(3)
	counted, err := recurrence.Compile("2026-11-18T09:00:00Z", rec, created)
	if err != nil {
		t.Fatal(err)
	}
	if next, state := jobstate.Resumed(&p, counted, jobstate.CollectionEnabled, 3, at); !next.IsZero() || state != jobstate.Completed {
		t.Fatalf("count spent: next %v state %s, want Completed", next, state)
	}
}
