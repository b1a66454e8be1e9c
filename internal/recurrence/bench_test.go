package recurrence

import (
	"testing"
	"time"

	"github.com/teambition/rrule-go"

	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"
)

// Speed, side by side with github.com/teambition/rrule-go on the same rules:
//
//	go test -run '^$' -bench . -benchmem ./internal/recurrence
//
// BenchmarkNext: the next execution after an arbitrary instant for every seed schedule example,
// the rule started yesterday or ten years ago. BenchmarkNext1000: the next 1,000 executions of
// weekly Mon/Wed/Fri at 10:00 and 22:00.

var benchNow = time.Date(2025, 6, 15, 12, 0, 0, 0, time.UTC)

// rruleOf is the rrule-go equivalent of a seed row started at start (UTC).
func rruleOf(tb testing.TB, freq string, s *wire.JobRecurrenceSchedule, start time.Time) *rrule.RRule {
	tb.Helper()
	opt := rrule.ROption{Dtstart: start, Interval: 1, Wkst: rrule.MO, Bysecond: []int{start.Second()}}
	switch freq {
	case "Day":
		opt.Freq = rrule.DAILY
	case "Week":
		opt.Freq = rrule.WEEKLY
	case "Month":
		opt.Freq = rrule.MONTHLY
	}
	switch {
	case len(s.Hours) > 0:
		opt.Byhour = s.Hours
	case len(s.Minutes) > 0:
		opt.Byhour = []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23}
	default:
		opt.Byhour = []int{start.Hour()}
	}
	opt.Byminute = s.Minutes
	if len(opt.Byminute) == 0 {
		opt.Byminute = []int{start.Minute()}
	}
	days := []rrule.Weekday{rrule.SU, rrule.MO, rrule.TU, rrule.WE, rrule.TH, rrule.FR, rrule.SA}
	for _, d := range s.WeekDays {
		wd, _ := ParseWeekday(d)
		opt.Byweekday = append(opt.Byweekday, days[wd])
	}
	for _, o := range s.MonthlyOccurrences {
		wd, _ := ParseWeekday(o.Day)
		if o.Occurrence != nil {
			opt.Byweekday = append(opt.Byweekday, days[wd].Nth(*o.Occurrence))
		} else {
			opt.Byweekday = append(opt.Byweekday, days[wd])
		}
	}
	opt.Bymonthday = s.MonthDays
	r, err := rrule.NewRRule(opt)
	if err != nil {
		tb.Fatalf("rrule: %v", err)
	}
	return r
}

func seedSchedule(tb testing.TB, js string) *wire.JobRecurrenceSchedule {
	tb.Helper()
	var s wire.JobRecurrenceSchedule
	if err := wire.Decode([]byte(js), &s); err != nil {
		tb.Fatal(err)
	}
	return &s
}

// afterInstants are arbitrary instants after benchNow to ask Next from.
func afterInstants() []time.Time {
	out := make([]time.Time, 256)
	for i := range out {
		out[i] = benchNow.Add(time.Duration(i)*(37*time.Hour+13*time.Minute) + time.Duration(i*7)*time.Second)
	}
	return out
}

var benchStarts = []struct {
	name  string
	start time.Time
}{
	{"yesterday", time.Date(2025, 6, 14, 14, 25, 0, 0, time.UTC)},
	{"10y", time.Date(2015, 6, 14, 14, 25, 0, 0, time.UTC)},
}

// TestRRuleAgreesOnSeedRows checks that the benchmarks compare equal work: on every seed row the
// rrule-go rule gives the engine's instants.
func TestRRuleAgreesOnSeedRows(t *testing.T) {
	for _, row := range seedRows {
		s := seedSchedule(t, row.schedule)
		start := benchStarts[0].start
		r := mustCompile(t, start.Format(time.RFC3339), &wire.JobRecurrence{Frequency: row.freq, Schedule: s}, benchNow)
		rr := rruleOf(t, row.freq, s, start)
		at, atRR := benchNow, benchNow
		for range 20 {
			var ok bool
			at, ok = r.Next(at)
			atRR = rr.After(atRR, false)
			if !ok || !at.Equal(atRR) {
				t.Errorf("%s: engine %v, rrule-go %v", row.name, at, atRR)
				break
			}
		}
	}
}

