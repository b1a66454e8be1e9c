package recurrence

import (
	"strings"
	"testing"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"
)

func intp(i int) *int { return &i }

// utc parses a list of RFC 3339 instants written out by hand.
func utc(t *testing.T, list ...string) []time.Time {
	t.Helper()
	out := make([]time.Time, len(list))
	for i, s := range list {
		v, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatalf("bad expected instant %q: %v", s, err)
		}
		out[i] = v
	}
	return out
}

func format(ts []time.Time) string {
	s := make([]string, len(ts))
	for i, t := range ts {
		s[i] = t.UTC().Format(time.RFC3339)
	}
	return strings.Join(s, " ")
}

func mustCompile(t *testing.T, start string, rec *wire.JobRecurrence, created time.Time) *Rule {
	t.Helper()
	r, err := Compile(start, rec, created)
	if err != nil {
		t.Fatalf("Compile(%q, %+v): %v", start, rec, err)
	}
	return r
}

func TestStartTimeWorkedExample(t *testing.T) {
	// SPEC 4.3: now 2015-04-08 13:00, startTime 2015-04-07 14:00, Day, interval 2.
	now := time.Date(2015, 4, 8, 13, 0, 0, 0, time.UTC)
	want := utc(t, "2015-04-09T14:00:00Z", "2015-04-11T14:00:00Z", "2015-04-13T14:00:00Z", "2015-04-15T14:00:00Z")
	// The first execution is the same whether startTime is 04-07, 04-05 or 04-01 (the seed says so).
	for _, start := range []string{"2015-04-07T14:00:00Z", "2015-04-05T14:00", "2015-04-01T14:00:00+00:00"} {
		r := mustCompile(t, start, &wire.JobRecurrence{Frequency: "day", Interval: intp(2)}, now)
		if got := r.Occurrences(now, 0, 4); format(got) != format(want) {
			t.Errorf("start %s: got %s, want %s", start, format(got), format(want))
		}
		at, immediate, ok := r.First(now)
		if !ok || immediate || !at.Equal(want[0]) {
			t.Errorf("start %s: First = %v %v %v, want %v false true", start, at, immediate, ok, want[0])
		}
	}
}

func TestSeedJob004(t *testing.T) {
	// seeds/004: startTime 2012-08-04T00:00Z, Week, Mon/Wed/Fri at 10 and 22, count 10, endTime 2012-11-04.
	rec := &wire.JobRecurrence{
		Frequency: "week", Interval: intp(1), Count: intp(10), EndTime: "2012-11-04",
		Schedule: &wire.JobRecurrenceSchedule{WeekDays: []string{"monday", "wednesday", "friday"}, Hours: []int{10, 22}},
	}
	now := time.Date(2012, 8, 1, 9, 0, 0, 0, time.UTC)
	r := mustCompile(t, "2012-08-04T00:00Z", rec, now)
	want := utc(t,
		"2012-08-06T10:00:00Z", "2012-08-06T22:00:00Z", "2012-08-08T10:00:00Z", "2012-08-08T22:00:00Z",
		"2012-08-10T10:00:00Z", "2012-08-10T22:00:00Z", "2012-08-13T10:00:00Z", "2012-08-13T22:00:00Z",
		"2012-08-15T10:00:00Z", "2012-08-15T22:00:00Z")
	if got := r.Occurrences(now, 0, 100); format(got) != format(want) {
		t.Errorf("got  %s\nwant %s", format(got), format(want))
	}
	// Seven executions done: three are left.
	if got := r.Occurrences(now, 7, 100); format(got) != format(want[:3]) {
		t.Errorf("done 7: got %s, want %s", format(got), format(want[:3]))
	}
	// endTime 2012-11-04 00:00 is inclusive and wins over count late in the schedule.
	late := time.Date(2012, 10, 30, 0, 0, 0, 0, time.UTC)
	wantLate := utc(t, "2012-10-31T10:00:00Z", "2012-10-31T22:00:00Z", "2012-11-02T10:00:00Z", "2012-11-02T22:00:00Z")
	if got := r.Occurrences(late, 0, 100); format(got) != format(wantLate) {
		t.Errorf("late: got %s, want %s", format(got), format(wantLate))
	}
}

