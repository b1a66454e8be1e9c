package recurrence

import (
	"testing"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"
)

// Daylight saving per SPEC 3 and 4.2, with expected instants worked out by hand from the zones'
// 2015 transitions: a wall time in a spring-forward gap fires moved forward by the gap, a repeated
// one fires once at the earlier instant; Minute and Hour count elapsed time.
func TestDaylightSaving(t *testing.T) {
	cases := []struct {
		name  string
		zone  string
		start string
		freq  string
		sched *wire.JobRecurrenceSchedule
		want  []string
	}{
		// Europe/Berlin: 2015-03-29 02:00 CET -> 03:00 CEST (01:00Z); 2015-10-25 03:00 CEST -> 02:00 CET (01:00Z).
		{"Berlin spring, daily 02:30", "Europe/Berlin", "2015-03-27T02:30:00", "Day", nil,
			[]string{"2015-03-27T01:30:00Z", "2015-03-28T01:30:00Z", "2015-03-29T01:30:00Z", "2015-03-30T00:30:00Z"}},
		{"Berlin fall, daily 02:30", "Europe/Berlin", "2015-10-24T02:30:00", "Day", nil,
			[]string{"2015-10-24T00:30:00Z", "2015-10-25T00:30:00Z", "2015-10-26T01:30:00Z"}},
		{"Berlin spring, 02:00 02:30 03:00 03:30 collapse", "Europe/Berlin", "2015-03-28T00:00:00", "Day",
			&wire.JobRecurrenceSchedule{Hours: []int{2, 3}, Minutes: []int{0, 30}},
			[]string{"2015-03-28T01:00:00Z", "2015-03-28T01:30:00Z", "2015-03-28T02:00:00Z", "2015-03-28T02:30:00Z",
				"2015-03-29T01:00:00Z", "2015-03-29T01:30:00Z",
				"2015-03-30T00:00:00Z", "2015-03-30T00:30:00Z", "2015-03-30T01:00:00Z", "2015-03-30T01:30:00Z"}},
		{"Berlin fall, hourly counts elapsed hours (25 that day)", "Europe/Berlin", "2015-10-25T00:30:00", "Hour", nil,
			[]string{"2015-10-24T22:30:00Z", "2015-10-24T23:30:00Z", "2015-10-25T00:30:00Z", "2015-10-25T01:30:00Z", "2015-10-25T02:30:00Z"}},
		{"Berlin spring, hourly counts elapsed hours (23 that day)", "Europe/Berlin", "2015-03-29T00:30:00", "Hour", nil,
			[]string{"2015-03-28T23:30:00Z", "2015-03-29T00:30:00Z", "2015-03-29T01:30:00Z", "2015-03-29T02:30:00Z"}},
		{"Berlin fall, every 30 minutes through the repeated hour", "Europe/Berlin", "2015-10-25T01:45:00", "Minute", &wire.JobRecurrenceSchedule{},
			[]string{"2015-10-24T23:45:00Z", "2015-10-25T00:15:00Z", "2015-10-25T00:45:00Z", "2015-10-25T01:15:00Z", "2015-10-25T01:45:00Z"}},
		// America/New_York: 2015-03-08 02:00 EST -> 03:00 EDT (07:00Z); 2015-11-01 02:00 EDT -> 01:00 EST (06:00Z).
		{"New York spring, daily 02:30", "America/New_York", "2015-03-07T02:30:00", "Day", nil,
			[]string{"2015-03-07T07:30:00Z", "2015-03-08T07:30:00Z", "2015-03-09T06:30:00Z"}},
		{"New York fall, daily 01:30", "America/New_York", "2015-10-31T01:30:00", "Day", nil,
			[]string{"2015-10-31T05:30:00Z", "2015-11-01T05:30:00Z", "2015-11-02T06:30:00Z"}},
		{"New York fall, weekly Sunday 01:15 and 01:45", "America/New_York", "2015-10-25T00:00:00", "Week",
			&wire.JobRecurrenceSchedule{WeekDays: []string{"Sunday"}, Hours: []int{1}, Minutes: []int{15, 45}},
			[]string{"2015-10-25T05:15:00Z", "2015-10-25T05:45:00Z", "2015-11-01T05:15:00Z", "2015-11-01T05:45:00Z", "2015-11-08T06:15:00Z"}},
		// Australia/Sydney: 2015-04-05 03:00 AEDT -> 02:00 AEST (04-04 16:00Z); 2015-10-04 02:00 AEST -> 03:00 AEDT (10-03 16:00Z).
		{"Sydney fall, daily 02:30", "Australia/Sydney", "2015-04-04T02:30:00", "Day", nil,
			[]string{"2015-04-03T15:30:00Z", "2015-04-04T15:30:00Z", "2015-04-05T16:30:00Z"}},
		{"Sydney spring, daily 02:30", "Australia/Sydney", "2015-10-03T02:30:00", "Day", nil,
			[]string{"2015-10-02T16:30:00Z", "2015-10-03T16:30:00Z", "2015-10-04T15:30:00Z"}},
		{"Sydney spring, monthly first Sunday 02:30", "Australia/Sydney", "2015-09-01T00:00:00", "Month",
			&wire.JobRecurrenceSchedule{MonthlyOccurrences: []wire.JobRecurrenceScheduleMonthlyOccurrence{{Day: "sunday", Occurrence: intp(1)}}, Hours: []int{2}, Minutes: []int{30}},
			[]string{"2015-09-05T16:30:00Z", "2015-10-03T16:30:00Z", "2015-10-31T15:30:00Z"}},
		// Asia/Kolkata: +05:30, no daylight saving.
		{"Kolkata, daily 09:00 and 18:00", "Asia/Kolkata", "2015-04-07T10:15:00", "Day",
			&wire.JobRecurrenceSchedule{Hours: []int{9, 18}, Minutes: []int{0}},
			[]string{"2015-04-07T12:30:00Z", "2015-04-08T03:30:00Z", "2015-04-08T12:30:00Z"}},
		{"Kolkata, hourly only in the 9 o'clock hour", "Asia/Kolkata", "2015-04-07T10:15:00", "Hour",
			&wire.JobRecurrenceSchedule{Hours: []int{9}},
			[]string{"2015-04-08T03:45:00Z", "2015-04-09T03:45:00Z"}},
		// Australia/Adelaide: +09:30 / +10:30; 2015-10-04 02:00 ACST -> 03:00 ACDT (10-03 16:30Z).
		{"Adelaide spring, daily 02:30", "Australia/Adelaide", "2015-10-03T02:30:00", "Day", nil,
			[]string{"2015-10-02T17:00:00Z", "2015-10-03T17:00:00Z", "2015-10-04T16:00:00Z"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rec := &wire.JobRecurrence{Frequency: c.freq, TimeZone: c.zone, Schedule: c.sched}
			if c.freq == "Minute" {
				rec.Interval = intp(30)
			}
			now := time.Date(2015, 1, 1, 0, 0, 0, 0, time.UTC)
			r := mustCompile(t, c.start, rec, now)
			want := utc(t, c.want...)
			got := r.Occurrences(now, 0, len(want))
			if format(got) != format(want) {
				t.Errorf("got  %s\nwant %s", format(got), format(want))
			}
			if len(got) > 0 && got[0].Location().String() != c.zone {
				t.Errorf("occurrences are in %v, want %s", got[0].Location(), c.zone)
			}
		})
	}
}

