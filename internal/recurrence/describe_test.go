package recurrence

import (
	"testing"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"
)

// Every row of the seeds' table of recurrence schedules (seedRows), described.
var seedDescriptions = map[string]string{
	"hours 5":                                "at 05:25 every day, from 2015-04-07 14:25",
	"05:15":                                  "at 05:15 every day, from 2015-04-07 14:25",
	"05:15 and 17:15":                        "at 05:15 and 17:15 every day, from 2015-04-07 14:25",
	"05:15 05:45 17:15 17:45":                "at 05:15, 05:45, 17:15 and 17:45 every day, from 2015-04-07 14:25",
	"every 15 minutes":                       "at :00, :15, :30 and :45 past every hour, every day, from 2015-04-07 14:25",
	"every hour at the start's minute":       "at :25 past every hour, every day, from 2015-04-07 14:25",
	"every hour of every hour list, monthly": "at :25 past every hour on day 7 of every month, from 2015-04-07 14:25",
	"on the hour":                            "at :00 past every hour, every day, from 2015-04-07 14:25",
	"on the hour, weekly: every hour of one weekday": "at :00 past every hour, Tuesday, from 2015-04-07 14:25",
	"quarter past":                                        "at :15 past every hour, every day, from 2015-04-07 14:25",
	"Saturday 17":                                         "at 17:25, Saturday, from 2015-04-07 14:25",
	"Mon Wed Fri 17":                                      "at 17:25, Monday, Wednesday and Friday, from 2015-04-07 14:25",
	"Mon Wed Fri 17:15 17:45":                             "at 17:15 and 17:45, Monday, Wednesday and Friday, from 2015-04-07 14:25",
	"Mon Wed Fri 5 and 17":                                "at 05:25 and 17:25, Monday, Wednesday and Friday, from 2015-04-07 14:25",
	"Mon Wed Fri 05:15 05:45 17:15 17:45":                 "at 05:15, 05:45, 17:15 and 17:45, Monday, Wednesday and Friday, from 2015-04-07 14:25",
	"every 15 minutes on weekdays":                        "at :00, :15, :30 and :45 past every hour, Monday to Friday, from 2015-04-07 14:25",
	"every 15 minutes on weekdays, over the weekend":      "at :00, :15, :30 and :45 past every hour, Monday to Friday, from 2015-04-07 14:25",
	"every 15 minutes 9 to 16:45 on weekdays":             "at :00, :15, :30 and :45 past the hours 09 to 16, Monday to Friday, from 2015-04-07 14:25",
	"Sundays at the start time":                           "at 14:25, Sunday, from 2015-04-07 14:25",
	"Tuesdays and Thursdays at the start time":            "at 14:25, Tuesday and Thursday, from 2015-04-07 14:25",
	"28th at 06:00":                                       "at 06:00 on day 28 of every month, from 2015-04-07 14:25",
	"last day at 06:00":                                   "at 06:00 on the last day of every month, from 2015-04-07 14:25",
	"last day at 06:00 in a leap year":                    "at 06:00 on the last day of every month, from 2016-01-15 14:25",
	"first and last day at 06:00":                         "at 06:00 on day 1 and the last day of every month, from 2015-04-07 14:25",
	"first and last day at the start time":                "at 14:25 on day 1 and the last day of every month, from 2015-04-07 14:25",
	"1st and 14th":                                        "at 14:25 on day 1 and day 14 of every month, from 2015-04-07 14:25",
	"2nd":                                                 "at 14:25 on day 2 of every month, from 2015-04-07 14:25",
	"first Friday at 05:00":                               "at 05:00 on the first Friday of every month, from 2015-04-07 14:25",
	"first Friday at the start time":                      "at 14:25 on the first Friday of every month, from 2015-04-07 14:25",
	"third Friday from the end":                           "at 14:25 on the third to last Friday of every month, from 2015-04-07 14:25",
	"first and last Friday at 05:15":                      "at 05:15 on the first Friday and the last Friday of every month, from 2015-04-07 14:25",
	"first and last Friday at the start time":             "at 14:25 on the first Friday and the last Friday of every month, from 2015-04-07 14:25",
	"fifth Friday, skipped by months without one":         "at 14:25 on the fifth Friday of every month, from 2015-04-07 14:25",
	"every 15 minutes on the last Friday":                 "at :00, :15, :30 and :45 past every hour on the last Friday of every month, from 2015-04-07 14:25",
	"every 15 minutes on the last Friday, end of the day": "at :00, :15, :30 and :45 past every hour on the last Friday of every month, from 2015-04-07 14:25",
	"third Wednesday at 05:15 05:45 17:15 17:45":          "at 05:15, 05:45, 17:15 and 17:45 on the third Wednesday of every month, from 2015-04-07 14:25",
}