func BenchmarkNext(b *testing.B) {
	afters := afterInstants()
	for _, row := range seedRows {
		if row.start != "" || row.now != "" {
			continue // same schedule as another row
		}
		s := seedSchedule(b, row.schedule)
		for _, st := range benchStarts {
			r := mustCompileB(b, st.start.Format(time.RFC3339), &wire.JobRecurrence{Frequency: row.freq, Schedule: s})
			b.Run(row.name+"/start="+st.name+"/engine", func(b *testing.B) {
				b.ReportAllocs()
				for i := 0; b.Loop(); i++ {
					if _, ok := r.Next(afters[i&255]); !ok {
						b.Fatal("no next")
					}
				}
			})
			rr := rruleOf(b, row.freq, s, st.start)
			b.Run(row.name+"/start="+st.name+"/rrule-go", func(b *testing.B) {
				b.ReportAllocs()
				for i := 0; b.Loop(); i++ {
					if rr.After(afters[i&255], false).IsZero() {
						b.Fatal("no next")
					}
				}
			})
		}
	}
}

func BenchmarkNext1000(b *testing.B) {
	s := &wire.JobRecurrenceSchedule{WeekDays: []string{"monday", "wednesday", "friday"}, Hours: []int{10, 22}}
	for _, st := range benchStarts {
		r := mustCompileB(b, st.start.Format(time.RFC3339), &wire.JobRecurrence{Frequency: "Week", Schedule: s})
		b.Run("weekly-MWF-10-22/start="+st.name+"/engine", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				at := benchNow
				for range 1000 {
					var ok bool
					if at, ok = r.Next(at); !ok {
						b.Fatal("no next")
					}
				}
			}
		})
		rr := rruleOf(b, "Week", s, st.start)
		b.Run("weekly-MWF-10-22/start="+st.name+"/rrule-go", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				at := benchNow
				for range 1000 {
					if at = rr.After(at, false); at.IsZero() {
						b.Fatal("no next")
					}
				}
			}
		})
	}
}

// BenchmarkNextZone is Next in a zone with daylight saving, asked around its transitions.
func BenchmarkNextZone(b *testing.B) {
	afters := make([]time.Time, 256)
	for i := range afters {
		// Every 97 minutes from a day before Berlin's 2025 spring-forward, and so on.
		afters[i] = time.Date(2025, 3, 29, 0, 0, 0, 0, time.UTC).Add(time.Duration(i) * 97 * time.Minute)
	}
	cases := []struct {
		name string
		rec  *wire.JobRecurrence
	}{
		{"Day-every-15-minutes", &wire.JobRecurrence{Frequency: "Day", TimeZone: "Europe/Berlin", Schedule: &wire.JobRecurrenceSchedule{Minutes: []int{0, 15, 30, 45}}}},
		{"Week-MWF-10-22", &wire.JobRecurrence{Frequency: "Week", TimeZone: "Europe/Berlin", Schedule: &wire.JobRecurrenceSchedule{WeekDays: []string{"monday", "wednesday", "friday"}, Hours: []int{10, 22}}}},
		{"Hour-9-to-17", &wire.JobRecurrence{Frequency: "Hour", TimeZone: "Europe/Berlin", Schedule: &wire.JobRecurrenceSchedule{Hours: []int{9, 10, 11, 12, 13, 14, 15, 16, 17}}}},
	}
	for _, c := range cases {
		r := mustCompileB(b, "2015-06-14T14:25:00", c.rec)
		b.Run(c.name+"/Europe-Berlin", func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				if _, ok := r.Next(afters[i&255]); !ok {
					b.Fatal("no next")
				}
			}
		})
	}
}

func mustCompileB(b *testing.B, start string, rec *wire.JobRecurrence) *Rule {
	b.Helper()
	r, err := Compile(start, rec, benchNow)
	if err != nil {
		b.Fatal(err)
	}
	return r
}

// BenchmarkCompile is validation: the seed job's rule, and the costliest kind of rule to reject,
// a Minute rule whose filters its period never meets (searched over 400 days).
func BenchmarkCompile(b *testing.B) {
	odd := make([]int, 0, 30)
	for m := 1; m < 60; m += 2 {
		odd = append(odd, m)
	}
	cases := []struct {
		name, start string
		rec         *wire.JobRecurrence
		valid       bool
	}{
		{"seed-job", "2012-08-04T00:00Z", &wire.JobRecurrence{Frequency: "week", Count: intp(10), EndTime: "2012-11-04",
			Schedule: &wire.JobRecurrenceSchedule{WeekDays: []string{"monday", "wednesday", "friday"}, Hours: []int{10, 22}}}, true},
		{"never-fires-minute", "2015-04-07T14:24:00", &wire.JobRecurrence{Frequency: "Minute", Interval: intp(2), TimeZone: "Europe/Berlin",
			Schedule: &wire.JobRecurrenceSchedule{Minutes: odd}}, false},
		{"never-fires-month", "2015-02-10T08:00:00Z", &wire.JobRecurrence{Frequency: "Month", Interval: intp(12),
			Schedule: &wire.JobRecurrenceSchedule{MonthDays: []int{30}}}, false},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Compile(c.start, c.rec, benchNow); (err == nil) != c.valid {
					b.Fatalf("Compile: %v", err)
				}
			}
		})
	}
}
