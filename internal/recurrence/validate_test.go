package recurrence

import (
	"reflect"
	"testing"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"
)

// compileJSON decodes a recurrence written as JSON and compiles it.
func compileJSON(t *testing.T, start, rec string) (*Rule, error) {
	t.Helper()
	var r *wire.JobRecurrence
	if rec != "" {
		r = new(wire.JobRecurrence)
		if err := wire.Decode([]byte(rec), r); err != nil {
			t.Fatalf("decode %s: %v", rec, err)
		}
	}
	return Compile(start, r, time.Date(2015, 4, 7, 14, 25, 0, 0, time.UTC))
}

func TestValidation(t *testing.T) {
	const start = "2015-04-07T14:25:00Z"
	cases := []struct {
		name  string
		start string
		rec   string
		want  wire.Problems
	}{
		{"frequency missing", start, `{"interval":2}`,
			wire.Problems{{Path: "recurrence.frequency", Message: "required: one of Minute, Hour, Day, Week, Month"}}},
		{"frequency year", start, `{"frequency":"year"}`,
			wire.Problems{{Path: "recurrence.frequency", Message: `"year" is not one of Minute, Hour, Day, Week, Month`}}},
		{"frequency monthly", start, `{"frequency":"monthly"}`,
			wire.Problems{{Path: "recurrence.frequency", Message: `"monthly" is not one of Minute, Hour, Day, Week, Month`}}},
		{"interval 0", start, `{"frequency":"Minute","interval":0}`,
			wire.Problems{{Path: "recurrence.interval", Message: "0 is outside 1..1000 for frequency Minute"}}},
		{"interval Month 19", start, `{"frequency":"Month","interval":19}`,
			wire.Problems{{Path: "recurrence.interval", Message: "19 is outside 1..18 for frequency Month"}}},
		{"interval Week 79", start, `{"frequency":"Week","interval":79}`,
			wire.Problems{{Path: "recurrence.interval", Message: "79 is outside 1..78 for frequency Week"}}},
		{"interval Day 549", start, `{"frequency":"Day","interval":549}`,
			wire.Problems{{Path: "recurrence.interval", Message: "549 is outside 1..548 for frequency Day"}}},
		{"interval Hour 1001", start, `{"frequency":"Hour","interval":1001}`,
			wire.Problems{{Path: "recurrence.interval", Message: "1001 is outside 1..1000 for frequency Hour"}}},
		{"interval negative, frequency unknown", start, `{"frequency":"Fortnight","interval":-1}`,
			wire.Problems{{Path: "recurrence.frequency", Message: `"Fortnight" is not one of Minute, Hour, Day, Week, Month`}, {Path: "recurrence.interval", Message: "-1 is less than 1"}}},
		{"count 0", start, `{"frequency":"Day","count":0}`,
			wire.Problems{{Path: "recurrence.count", Message: "0 is less than 1: count is the number of executions, at least 1"}}},
		{"endTime before startTime", start, `{"frequency":"Day","endTime":"2015-04-06"}`,
			wire.Problems{{Path: "recurrence.endTime", Message: "2015-04-06T00:00:00Z is before startTime 2015-04-07T14:25:00Z"}}},
		{"endTime unreadable", start, `{"frequency":"Day","endTime":"tomorrow"}`,
			wire.Problems{{Path: "recurrence.endTime", Message: `"tomorrow" is not an ISO 8601 date-time such as 2012-08-04T00:00:00Z or a date such as 2012-11-04: expected the year as YYYY-`}}},
		{"startTime unreadable", "2015-13-01", `{"frequency":"Day"}`,
			wire.Problems{{Path: "startTime", Message: `"2015-13-01" is not an ISO 8601 date-time such as 2012-08-04T00:00:00Z or a date such as 2012-11-04: month 13 is outside 1..12`}}},
		{"startTime unreadable without recurrence", "2015-04-31T10:00Z", ``,
			wire.Problems{{Path: "startTime", Message: `"2015-04-31T10:00Z" is not an ISO 8601 date-time such as 2012-08-04T00:00:00Z or a date such as 2012-11-04: day 31 is outside 1..30`}}},
		{"unknown timeZone", start, `{"frequency":"Day","timeZone":"Mars/Olympus_Mons"}`,
			wire.Problems{{Path: "recurrence.timeZone", Message: `unknown time zone "Mars/Olympus_Mons": expected an IANA name such as Europe/Berlin`}}},
		{"timeZone Local", start, `{"frequency":"Day","timeZone":"Local"}`,
			wire.Problems{{Path: "recurrence.timeZone", Message: `unknown time zone "Local": expected an IANA name such as Europe/Berlin`}}},
		{"minutes", start, `{"frequency":"Day","schedule":{"minutes":[0,60,-1,0]}}`,
			wire.Problems{
				{Path: "recurrence.schedule.minutes[1]", Message: "60 is outside 0..59"},
				{Path: "recurrence.schedule.minutes[2]", Message: "-1 is outside 0..59"},
				{Path: "recurrence.schedule.minutes[3]", Message: "0 is a duplicate of minutes[0]"}}},
		{"hours", start, `{"frequency":"Day","schedule":{"hours":[24,5,5]}}`,
			wire.Problems{
				{Path: "recurrence.schedule.hours[0]", Message: "24 is outside 0..23"},
				{Path: "recurrence.schedule.hours[2]", Message: "5 is a duplicate of hours[1]"}}},
		{"weekDays with Day", start, `{"frequency":"Day","schedule":{"weekDays":["monday"]}}`,
			wire.Problems{{Path: "recurrence.schedule.weekDays", Message: "allowed only with frequency Week, not Day"}}},
		{"weekDays unknown and duplicate", start, `{"frequency":"Week","schedule":{"weekDays":["Monday","funday","MONDAY"]}}`,
			wire.Problems{
				{Path: "recurrence.schedule.weekDays[1]", Message: `"funday" is not a day of the week: one of Monday, Tuesday, Wednesday, Thursday, Friday, Saturday, Sunday`},
				{Path: "recurrence.schedule.weekDays[2]", Message: `"MONDAY" is a duplicate`}}},
		{"weekDays more than 7", start, `{"frequency":"Week","schedule":{"weekDays":["monday","tuesday","wednesday","thursday","friday","saturday","sunday","monday"]}}`,
			wire.Problems{
				{Path: "recurrence.schedule.weekDays", Message: "at most 7 days, got 8"},
				{Path: "recurrence.schedule.weekDays[7]", Message: `"monday" is a duplicate`}}},
		{"monthDays", start, `{"frequency":"Month","schedule":{"monthDays":[1,0,32,-32,-1,1]}}`,
			wire.Problems{
				{Path: "recurrence.schedule.monthDays[1]", Message: "0 is outside -31..-1, 1..31"},
				{Path: "recurrence.schedule.monthDays[2]", Message: "32 is outside -31..-1, 1..31"},
				{Path: "recurrence.schedule.monthDays[3]", Message: "-32 is outside -31..-1, 1..31"},
				{Path: "recurrence.schedule.monthDays[5]", Message: "1 is a duplicate"}}},
		{"monthDays with Week", start, `{"frequency":"Week","schedule":{"monthDays":[1]}}`,
			wire.Problems{{Path: "recurrence.schedule.monthDays", Message: "allowed only with frequency Month, not Week"}}},
		{"monthlyOccurrences", start, `{"frequency":"Month","schedule":{"monthlyOccurrences":[{"occurrence":1},{"day":"Caturday"},{"day":"friday","occurrence":6},{"day":"friday","occurrence":0},{"day":"friday","occurrence":-6}]}}`,
			wire.Problems{
				{Path: "recurrence.schedule.monthlyOccurrences[0].day", Message: "required: one of Monday, Tuesday, Wednesday, Thursday, Friday, Saturday, Sunday"},
				{Path: "recurrence.schedule.monthlyOccurrences[1].day", Message: `"Caturday" is not a day of the week: one of Monday, Tuesday, Wednesday, Thursday, Friday, Saturday, Sunday`},
				{Path: "recurrence.schedule.monthlyOccurrences[2].Occurrence", Message: "6 is outside -5..-1, 1..5"},
				{Path: "recurrence.schedule.monthlyOccurrences[3].Occurrence", Message: "0 is outside -5..-1, 1..5"},
				{Path: "recurrence.schedule.monthlyOccurrences[4].Occurrence", Message: "-6 is outside -5..-1, 1..5"}}},
		{"monthlyOccurrences with Day", start, `{"frequency":"Day","schedule":{"monthlyOccurrences":[{"day":"friday"}]}}`,
			wire.Problems{{Path: "recurrence.schedule.monthlyOccurrences", Message: "allowed only with frequency Month, not Day"}}},
		{"all problems at once", "2015-04-07T14:25Z", `{"frequency":"Month","interval":0,"count":-3,"schedule":{"minutes":[1,2,60],"monthDays":[5,6,32]}}`,
			wire.Problems{
				{Path: "recurrence.interval", Message: "0 is outside 1..18 for frequency Month"},
				{Path: "recurrence.count", Message: "-3 is less than 1: count is the number of executions, at least 1"},
				{Path: "recurrence.schedule.minutes[2]", Message: "60 is outside 0..59"},
				{Path: "recurrence.schedule.monthDays[2]", Message: "32 is outside -31..-1, 1..31"}}},
		{"never fires: Month every 12 from February on the 30th", "2015-02-10T08:00:00Z", `{"frequency":"Month","interval":12,"schedule":{"monthDays":[30]}}`,
			wire.Problems{{Path: "recurrence.schedule", Message: "the rule can never fire: no month it reaches from 2015-02-10T08:00:00Z (every 12) has a matching day and time"}}},
		{"never fires: Month every 12 from April on the -31st", "2015-04-10T08:00:00Z", `{"frequency":"Month","interval":12,"schedule":{"monthDays":[-31]}}`,
			wire.Problems{{Path: "recurrence.schedule", Message: "the rule can never fire: no month it reaches from 2015-04-10T08:00:00Z (every 12) has a matching day and time"}}},
		{"never fires: every 2 minutes on odd minutes from an even one", "2015-04-07T14:24:00Z", `{"frequency":"Minute","interval":2,"schedule":{"minutes":[1,3,59]}}`,
			wire.Problems{{Path: "recurrence.schedule", Message: "the rule can never fire: no minute it reaches from 2015-04-07T14:24:00Z (every 2) has a matching day and time"}}},
		{"nothing before endTime", start, `{"frequency":"Month","schedule":{"monthDays":[2]},"endTime":"2015-04-30T00:00:00Z"}`,
			wire.Problems{{Path: "recurrence.endTime", Message: "the rule never fires between startTime 2015-04-07T14:25:00Z and endTime 2015-04-30T00:00:00Z: its first execution would be 2015-05-02T14:25:00Z"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, err := compileJSON(t, c.start, c.rec)
			if r != nil {
				t.Errorf("Compile returned a rule for invalid input")
			}
			ps, ok := err.(wire.Problems)
			if !ok {
				t.Fatalf("error %v (%T) is not wire.Problems", err, err)
			}
			if !reflect.DeepEqual(ps, c.want) {
				t.Errorf("problems:\n%v\nwant:\n%v", ps, c.want)
			}
		})
	}
}

func TestValidRulesAccepted(t *testing.T) {
	cases := []struct{ start, rec string }{
		{"2015-04-07T14:25:00Z", `{"frequency":"WEEK","schedule":{"weekDays":["mOnDaY","Sunday"]}}`},
		{"2015-04-07T14:25:00Z", `{"frequency":"month","interval":18,"schedule":{"monthlyOccurrences":[{"day":"FRIDAY","occurrence":-5}]}}`},
		{"2015-04-07T14:25:00Z", `{"frequency":"Day","interval":548,"schedule":{}}`},
		{"2015-04-07T14:25:00Z", `{"frequency":"Minute","interval":1000,"count":1,"endTime":"2015-04-07T14:25:00Z"}`},
		{"2015-04-07T14:25:00Z", `{"frequency":"Week","interval":78,"timeZone":"America/Santiago"}`},
		// Fires on leap years only: every 12 months from February, on the 29th.
		{"2015-02-10T08:00:00Z", `{"frequency":"Month","interval":12,"schedule":{"monthDays":[29]}}`},
		// Every 2 months from April on the 31st: June no, August yes.
		{"2015-04-10T08:00:00Z", `{"frequency":"Month","interval":2,"schedule":{"monthDays":[31]}}`},
		{"", `{"frequency":"Hour","endTime":"2000-01-01"}`}, // no startTime: the run at creation happens; a past endTime is not an error
		{"2015-04-07", ``},
	}
	for _, c := range cases {
		if _, err := compileJSON(t, c.start, c.rec); err != nil {
			t.Errorf("Compile(%q, %s): %v", c.start, c.rec, err)
		}
	}
	// Leap-year-only rule: the next execution after 2015 is 2016-02-29, then 2020-02-29.
	r, err := compileJSON(t, "2015-02-10T08:00:00Z", `{"frequency":"Month","interval":12,"schedule":{"monthDays":[29]}}`)
	if err != nil {
		t.Fatal(err)
	}
	got := r.Occurrences(time.Date(2015, 1, 1, 0, 0, 0, 0, time.UTC), 0, 2)
	if want := utc(t, "2016-02-29T08:00:00Z", "2020-02-29T08:00:00Z"); format(got) != format(want) {
		t.Errorf("leap-year rule: got %s, want %s", format(got), format(want))
	}
}

func TestEmptyScheduleIsNoSchedule(t *testing.T) {
	now := time.Date(2015, 4, 1, 0, 0, 0, 0, time.UTC)
	a, err := compileJSON(t, "2015-04-07T14:25:00Z", `{"frequency":"Week","schedule":{"minutes":[],"weekDays":[]}}`)
	if err != nil {
		t.Fatal(err)
	}
	want := utc(t, "2015-04-07T14:25:00Z", "2015-04-14T14:25:00Z", "2015-04-21T14:25:00Z")
	if got := a.Occurrences(now, 0, 3); format(got) != format(want) {
		t.Errorf("got %s, want %s", format(got), format(want))
	}
}

func TestParseTime(t *testing.T) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		in   string
		loc  *time.Location
		want string
	}{
		{"2012-08-04T00:00Z", nil, "2012-08-04T00:00:00Z"},
		{"2012-11-04", nil, "2012-11-04T00:00:00Z"},
		{"2012-11-04", berlin, "2012-11-04T00:00:00+01:00"},
		{"2013-01-09T09:30:00-08:00", nil, "2013-01-09T09:30:00-08:00"},
		{"2013-01-09T09:30:00-08:00", berlin, "2013-01-09T18:30:00+01:00"},
		{"2015-04-07T14:00:00.125+01:00", nil, "2015-04-07T14:00:00.125+01:00"},
		{"2015-04-07T14:00:00.123456789123Z", nil, "2015-04-07T14:00:00.123456789Z"},
		{"2015-04-07T14:00", nil, "2015-04-07T14:00:00Z"},
		{"2015-04-07T14:00:30", berlin, "2015-04-07T14:00:30+02:00"},
		{"2015-03-29T02:30:00", berlin, "2015-03-29T03:30:00+02:00"},
		{"2015-10-25T02:30:00", berlin, "2015-10-25T02:30:00+02:00"},
		{"2016-02-29T23:59:59+05:45", nil, "2016-02-29T23:59:59+05:45"},
	}
	for _, c := range cases {
		got, err := ParseTime(c.in, c.loc)
		if err != nil || got.Format(time.RFC3339Nano) != c.want {
			t.Errorf("ParseTime(%q, %v) = %s, %v; want %s", c.in, c.loc, got.Format(time.RFC3339Nano), err, c.want)
		}
	}
	for _, bad := range []string{"", "2015", "2015-4-7", "2015-04-07T", "2015-04-07T14", "2015-04-07T24:00",
		"2015-04-07T14:60", "2015-04-07T14:00:60", "2015-02-29", "2015-04-07 14:00", "2015-04-07T14:00+1",
		"2015-04-07T14:00:00.Z", "2015-04-07T14:00:00Zjunk", "2015-04-07T14:00:00+24:00", "yesterday"} {
		if got, err := ParseTime(bad, nil); err == nil {
			t.Errorf("ParseTime(%q) = %v, want an error", bad, got)
		}
	}
}