func TestWallToInstant(t *testing.T) {
	cases := []struct {
		zone string
		wall [5]int // y m d h mi
		want string
	}{
		{"Europe/Berlin", [5]int{2015, 3, 29, 2, 30}, "2015-03-29T03:30:00+02:00"},     // gap: forward
		{"Europe/Berlin", [5]int{2015, 10, 25, 2, 30}, "2015-10-25T02:30:00+02:00"},    // repeated: earlier
		{"America/New_York", [5]int{2015, 3, 8, 2, 30}, "2015-03-08T03:30:00-04:00"},   // gap: forward (time.Date goes back)
		{"America/New_York", [5]int{2015, 11, 1, 1, 30}, "2015-11-01T01:30:00-04:00"},  // repeated: earlier
		{"Australia/Sydney", [5]int{2015, 10, 4, 2, 30}, "2015-10-04T03:30:00+11:00"},  // gap
		{"Australia/Sydney", [5]int{2015, 4, 5, 2, 30}, "2015-04-05T02:30:00+11:00"},   // repeated (time.Date gives the later)
		{"America/Santiago", [5]int{2015, 4, 25, 23, 30}, "2015-04-25T23:30:00-03:00"}, // 2015: no change (permanent -03)
		{"America/Santiago", [5]int{2016, 5, 14, 23, 30}, "2016-05-14T23:30:00-03:00"}, // repeated: earlier
		{"America/Santiago", [5]int{2016, 8, 14, 0, 30}, "2016-08-14T01:30:00-03:00"},  // gap at midnight
		{"Australia/Adelaide", [5]int{2015, 10, 4, 2, 15}, "2015-10-04T03:15:00+10:30"},
		{"Asia/Kolkata", [5]int{2015, 10, 4, 2, 15}, "2015-10-04T02:15:00+05:30"},
	}
	for _, c := range cases {
		loc, err := time.LoadLocation(c.zone)
		if err != nil {
			t.Fatal(err)
		}
		got := wallToInstant(int64(c.wall[0]), c.wall[1], c.wall[2], c.wall[3], c.wall[4], 0, 0, loc)
		if got.Format(time.RFC3339) != c.want {
			t.Errorf("%s %v: got %s, want %s", c.zone, c.wall, got.Format(time.RFC3339), c.want)
		}
		if ref := refInstant(c.wall[0], time.Month(c.wall[1]), c.wall[2], c.wall[3], c.wall[4], 0, loc); !ref.Equal(got) {
			t.Errorf("%s %v: reference %s, engine %s", c.zone, c.wall, ref.Format(time.RFC3339), got.Format(time.RFC3339))
		}
	}
}

