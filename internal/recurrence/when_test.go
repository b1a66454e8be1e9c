package recurrence

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"
)

func TestExcludeDatesAndJitterValidation(t *testing.T) {
	const start = "2026-12-01T00:00:00Z"
	many := make([]string, MaxExcludeDates+1)
	for i := range many {
		many[i] = time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, i).Format(time.DateOnly)
	}
	cases := []struct {
		name string
		rec  string
		want wire.Problems
	}{
		{"not a date", `{"frequency":"Day","excludeDates":["2026-12-25","25/12/2026"]}`,
			wire.Problems{{Path: "recurrence.excludeDates[1]", Message: `"25/12/2026" is not a date YYYY-MM-DD such as 2026-12-25`}}},
		{"a date-time", `{"frequency":"Day","excludeDates":["2026-12-25T00:00:00Z"]}`,
			wire.Problems{{Path: "recurrence.excludeDates[0]", Message: `"2026-12-25T00:00:00Z" is not a date YYYY-MM-DD such as 2026-12-25`}}},
		{"no such day", `{"frequency":"Day","excludeDates":["2026-02-30"]}`,
			wire.Problems{{Path: "recurrence.excludeDates[0]", Message: `"2026-02-30" is not a date YYYY-MM-DD such as 2026-12-25`}}},
		{"repeated", `{"frequency":"Day","excludeDates":["2026-12-25","2026-12-26","2026-12-25"]}`,
			wire.Problems{{Path: "recurrence.excludeDates[2]", Message: `"2026-12-25" is a duplicate of excludeDates[0]`}}},
		{"too many", `{"frequency":"Day","excludeDates":["` + strings.Join(many, `","`) + `"]}`,
			wire.Problems{{Path: "recurrence.excludeDates", Message: "1001 dates: at most 1000"}}},
		{"jitter not a duration", `{"frequency":"Day","jitter":"5m"}`,
			wire.Problems{{Path: "recurrence.jitter", Message: `"5m" is not an ISO 8601 duration such as PT5M`}}},
		{"jitter as a time span", `{"frequency":"Day","jitter":"00:05:00"}`,
			wire.Problems{{Path: "recurrence.jitter", Message: `"00:05:00" is not an ISO 8601 duration such as PT5M`}}},
		{"jitter zero", `{"frequency":"Day","jitter":"PT0S"}`,
			wire.Problems{{Path: "recurrence.jitter", Message: "PT0S is not positive: omit jitter for none"}}},
		{"jitter over 12 hours", `{"frequency":"Week","jitter":"PT12H1S"}`,
			wire.Problems{{Path: "recurrence.jitter", Message: "PT12H1S is more than PT12H"}}},
		{"jitter equal to the period", `{"frequency":"Minute","interval":5,"jitter":"PT5M"}`,
			wire.Problems{{Path: "recurrence.jitter", Message: "5m0s is not less than the rule's shortest period between two executions, 5m0s"}}},
		{"jitter above two times of day", `{"frequency":"Day","schedule":{"hours":[9,10]},"jitter":"PT1H"}`,
			wire.Problems{{Path: "recurrence.jitter", Message: "1h0m0s is not less than the rule's shortest period between two executions, 1h0m0s"}}},
		{"jitter above the closest minutes of an hourly rule", `{"frequency":"Hour","schedule":{"minutes":[0,10,30]},"jitter":"PT10M"}`,
			wire.Problems{{Path: "recurrence.jitter", Message: "10m0s is not less than the rule's shortest period between two executions, 10m0s"}}},
		{"jitter above 23:00 to 01:00 the next day", `{"frequency":"Day","schedule":{"hours":[1,23],"minutes":[0]},"jitter":"PT2H"}`,
			wire.Problems{{Path: "recurrence.jitter", Message: "2h0m0s is not less than the rule's shortest period between two executions, 2h0m0s"}}},
		{"all excluded before endTime", `{"frequency":"Day","endTime":"2026-12-02T00:00:00Z","excludeDates":["2026-12-01","2026-12-02"]}`,
			wire.Problems{{Path: "recurrence.endTime", Message: "the rule never fires between startTime 2026-12-01T00:00:00Z and endTime 2026-12-02T00:00:00Z: its first execution would be 2026-12-03T00:00:00Z"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := compileJSON(t, start, tc.rec)
			if got, _ := err.(wire.Problems); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got  %v\nwant %v", err, tc.want)
			}
		})
	}
	for _, ok := range []string{
		`{"frequency":"Day","jitter":"PT12H","excludeDates":["2026-12-25"]}`,
		`{"frequency":"Minute","interval":5,"jitter":"PT4M59S"}`,
		`{"frequency":"Day","interval":2,"schedule":{"hours":[1,23],"minutes":[0]},"jitter":"PT1H59M"}`,
		`{"frequency":"Month","jitter":"P0DT12H"}`,
	} {
		if _, err := compileJSON(t, start, ok); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
}

