package jobstate_test

import (
	"testing"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/internal/jobstate"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/recurrence"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"
)

func TestClaimWithMisfirePolicies(t *testing.T) {
	everyMinute, err := recurrence.Compile("2026-06-01T09:00:00Z", &wire.JobRecurrence{Frequency: "Minute"}, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	fiveTimes, err := recurrence.Compile("2026-06-01T09:00:00Z", &wire.JobRecurrence{Frequency: "Minute", Count: intp(5)}, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	due := ts(t, "2026-06-01T09:00:00Z")
	down := due.Add(10*time.Minute + 30*time.Second) // a daemon stopped for ten minutes
	cases := []struct {
		name     string
		rule     *recurrence.Rule
		executed int
		now      time.Time
		m        jobstate.Misfire
		want     jobstate.Claimed
	}{
		{"RunOnce coalesces the ten missed", everyMinute, 0, down, jobstate.Misfire{Policy: jobstate.MisfireRunOnce, Threshold: time.Minute},
			jobstate.Claimed{Scheduled: ts(t, "2026-06-01T09:10:00Z"), Missed: 10, Next: ts(t, "2026-06-01T09:11:00Z")}},
		{"no policy is RunOnce", everyMinute, 0, down, jobstate.Misfire{Threshold: time.Minute},
			jobstate.Claimed{Scheduled: ts(t, "2026-06-01T09:10:00Z"), Missed: 10, Next: ts(t, "2026-06-01T09:11:00Z")}},
		{"RunAll runs the oldest, the next one is due too", everyMinute, 0, down, jobstate.Misfire{Policy: jobstate.MisfireRunAll, Threshold: time.Minute},
			jobstate.Claimed{Scheduled: due, Next: ts(t, "2026-06-01T09:01:00Z")}},
		{"RunAll: at most 100, the older coalesced into the first", everyMinute, 0, due.Add(150 * time.Minute), jobstate.Misfire{Policy: jobstate.MisfireRunAll, Threshold: time.Minute},
			jobstate.Claimed{Scheduled: ts(t, "2026-06-01T09:51:00Z"), Missed: 51, Next: ts(t, "2026-06-01T09:52:00Z")}},
		{"RunAll honours count", fiveTimes, 4, down, jobstate.Misfire{Policy: jobstate.MisfireRunAll, Threshold: time.Minute},
			jobstate.Claimed{Scheduled: due}},
		{"Skip skips those late by more than the threshold", everyMinute, 0, down, jobstate.Misfire{Policy: jobstate.MisfireSkip, Threshold: time.Minute},
			jobstate.Claimed{Scheduled: ts(t, "2026-06-01T09:10:00Z"), Skipped: 10, Next: ts(t, "2026-06-01T09:11:00Z")}},
		{"Skip with a short threshold: the next one runs", everyMinute, 0, down, jobstate.Misfire{Policy: jobstate.MisfireSkip, Threshold: 10 * time.Second},
			jobstate.Claimed{Scheduled: ts(t, "2026-06-01T09:11:00Z"), Skipped: 11, Next: ts(t, "2026-06-01T09:12:00Z")}},
		{"a policy does not apply within the threshold", everyMinute, 0, due.Add(30 * time.Second), jobstate.Misfire{Policy: jobstate.MisfireSkip, Threshold: time.Minute},
			jobstate.Claimed{Scheduled: due, Next: ts(t, "2026-06-01T09:01:00Z")}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := jobstate.ClaimWith(tc.rule, "sub/rg/jobs/j", due, tc.executed, tc.now, tc.m)
			if !got.Scheduled.Equal(tc.want.Scheduled) || !got.Next.Equal(tc.want.Next) || got.Missed != tc.want.Missed || got.Skipped != tc.want.Skipped {
				t.Errorf("got  %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

// A jittered start is not a misfire: lateness counts from the occurrence's start.
func TestClaimWithCountsLatenessFromTheJitteredStart(t *testing.T) {
	rule, err := recurrence.Compile("2026-06-01T09:00:00Z", &wire.JobRecurrence{Frequency: "Minute", Interval: intp(10), Jitter: "PT5M"}, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	due := ts(t, "2026-06-01T09:00:00Z")
	const key = "sub/rg/jobs/j"
	start := jobstate.StartAt(rule, key, due)
	if start.Sub(due) <= time.Minute {
		t.Fatalf("offset %v: pick a key whose offset is above the threshold", start.Sub(due))
	}
	got := jobstate.ClaimWith(rule, key, due, 0, start.Add(30*time.Second), jobstate.Misfire{Policy: jobstate.MisfireSkip, Threshold: time.Minute})
	if !got.Scheduled.Equal(due) || got.Skipped != 0 {
		t.Errorf("claimed 30 s after its start: %+v, want the occurrence itself, nothing skipped", got)
	}
	got = jobstate.ClaimWith(rule, key, due, 0, start.Add(2*time.Minute), jobstate.Misfire{Policy: jobstate.MisfireSkip, Threshold: time.Minute})
	if want := ts(t, "2026-06-01T09:10:00Z"); !got.Scheduled.Equal(want) || got.Skipped != 1 {
		t.Errorf("claimed 2 min after its start: %+v, want 09:10 with one skipped", got)
	}
}