func TestDescribeSeedScheduleExamples(t *testing.T) {
	for _, row := range seedRows {
		t.Run(row.name, func(t *testing.T) {
			want, ok := seedDescriptions[row.name]
			if !ok {
				t.Fatalf("no description written for seed row %q", row.name)
			}
			var sched wire.JobRecurrenceSchedule
			if err := wire.Decode([]byte(row.schedule), &sched); err != nil {
				t.Fatalf("decode %s: %v", row.schedule, err)
			}
			start := row.start
			if start == "" {
				start = "2015-04-07T14:25:00Z"
			}
			r := mustCompile(t, start, &wire.JobRecurrence{Frequency: row.freq, Schedule: &sched}, time.Now())
			if got := Describe(r); got != want {
				t.Errorf("Describe\n got %q\nwant %q", got, want)
			}
		})
	}
	if len(seedDescriptions) != len(seedRows) {
		t.Errorf("%d descriptions for %d seed rows", len(seedDescriptions), len(seedRows))
	}
}

func TestDescribe(t *testing.T) {
	created := time.Date(2026, 11, 23, 10, 41, 37, 0, time.UTC) // a Monday
	for _, tc := range []struct {
		name  string
		start string
		rec   *wire.JobRecurrence
		want  string
	}{
		{"issue: weekdays twice a day in Berlin", "", &wire.JobRecurrence{Frequency: "Week", TimeZone: "Europe/Berlin",
			Schedule: &wire.JobRecurrenceSchedule{WeekDays: []string{"monday", "Tuesday", "wednesday", "thursday", "friday"}, Hours: []int{17, 9}, Minutes: []int{0}}},
			"at 09:00 and 17:00, Monday to Friday, Europe/Berlin"},
		{"issue: last Friday", "", &wire.JobRecurrence{Frequency: "Month",
			Schedule: &wire.JobRecurrenceSchedule{Hours: []int{5}, Minutes: []int{15},
				MonthlyOccurrences: []wire.JobRecurrenceScheduleMonthlyOccurrence{{Day: "friday", Occurrence: intp(-1)}}}},
			"at 05:15 on the last Friday of every month"},
		{"issue: every 15 minutes, 5 times", "2026-12-01T08:00:00Z", &wire.JobRecurrence{Frequency: "Minute", Interval: intp(15), Count: intp(5)},
			"every 15 minutes, 5 times, from 2026-12-01 08:00"},
		{"seeds/004: Mon Wed Fri at 10 and 22, count and end", "2012-08-04T00:00Z", &wire.JobRecurrence{Frequency: "week", Interval: intp(1), Count: intp(10), EndTime: "2012-11-04",
			Schedule: &wire.JobRecurrenceSchedule{WeekDays: []string{"monday", "wednesday", "friday"}, Hours: []int{10, 22}}},
			"at 10:00 and 22:00, Monday, Wednesday and Friday, 10 times, from 2012-08-04 00:00, until 2012-11-04 00:00"},
		{"SPEC 4.3: every other day", "2015-04-07T14:00:00Z", &wire.JobRecurrence{Frequency: "day", Interval: intp(2)},
			"at 14:00 every 2 days, from 2015-04-07 14:00"},
		{"once at a time", "2026-12-01T07:30:00-05:00", nil, "once at 2026-12-01 07:30, UTC-05:00"},
		{"once, immediately", "", nil, "once, when the job is created"},
		{"an offset start: its zone", "2026-12-01T07:30:00-05:00", &wire.JobRecurrence{Frequency: "Day", Count: intp(1)},
			"at 07:30 every day, once, from 2026-12-01 07:30, UTC-05:00"},
		{"seconds of the start", "2026-12-01T07:30:15Z", &wire.JobRecurrence{Frequency: "Week", Interval: intp(3), Schedule: &wire.JobRecurrenceSchedule{WeekDays: []string{"saturday", "sunday"}}},
			"at 07:30:15, Saturday and Sunday, every 3 weeks, from 2026-12-01 07:30:15"},
		{"every hour", "", &wire.JobRecurrence{Frequency: "Hour"}, "every hour"},
		{"every hour at the start's minute", "2026-12-01T07:30:00Z", &wire.JobRecurrence{Frequency: "Hour"}, "every hour at :30, from 2026-12-01 07:30"},
		{"every 2 hours at :00 and :30 in office hours", "", &wire.JobRecurrence{Frequency: "Hour", Interval: intp(2),
			Schedule: &wire.JobRecurrenceSchedule{Minutes: []int{30, 0}, Hours: []int{8, 10, 12, 14, 16}}},
			"every 2 hours at :00 and :30, in the hours 08, 10, 12, 14 and 16"},
		{"every minute at :00 and :30 from 9 to 17", "", &wire.JobRecurrence{Frequency: "Minute",
			Schedule: &wire.JobRecurrenceSchedule{Minutes: []int{0, 30}, Hours: []int{9, 10, 11, 12, 13, 14, 15, 16, 17}}},
			"every minute, at :00 and :30 past the hour, in the hours 09 to 17"},
		{"every 15 minutes until an end", "2026-12-01T08:00:00Z", &wire.JobRecurrence{Frequency: "Minute", Interval: intp(15), EndTime: "2026-12-01T12:00:00+01:00", TimeZone: "Europe/Berlin"},
			"every 15 minutes, from 2026-12-01 09:00, until 2026-12-01 12:00, Europe/Berlin"},
		{"daily without start: the creation's time", "", &wire.JobRecurrence{Frequency: "Day"}, "at the time of day it was created, every day"},
		{"weekly without start: the creation's week day", "", &wire.JobRecurrence{Frequency: "Week", Schedule: &wire.JobRecurrenceSchedule{Hours: []int{6}, Minutes: []int{0}}},
			"at 06:00, on the week day it was created"},
		{"monthly without start: the creation's day", "", &wire.JobRecurrence{Frequency: "Month", Interval: intp(3), Schedule: &wire.JobRecurrenceSchedule{Hours: []int{6}}},
			"at the minute it was created past the hour 06, on the day of the month it was created, every 3 months"},
		{"week days naming the creation's day", "", &wire.JobRecurrence{Frequency: "Week", Schedule: &wire.JobRecurrenceSchedule{WeekDays: []string{"monday"}, Minutes: []int{0}, Hours: []int{6}}},
			"at 06:00, Monday"},
		{"every day of the week", "2026-12-01T07:30:00Z", &wire.JobRecurrence{Frequency: "Week", Schedule: &wire.JobRecurrenceSchedule{WeekDays: []string{"sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday"}}},
			"at 07:30, every day of the week, from 2026-12-01 07:30"},
		{"month days from the end and every Monday", "2026-12-01T07:30:00Z", &wire.JobRecurrence{Frequency: "Month", Schedule: &wire.JobRecurrenceSchedule{
			MonthDays: []int{-2, 15, -1, 1}, MonthlyOccurrences: []wire.JobRecurrenceScheduleMonthlyOccurrence{{Day: "monday"}, {Day: "sunday", Occurrence: intp(2)}, {Day: "sunday", Occurrence: intp(-5)}}}},
			"at 07:30 on day 1, day 15, the second to last day, the last day, every Monday, the second Sunday and the fifth to last Sunday of every month, from 2026-12-01 07:30"},
		{"the 22nd to last day", "2026-12-01T07:30:00Z", &wire.JobRecurrence{Frequency: "Month", Schedule: &wire.JobRecurrenceSchedule{MonthDays: []int{-22, -11}}},
			"at 07:30 on the 22nd to last day and the 11th to last day of every month, from 2026-12-01 07:30"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := mustCompile(t, tc.start, tc.rec, created)
			if got := Describe(r); got != tc.want {
				t.Errorf("Describe\n got %q\nwant %q", got, tc.want)
			}
			// The words do not depend on when the rule was compiled (the provider compares them).
			if again := Describe(mustCompile(t, tc.start, tc.rec, created.Add(50*time.Hour+17*time.Minute))); again != tc.want {
				t.Errorf("compiled 50 h later: %q", again)
			}
		})
	}
	if Describe(nil) != "" {
		t.Error("Describe(nil) is not empty")
	}
}