// The rows of the seeds' "examples: recurrence schedules" table (seeds/000..003), with interval 1
// and the frequency that fits the row, started Tuesday 2015-04-07 14:25 UTC, expected instants
// written out by hand from SPEC 4.2 (which settles the seeds' contradictions: {"hours":[5]} fires
// at 05:25, the start's minute, not 05:00; row 3 fires at 17:15, not 16:15).
var seedRows = []struct {
	name     string
	freq     string
	schedule string // the row's JSON, quotes repaired
	start    string // default 2015-04-07T14:25:00Z
	now      string // default 2015-04-01T00:00:00Z
	want     []string
}{
	{name: "hours 5", freq: "Day", schedule: `{"hours":[5]}`,
		want: []string{"2015-04-08T05:25:00Z", "2015-04-09T05:25:00Z", "2015-04-10T05:25:00Z"}},
	{name: "05:15", freq: "Day", schedule: `{"minutes":[15], "hours":[5]}`,
		want: []string{"2015-04-08T05:15:00Z", "2015-04-09T05:15:00Z", "2015-04-10T05:15:00Z"}},
	{name: "05:15 and 17:15", freq: "Day", schedule: `{"minutes":[15], "hours":[5,17]}`,
		want: []string{"2015-04-07T17:15:00Z", "2015-04-08T05:15:00Z", "2015-04-08T17:15:00Z", "2015-04-09T05:15:00Z"}},
	{name: "05:15 05:45 17:15 17:45", freq: "Day", schedule: `{"minutes":[15,45], "hours":[5,17]}`,
		want: []string{"2015-04-07T17:15:00Z", "2015-04-07T17:45:00Z", "2015-04-08T05:15:00Z", "2015-04-08T05:45:00Z", "2015-04-08T17:15:00Z"}},
	{name: "every 15 minutes", freq: "Day", schedule: `{"minutes":[0,15,30,45]}`,
		want: []string{"2015-04-07T14:30:00Z", "2015-04-07T14:45:00Z", "2015-04-07T15:00:00Z", "2015-04-07T15:15:00Z", "2015-04-07T15:30:00Z"}},
	{name: "every hour at the start's minute", freq: "Day", schedule: `{"hours":[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23]}`,
		want: []string{"2015-04-07T14:25:00Z", "2015-04-07T15:25:00Z", "2015-04-07T16:25:00Z", "2015-04-07T17:25:00Z"}},
	{name: "every hour of every hour list, monthly", freq: "Month", schedule: `{"hours":[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23]}`,
		now:  "2015-04-07T23:00:00Z",
		want: []string{"2015-04-07T23:25:00Z", "2015-05-07T00:25:00Z", "2015-05-07T01:25:00Z"}},
	{name: "on the hour", freq: "Day", schedule: `{"minutes":[0]}`,
		want: []string{"2015-04-07T15:00:00Z", "2015-04-07T16:00:00Z", "2015-04-07T17:00:00Z", "2015-04-07T18:00:00Z"}},
	{name: "on the hour, weekly: every hour of one weekday", freq: "Week", schedule: `{"minutes":[0]}`,
		now:  "2015-04-07T21:30:00Z",
		want: []string{"2015-04-07T22:00:00Z", "2015-04-07T23:00:00Z", "2015-04-14T00:00:00Z", "2015-04-14T01:00:00Z"}},
	{name: "quarter past", freq: "Day", schedule: `{"minutes":[15]}`,
		want: []string{"2015-04-07T15:15:00Z", "2015-04-07T16:15:00Z", "2015-04-07T17:15:00Z", "2015-04-07T18:15:00Z"}},
	{name: "Saturday 17", freq: "Week", schedule: `{"hours":[17], "weekDays":["saturday"]}`,
		want: []string{"2015-04-11T17:25:00Z", "2015-04-18T17:25:00Z", "2015-04-25T17:25:00Z"}},
	{name: "Mon Wed Fri 17", freq: "Week", schedule: `{"hours":[17], "weekDays":["monday", "wednesday", "friday"]}`,
		want: []string{"2015-04-08T17:25:00Z", "2015-04-10T17:25:00Z", "2015-04-13T17:25:00Z", "2015-04-15T17:25:00Z"}},
	{name: "Mon Wed Fri 17:15 17:45", freq: "Week", schedule: `{"minutes":[15,45], "hours":[17], "weekDays":["monday", "wednesday", "friday"]}`,
		want: []string{"2015-04-08T17:15:00Z", "2015-04-08T17:45:00Z", "2015-04-10T17:15:00Z", "2015-04-10T17:45:00Z", "2015-04-13T17:15:00Z"}},
	{name: "Mon Wed Fri 5 and 17", freq: "Week", schedule: `{"hours":[5,17], "weekDays":["monday", "wednesday", "friday"]}`,
		want: []string{"2015-04-08T05:25:00Z", "2015-04-08T17:25:00Z", "2015-04-10T05:25:00Z", "2015-04-10T17:25:00Z", "2015-04-13T05:25:00Z"}},
	{name: "Mon Wed Fri 05:15 05:45 17:15 17:45", freq: "Week", schedule: `{"minutes":[15,45], "hours":[5,17], "weekDays":["monday", "wednesday", "friday"]}`,
		want: []string{"2015-04-08T05:15:00Z", "2015-04-08T05:45:00Z", "2015-04-08T17:15:00Z", "2015-04-08T17:45:00Z", "2015-04-10T05:15:00Z"}},
	{name: "every 15 minutes on weekdays", freq: "Week", schedule: `{"minutes":[0,15,30,45], "weekDays":["monday", "tuesday", "wednesday", "thursday", "friday"]}`,
		want: []string{"2015-04-07T14:30:00Z", "2015-04-07T14:45:00Z", "2015-04-07T15:00:00Z", "2015-04-07T15:15:00Z"}},
	{name: "every 15 minutes on weekdays, over the weekend", freq: "Week", schedule: `{"minutes":[0,15,30,45], "weekDays":["monday", "tuesday", "wednesday", "thursday", "friday"]}`,
		now:  "2015-04-10T23:40:00Z",
		want: []string{"2015-04-10T23:45:00Z", "2015-04-13T00:00:00Z", "2015-04-13T00:15:00Z"}},
	{name: "every 15 minutes 9 to 16:45 on weekdays", freq: "Week", schedule: `{"minutes":[0,15,30,45], "hours": [9, 10, 11, 12, 13, 14, 15, 16], "weekDays":["monday", "tuesday", "wednesday", "thursday", "friday"]}`,
		want: []string{"2015-04-07T14:30:00Z", "2015-04-07T14:45:00Z", "2015-04-07T15:00:00Z", "2015-04-07T15:15:00Z",
			"2015-04-07T15:30:00Z", "2015-04-07T15:45:00Z", "2015-04-07T16:00:00Z", "2015-04-07T16:15:00Z",
			"2015-04-07T16:30:00Z", "2015-04-07T16:45:00Z", "2015-04-08T09:00:00Z", "2015-04-08T09:15:00Z"}},
	{name: "Sundays at the start time", freq: "Week", schedule: `{"weekDays":["sunday"]}`,
		want: []string{"2015-04-12T14:25:00Z", "2015-04-19T14:25:00Z", "2015-04-26T14:25:00Z"}},
	{name: "Tuesdays and Thursdays at the start time", freq: "Week", schedule: `{"weekDays":["tuesday", "thursday"]}`,
		want: []string{"2015-04-07T14:25:00Z", "2015-04-09T14:25:00Z", "2015-04-14T14:25:00Z", "2015-04-16T14:25:00Z"}},
	{name: "28th at 06:00", freq: "Month", schedule: `{"minutes":[0], "hours":[6], "monthDays":[28]}`,
		want: []string{"2015-04-28T06:00:00Z", "2015-05-28T06:00:00Z", "2015-06-28T06:00:00Z"}},
	{name: "last day at 06:00", freq: "Month", schedule: `{"minutes":[0], "hours":[6], "monthDays":[-1]}`,
		want: []string{"2015-04-30T06:00:00Z", "2015-05-31T06:00:00Z", "2015-06-30T06:00:00Z", "2015-07-31T06:00:00Z"}},
	{name: "last day at 06:00 in a leap year", freq: "Month", schedule: `{"minutes":[0], "hours":[6], "monthDays":[-1]}`,
		start: "2016-01-15T14:25:00Z", now: "2016-01-01T00:00:00Z",
		want: []string{"2016-01-31T06:00:00Z", "2016-02-29T06:00:00Z", "2016-03-31T06:00:00Z"}},
	{name: "first and last day at 06:00", freq: "Month", schedule: `{"minutes":[0], "hours":[6], "monthDays":[1,-1]}`,
		want: []string{"2015-04-30T06:00:00Z", "2015-05-01T06:00:00Z", "2015-05-31T06:00:00Z", "2015-06-01T06:00:00Z"}},
	{name: "first and last day at the start time", freq: "Month", schedule: `{"monthDays":[1,-1]}`,
		want: []string{"2015-04-30T14:25:00Z", "2015-05-01T14:25:00Z", "2015-05-31T14:25:00Z", "2015-06-01T14:25:00Z"}},
	{name: "1st and 14th", freq: "Month", schedule: `{"monthDays":[1,14]}`,
		want: []string{"2015-04-14T14:25:00Z", "2015-05-01T14:25:00Z", "2015-05-14T14:25:00Z", "2015-06-01T14:25:00Z"}},
	{name: "2nd", freq: "Month", schedule: `{"monthDays":[2]}`,
		want: []string{"2015-05-02T14:25:00Z", "2015-06-02T14:25:00Z", "2015-07-02T14:25:00Z"}},
	{name: "first Friday at 05:00", freq: "Month", schedule: `{"minutes":[0], "hours":[5], "monthlyOccurrences":[{"day":"friday", "occurrence":1}]}`,
		want: []string{"2015-05-01T05:00:00Z", "2015-06-05T05:00:00Z", "2015-07-03T05:00:00Z"}},
	{name: "first Friday at the start time", freq: "Month", schedule: `{"monthlyOccurrences":[{"day":"friday", "occurrence":1}]}`,
		want: []string{"2015-05-01T14:25:00Z", "2015-06-05T14:25:00Z", "2015-07-03T14:25:00Z"}},
	{name: "third Friday from the end", freq: "Month", schedule: `{"monthlyOccurrences":[{"day":"friday", "occurrence":-3}]}`,
		want: []string{"2015-04-10T14:25:00Z", "2015-05-15T14:25:00Z", "2015-06-12T14:25:00Z"}},
	{name: "first and last Friday at 05:15", freq: "Month", schedule: `{"minutes":[15], "hours":[5], "monthlyOccurrences":[{"day":"friday", "occurrence":1},{"day":"friday", "occurrence":-1}]}`,
		want: []string{"2015-04-24T05:15:00Z", "2015-05-01T05:15:00Z", "2015-05-29T05:15:00Z", "2015-06-05T05:15:00Z", "2015-06-26T05:15:00Z"}},
	{name: "first and last Friday at the start time", freq: "Month", schedule: `{"monthlyOccurrences":[{"day":"friday", "occurrence":1},{"day":"friday", "occurrence":-1}]}`,
		want: []string{"2015-04-24T14:25:00Z", "2015-05-01T14:25:00Z", "2015-05-29T14:25:00Z", "2015-06-05T14:25:00Z"}},
	{name: "fifth Friday, skipped by months without one", freq: "Month", schedule: `{"monthlyOccurrences":[{"day":"friday", "occurrence":5}]}`,
		want: []string{"2015-05-29T14:25:00Z", "2015-07-31T14:25:00Z", "2015-10-30T14:25:00Z"}},
	{name: "every 15 minutes on the last Friday", freq: "Month", schedule: `{"minutes":[0,15,30,45], "monthlyOccurrences":[{"day":"friday", "occurrence":-1}]}`,
		want: []string{"2015-04-24T00:00:00Z", "2015-04-24T00:15:00Z", "2015-04-24T00:30:00Z", "2015-04-24T00:45:00Z", "2015-04-24T01:00:00Z"}},
	{name: "every 15 minutes on the last Friday, end of the day", freq: "Month", schedule: `{"minutes":[0,15,30,45], "monthlyOccurrences":[{"day":"friday", "occurrence":-1}]}`,
		now:  "2015-04-24T23:40:00Z",
		want: []string{"2015-04-24T23:45:00Z", "2015-05-29T00:00:00Z", "2015-05-29T00:15:00Z"}},
	{name: "third Wednesday at 05:15 05:45 17:15 17:45", freq: "Month", schedule: `{"minutes":[15,45], "hours":[5,17], "monthlyOccurrences":[{"day":"wednesday", "occurrence":3}]}`,
		want: []string{"2015-04-15T05:15:00Z", "2015-04-15T05:45:00Z", "2015-04-15T17:15:00Z", "2015-04-15T17:45:00Z", "2015-05-20T05:15:00Z"}},
}