func TestExcludedDatesAreNotRunAndDoNotCount(t *testing.T) {
	cases := []struct {
		name    string
		start   string
		rec     *wire.JobRecurrence
		now     time.Time
		done, n int
		want    string
	}{
		{"daily, two holidays skipped, count 4 still four runs", "2026-12-23T00:00:00Z",
			&wire.JobRecurrence{Frequency: "Day", Count: intp(4), ExcludeDates: []string{"2026-12-26", "2026-12-25"}},
			time.Date(2026, 12, 22, 0, 0, 0, 0, time.UTC), 0, 10,
			"2026-12-23T00:00:00Z 2026-12-24T00:00:00Z 2026-12-27T00:00:00Z 2026-12-28T00:00:00Z"},
		{"dates in the rule's zone, not UTC", "2026-12-23T23:30:00",
			&wire.JobRecurrence{Frequency: "Day", TimeZone: "Pacific/Auckland", ExcludeDates: []string{"2026-12-25"}},
			time.Date(2026, 12, 22, 0, 0, 0, 0, time.UTC), 0, 3,
			// 23:30 in Auckland (UTC+13) is 10:30 UTC the same day: the 25th in Auckland is skipped.
			"2026-12-23T10:30:00Z 2026-12-24T10:30:00Z 2026-12-26T10:30:00Z"},
		{"every 30 minutes, a whole day skipped", "2026-12-24T23:00:00Z",
			&wire.JobRecurrence{Frequency: "Minute", Interval: intp(30), ExcludeDates: []string{"2026-12-25"}},
			time.Date(2026, 12, 24, 0, 0, 0, 0, time.UTC), 0, 4,
			"2026-12-24T23:00:00Z 2026-12-24T23:30:00Z 2026-12-26T00:00:00Z 2026-12-26T00:30:00Z"},
		{"weekly on Fridays, consecutive excluded Fridays", "2026-12-04T09:00:00Z",
			&wire.JobRecurrence{Frequency: "Week", ExcludeDates: []string{"2026-12-11", "2026-12-18", "2026-12-25"}},
			time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC), 0, 3,
			"2026-12-04T09:00:00Z 2027-01-01T09:00:00Z 2027-01-08T09:00:00Z"},
		{"no startTime: the run at creation is on an excluded date", "",
			&wire.JobRecurrence{Frequency: "Hour", Interval: intp(12), ExcludeDates: []string{"2015-04-07"}},
			time.Date(2015, 4, 7, 14, 25, 0, 0, time.UTC), 0, 2,
			"2015-04-08T02:25:00Z 2015-04-08T14:25:00Z"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := mustCompile(t, tc.start, tc.rec, time.Date(2015, 4, 7, 14, 25, 0, 0, time.UTC))
			if got := format(r.Occurrences(tc.now, tc.done, tc.n)); got != tc.want {
				t.Errorf("Occurrences\ngot  %s\nwant %s", got, tc.want)
			}
		})
	}
}

func TestDescribeJitterAndExcludedDates(t *testing.T) {
	for _, tc := range []struct {
		rec  *wire.JobRecurrence
		want string
	}{
		{&wire.JobRecurrence{Frequency: "Day", Jitter: "PT5M", ExcludeDates: []string{"2026-12-25", "2026-12-26", "2027-01-01"}},
			"at 00:00 every day, up to 5 minutes later, except 3 dates, from 2026-12-01 00:00"},
		{&wire.JobRecurrence{Frequency: "Day", Count: intp(5), ExcludeDates: []string{"2026-12-25"}},
			"at 00:00 every day, except 2026-12-25, 5 times, from 2026-12-01 00:00"},
		{&wire.JobRecurrence{Frequency: "Week", Jitter: "PT1H30M"},
			"at 00:00, Tuesday, up to 1 hour and 30 minutes later, from 2026-12-01 00:00"},
		{&wire.JobRecurrence{Frequency: "Minute", Interval: intp(2), Jitter: "PT1.5S"},
			"every 2 minutes, up to 1500 milliseconds later, from 2026-12-01 00:00"},
	} {
		r := mustCompile(t, "2026-12-01T00:00:00Z", tc.rec, time.Time{})
		if got := Describe(r); got != tc.want {
			t.Errorf("%+v\ngot  %q\nwant %q", *tc.rec, got, tc.want)
		}
	}
}

func ExampleDescribe_holidays() {
	r, err := Compile("2026-12-01T00:00:00Z", &wire.JobRecurrence{Frequency: "Day", Jitter: "PT5M",
		ExcludeDates: []string{"2026-12-24", "2026-12-25", "2026-12-31"}}, time.Time{})
	if err != nil {
		panic(err)
	}
	fmt.Println(Describe(r))
	// Output: at 00:00 every day, up to 5 minutes later, except 3 dates, from 2026-12-01 00:00
}
