package provider

import (
	"context"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/internal/client"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"
)

// The provider's preview (scheduler_occurrences, provider::scheduler::occurrences) and the daemon
// never disagree about when a job runs: the next 200 executions of the seeds' scenarios,
// daylight-saving changes included, are the same computed locally and by the running daemon.
func TestAccOccurrences_sameAsTheDaemon(t *testing.T) {
	if os.Getenv("TF_ACC") == "" {
		t.Skip("acceptance test: set TF_ACC=1 (make testacc), as resource.Test does")
	}
	ip := func(n int) *int { return &n }
	for _, tc := range []struct {
		name  string
		start string
		rec   *wire.JobRecurrence
		now   time.Time
	}{
		{"seed: every 2 days from the past", "2015-04-07T14:00:00Z", &wire.JobRecurrence{Frequency: "Day", Interval: ip(2)}, time.Date(2015, 4, 8, 13, 0, 0, 0, time.UTC)},
		{"weekdays at 10 and 22 in Berlin over DST", "2026-03-20T00:00:00", &wire.JobRecurrence{Frequency: "Week", TimeZone: "Europe/Berlin",
			Schedule: &wire.JobRecurrenceSchedule{WeekDays: []string{"Monday", "Wednesday", "Friday"}, Hours: []int{10, 22}, Minutes: []int{0}}}, time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)},
		{"last Friday of the month in London", "2026-01-01T16:00:00", &wire.JobRecurrence{Frequency: "Month", TimeZone: "Europe/London",
			Schedule: &wire.JobRecurrenceSchedule{MonthlyOccurrences: []wire.JobRecurrenceScheduleMonthlyOccurrence{{Day: "Friday", Occurrence: ip(-1)}}}}, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)},
		{"the 31st skips short months", "2026-01-31T08:00:00Z", &wire.JobRecurrence{Frequency: "Month"}, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)},
		{"every 15 minutes", "2026-01-01T00:00:00Z", &wire.JobRecurrence{Frequency: "Minute", Interval: ip(15)}, time.Date(2026, 2, 1, 0, 7, 0, 0, time.UTC)},
		{"Day with minutes [0]: every hour on the hour", "2026-01-01T09:20:00Z", &wire.JobRecurrence{Frequency: "Day",
			Schedule: &wire.JobRecurrenceSchedule{Minutes: []int{0}}}, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)},
		{"02:30 daily in Berlin across the spring gap", "2026-03-25T02:30:00", &wire.JobRecurrence{Frequency: "Day", TimeZone: "Europe/Berlin"}, time.Date(2026, 3, 20, 0, 0, 0, 0, time.UTC)},
		{"count and end time", "2026-01-01T00:00:00Z", &wire.JobRecurrence{Frequency: "Hour", Interval: ip(5), Count: ip(40), EndTime: "2026-01-05"}, time.Date(2025, 12, 1, 0, 0, 0, 0, time.UTC)},
		{"no start time: once now, then the rule", "", &wire.JobRecurrence{Frequency: "Week", Schedule: &wire.JobRecurrenceSchedule{WeekDays: []string{"Sunday"}}},
			time.Date(2026, 1, 7, 11, 45, 30, 0, time.UTC)},
		{"one-off in the future", "2030-01-01T00:00:00+05:30", nil, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			local, err := preview(previewParams{StartTime: tc.start, Recurrence: tc.rec, Now: tc.now, Count: 200})
			if err != nil {
				t.Fatalf("local preview: %v", err)
			}
			daemon, err := testClient(t).OccurrencePreview(context.Background(), client.OccurrencePreviewParams{
				Properties: &wire.JobProperties{StartTime: tc.start, Recurrence: tc.rec}, Count: 200, Now: tc.now,
			})
			if err != nil {
				t.Fatalf("daemon preview: %v", err)
			}
			if len(local) == 0 || !slices.Equal(local, daemon) {
				t.Errorf("local and daemon differ (%d and %d executions)\nlocal:  %v\ndaemon: %v", len(local), len(daemon), head(local), head(daemon))
			}
		})
	}
}

func head(ts []string) []string { return ts[:min(len(ts), 6)] }
