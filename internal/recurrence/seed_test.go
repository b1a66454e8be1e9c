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