// SPEC 4.3: when a job executes.
func TestWhenAJobExecutes(t *testing.T) {
	now := time.Date(2015, 4, 8, 13, 0, 0, 0, time.UTC)
	type first struct {
		at        string
		immediate bool
		ok        bool
	}
	cases := []struct {
		name      string
		start     string
		rec       string
		created   time.Time
		done      int
		wantFirst first
		want      []string
	}{
		{"no recurrence, no startTime: once, immediately", "", "", now, 0,
			first{"2015-04-08T13:00:00Z", true, true}, []string{"2015-04-08T13:00:00Z"}},
		{"no recurrence, already ran", "", "", now, 1,
			first{"2015-04-08T13:00:00Z", true, true}, nil},
		{"no recurrence, startTime past: once, immediately", "2015-04-07T14:00:00Z", "", now, 0,
			first{"2015-04-08T13:00:00Z", true, true}, []string{"2015-04-08T13:00:00Z"}},
		{"no recurrence, startTime future: once at startTime", "2015-04-09T14:00:00+02:00", "", now, 0,
			first{"2015-04-09T12:00:00Z", false, true}, []string{"2015-04-09T12:00:00Z"}},
		{"no recurrence, startTime now: once at startTime", "2015-04-08T13:00:00Z", "", now, 0,
			first{"2015-04-08T13:00:00Z", false, true}, []string{"2015-04-08T13:00:00Z"}},
		{"recurrence, no startTime: immediately, then the candidates after it", "", `{"frequency":"Hour","count":3}`,
			now.Add(30*time.Second + 500*time.Millisecond), 0,
			first{"2015-04-08T13:00:00Z", true, true}, []string{"2015-04-08T13:00:00Z", "2015-04-08T14:00:30Z", "2015-04-08T15:00:30Z"}},
		{"recurrence, no startTime, after an update with executions done: no repeat of the immediate run", "", `{"frequency":"Hour","count":3}`,
			now.Add(-90 * time.Minute), 1,
			first{"2015-04-08T13:00:00Z", true, true}, []string{"2015-04-08T13:30:00Z", "2015-04-08T14:30:00Z"}},
		{"recurrence, startTime past: candidates at or after now", "2015-04-07T14:00:00Z", `{"frequency":"Hour","interval":5}`, now, 0,
			first{"2015-04-08T15:00:00Z", false, true}, []string{"2015-04-08T15:00:00Z", "2015-04-08T20:00:00Z"}},
		{"recurrence, startTime past, a candidate exactly now", "2015-04-07T13:00:00Z", `{"frequency":"Hour","interval":3}`, now, 0,
			first{"2015-04-08T13:00:00Z", false, true}, []string{"2015-04-08T13:00:00Z", "2015-04-08T16:00:00Z"}},
		{"recurrence, startTime future and not a candidate", "2015-04-09T14:00:00Z", `{"frequency":"Week","schedule":{"weekDays":["monday"]}}`, now, 0,
			first{"2015-04-13T14:00:00Z", false, true}, []string{"2015-04-13T14:00:00Z", "2015-04-20T14:00:00Z"}},
		{"endTime inclusive", "2015-04-07T14:00:00Z", `{"frequency":"Day","endTime":"2015-04-10T14:00:00Z"}`, now, 0,
			first{"2015-04-08T14:00:00Z", false, true}, []string{"2015-04-08T14:00:00Z", "2015-04-09T14:00:00Z", "2015-04-10T14:00:00Z"}},
		{"count wins over endTime", "2015-04-07T14:00:00Z", `{"frequency":"Day","count":2,"endTime":"2015-04-10T14:00:00Z"}`, now, 0,
			first{"2015-04-08T14:00:00Z", false, true}, []string{"2015-04-08T14:00:00Z", "2015-04-09T14:00:00Z"}},
		{"count spent", "2015-04-07T14:00:00Z", `{"frequency":"Day","count":2}`, now, 2,
			first{"2015-04-08T14:00:00Z", false, true}, nil},
		{"endTime passed", "2015-04-01T14:00:00Z", `{"frequency":"Day","endTime":"2015-04-05"}`, now, 0,
			first{"", false, false}, nil},
		{"no startTime, endTime passed", "", `{"frequency":"Day","endTime":"2015-04-05"}`, now, 0,
			first{"", false, false}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var rec *wire.JobRecurrence
			if c.rec != "" {
				rec = new(wire.JobRecurrence)
				if err := wire.Decode([]byte(c.rec), rec); err != nil {
					t.Fatal(err)
				}
			}
			r := mustCompile(t, c.start, rec, c.created)
			at, immediate, ok := r.First(now)
			gotFirst := first{"", immediate, ok}
			if ok {
				gotFirst.at = at.UTC().Format(time.RFC3339)
			}
			if gotFirst != c.wantFirst {
				t.Errorf("First = %+v, want %+v", gotFirst, c.wantFirst)
			}
			n := 10 // enough to see count and endTime end the list
			if !r.hasEnd && r.count == 0 && r.recurring {
				n = len(c.want) // unbounded: the first few
			}
			if got := r.Occurrences(now, c.done, n); format(got) != format(utc(t, c.want...)) {
				t.Errorf("Occurrences = %s, want %s", format(got), format(utc(t, c.want...)))
			}
		})
	}
}