// Every 2 elapsed hours from midnight CET reaches only even wall hours in winter and only odd ones
// in summer: {"hours":[3]} fires every summer day at 03:00 CEST and never in winter. Not a rule
// that can never fire.
func TestElapsedHoursMeetAFilterOnlyInSummer(t *testing.T) {
	rec := &wire.JobRecurrence{Frequency: "Hour", Interval: intp(2), TimeZone: "Europe/Berlin", Schedule: &wire.JobRecurrenceSchedule{Hours: []int{3}}}
	r := mustCompile(t, "2015-01-01T00:00:00", rec, time.Time{})
	spring := time.Date(2015, 1, 1, 0, 0, 0, 0, time.UTC)
	want := utc(t, "2015-03-29T01:00:00Z", "2015-03-30T01:00:00Z", "2015-03-31T01:00:00Z")
	if got := r.Occurrences(spring, 0, 3); format(got) != format(want) {
		t.Errorf("spring: got %s, want %s", format(got), format(want))
	}
	fall := time.Date(2015, 10, 23, 0, 0, 0, 0, time.UTC)
	want = utc(t, "2015-10-23T01:00:00Z", "2015-10-24T01:00:00Z", "2016-03-27T01:00:00Z")
	if got := r.Occurrences(fall, 0, 3); format(got) != format(want) {
		t.Errorf("fall: got %s, want %s", format(got), format(want))
	}
	// In UTC the same rule can never fire.
	rec.TimeZone = ""
	if _, err := Compile("2015-01-01T00:00:00Z", rec, time.Time{}); err == nil ||
		err.Error() != "recurrence.schedule: the rule can never fire: no hour it reaches from 2015-01-01T00:00:00Z (every 2) has a matching day and time" {
		t.Errorf("UTC: Compile error = %v", err)
	}
}
