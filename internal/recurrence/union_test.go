package recurrence

import (
	"testing"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"
)

// monthDays and monthlyOccurrences together run on the union of their days, once on a day that
// both name (the provider's documentation says so).
func TestMonthDaysAndOccurrencesUnion(t *testing.T) {
	r := mustCompile(t, "2026-04-01T05:15:00Z", &wire.JobRecurrence{Frequency: "Month", Schedule: &wire.JobRecurrenceSchedule{
		MonthDays:          []int{1},
		MonthlyOccurrences: []wire.JobRecurrenceScheduleMonthlyOccurrence{{Day: "friday", Occurrence: intp(1)}},
	}}, time.Time{})
	// 2026-05-01 is the first Friday of May: one run that day.
	want := utc(t, "2026-04-01T05:15:00Z", "2026-04-03T05:15:00Z", "2026-05-01T05:15:00Z", "2026-06-01T05:15:00Z", "2026-06-05T05:15:00Z")
	if got := r.Occurrences(time.Date(2026, 4, 1, 0, 0, 0, 0, time.UTC), 0, 5); format(got) != format(want) {
		t.Errorf("got  %s\nwant %s", format(got), format(want))
	}
}