func TestRuleAccessors(t *testing.T) {
	r, err := compileJSON(t, "2015-04-07T14:25:00+05:45", `{"frequency":"week","interval":2,"count":7,"endTime":"2015-06-01T00:00:00"}`)
	if err != nil {
		t.Fatal(err)
	}
	end, hasEnd := r.EndTime()
	if !r.Recurring() || !r.HasStartTime() || r.Frequency() != Week || r.Interval() != 2 || r.Count() != 7 || !hasEnd ||
		r.Anchor().Format(time.RFC3339) != "2015-04-07T14:25:00+05:45" || end.Format(time.RFC3339) != "2015-06-01T00:00:00+05:45" {
		t.Errorf("accessors: %v %v %v %v %v %v %v %v", r.Recurring(), r.HasStartTime(), r.Frequency(), r.Interval(), r.Count(), r.Anchor(), end, hasEnd)
	}
	// Without a timeZone the zone is the startTime's offset; with one, the zone wins.
	if _, off := time.Date(2015, 1, 1, 0, 0, 0, 0, r.Location()).Zone(); off != 5*3600+45*60 {
		t.Errorf("Location offset %d", off)
	}
	r, err = compileJSON(t, "2015-04-07T14:25:00+05:45", `{"frequency":"Day","timeZone":"Europe/Berlin"}`)
	if err != nil {
		t.Fatal(err)
	}
	if r.Location().String() != "Europe/Berlin" || r.Anchor().Format(time.RFC3339) != "2015-04-07T10:40:00+02:00" {
		t.Errorf("zone %v anchor %v", r.Location(), r.Anchor())
	}
}
