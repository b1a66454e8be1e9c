package jobdef

import (
	"fmt"
	"testing"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/internal/jobstate"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/recurrence"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"
)

// enumeratedMaxRecurrence is CheckLimits' maxRecurrence rule without its shortcut: any two of the
// job's next 1,000 executions (the immediate run left out) closer than the period.
func enumeratedMaxRecurrence(rule *recurrence.Rule, p Period, now time.Time, done int) string {
	occ := jobstate.Preview(rule, now, done, 1000)
	if first, immediate, ok := rule.First(now); ok && immediate && len(occ) > 0 && occ[0].Equal(first) {
		occ = occ[1:]
	}
	for i := 1; i < len(occ); i++ {
		if p.After(occ[i-1]).After(occ[i]) {
			return fmt.Sprintf("%s %s", occ[i-1].Format(time.RFC3339), occ[i].Format(time.RFC3339))
		}
	}
	return ""
}

// TestCheckLimitsShortcutIsExact: the maxRecurrence check that skips enumerating the rules whose
// candidates are never closer than the period answers as the enumeration does, for rules the
// shortcut takes (one candidate per period, fixed zones) and rules it must not (filters, zones
// with daylight saving time, where a calendar day lasts 23 or 25 hours).
func TestCheckLimitsShortcutIsExact(t *testing.T) {
	one, two, five, six, thirty := 1, 2, 5, 6, 30
	rec := func(freq string, interval *int, zone string, s *wire.JobRecurrenceSchedule) *wire.JobRecurrence {
		return &wire.JobRecurrence{Frequency: freq, Interval: interval, TimeZone: zone, Schedule: s}
	}
	rules := []struct {
		start string
		rec   *wire.JobRecurrence
	}{
		{"2026-03-01T10:00:00Z", rec("Minute", &one, "", nil)},
		{"2026-03-01T10:00:00Z", rec("Minute", &five, "", nil)},
		{"", rec("Minute", &one, "", nil)},
		{"2026-03-01T10:00:00Z", rec("Hour", &one, "", nil)},
		{"2026-03-01T10:00:00Z", rec("Hour", &two, "Europe/Berlin", nil)},
		{"2026-03-01T10:00:00Z", rec("Hour", &one, "", &wire.JobRecurrenceSchedule{Minutes: []int{0, 30}})},
		{"2026-03-01T10:00:00Z", rec("Hour", &two, "", &wire.JobRecurrenceSchedule{Minutes: []int{0, 50}})},
		{"2026-03-01T10:00:00Z", rec("Hour", &one, "", &wire.JobRecurrenceSchedule{Minutes: []int{5, 55}})},
		{"2026-03-01T10:00:00Z", rec("Hour", &two, "", &wire.JobRecurrenceSchedule{Minutes: []int{10, 20, 50}})},
		{"2026-03-01T10:00:00Z", rec("Hour", &one, "", &wire.JobRecurrenceSchedule{Hours: []int{9, 10}})},
		{"2026-03-01T10:00:00Z", rec("Day", &one, "", nil)},
		{"2026-03-01T10:00:00+05:30", rec("Day", &two, "", nil)},
		{"2026-03-01T10:00:00Z", rec("Day", &six, "", nil)},
		{"2026-03-01T10:00:00Z", rec("Day", &thirty, "", nil)},
		{"2026-03-01T02:30:00", rec("Day", &one, "Europe/Berlin", nil)},
		{"2026-03-01T10:00:00Z", rec("Day", &one, "", &wire.JobRecurrenceSchedule{Hours: []int{9, 17}})},
		{"2026-03-01T10:00:00Z", rec("Week", &one, "", nil)},
		{"2026-03-01T10:00:00Z", rec("Week", &one, "", &wire.JobRecurrenceSchedule{WeekDays: []string{"Monday", "Tuesday"}})},
		{"2026-03-01T10:00:00", rec("Week", &one, "America/New_York", nil)},
		{"2026-01-31T10:00:00Z", rec("Month", &one, "", nil)},
		{"2026-01-28T10:00:00Z", rec("Month", &one, "", nil)},
		{"2026-01-31T10:00:00Z", rec("Month", &one, "", &wire.JobRecurrenceSchedule{MonthDays: []int{1, -1}})},
	}
	periods := []Period{{"Minute", 1}, {"Minute", 5}, {"Minute", 10}, {"Minute", 11}, {"Minute", 30}, {"Minute", 50}, {"Minute", 70}, {"Minute", 71}, {"Hour", 1}, {"Hour", 2}, {"Hour", 24}, {"Hour", 168}, {"Hour", 180}, {"Day", 1}, {"Day", 2}, {"Day", 29}, {"Week", 1}, {"Month", 1}}
	now := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	p := &wire.JobProperties{}
	for _, r := range rules {
		rule, err := recurrence.Compile(r.start, r.rec, now)
		if err != nil {
			t.Fatalf("%s %+v: %v", r.start, r.rec, err)
		}
		for _, period := range periods {
			want := enumeratedMaxRecurrence(rule, period, now, 0)
			v := CheckLimits(p, rule, Limits{MaxRecurrence: period}, now, 0)
			if got := v != nil; got != (want != "") {
				t.Errorf("%s %s every %d %s, maxRecurrence %s: violation %v (%v), the enumeration finds %q",
					r.start, r.rec.TimeZone, *r.rec.Interval, r.rec.Frequency, period, got, v, want)
			}
		}
	}
}