func TestSeedScheduleExamples(t *testing.T) {
	for _, row := range seedRows {
		t.Run(row.name, func(t *testing.T) {
			var sched wire.JobRecurrenceSchedule
			if err := wire.Decode([]byte(row.schedule), &sched); err != nil {
				t.Fatalf("decode %s: %v", row.schedule, err)
			}
			start, now := row.start, row.now
			if start == "" {
				start = "2015-04-07T14:25:00Z"
			}
			if now == "" {
				now = "2015-04-01T00:00:00Z"
			}
			clock := utc(t, now)[0]
			r := mustCompile(t, start, &wire.JobRecurrence{Frequency: row.freq, Schedule: &sched}, clock)
			want := utc(t, row.want...)
			if got := r.Occurrences(clock, 0, len(want)); format(got) != format(want) {
				t.Errorf("got  %s\nwant %s", format(got), format(want))
			}
		})
	}
}

func TestAfterIterates(t *testing.T) {
	r := mustCompile(t, "2015-04-07T14:00:00Z", &wire.JobRecurrence{Frequency: "Day", Interval: intp(2), EndTime: "2015-04-13T14:00:00Z"}, time.Time{})
	var got []time.Time
	for at := range r.After(time.Date(2015, 4, 8, 13, 0, 0, 0, time.UTC)) {
		got = append(got, at)
	}
	if want := utc(t, "2015-04-09T14:00:00Z", "2015-04-11T14:00:00Z", "2015-04-13T14:00:00Z"); format(got) != format(want) {
		t.Errorf("got %s, want %s", format(got), format(want))
	}
	got = got[:0]
	for at := range r.After(time.Date(2015, 4, 8, 13, 0, 0, 0, time.UTC)) {
		got = append(got, at)
		break
	}
	if len(got) != 1 || !got[0].Equal(utc(t, "2015-04-09T14:00:00Z")[0]) {
		t.Errorf("break after the first: got %s", format(got))
	}
}
