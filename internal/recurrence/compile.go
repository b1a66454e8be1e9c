package recurrence

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"
)

// Compile validates startTime and rec (nil: no recurrence) and returns the job's rule. created is
// the job's creation time: the anchor when startTime is empty. On invalid input the error is a
// wire.Problems with one entry per violation, paths relative to the job's properties
// ("startTime", "recurrence.schedule.monthDays[2]"), each saying what is allowed.
func Compile(startTime string, rec *wire.JobRecurrence, created time.Time) (*Rule, error) {
	var ps wire.Problems
	add := func(path, format string, args ...any) {
		ps = append(ps, wire.Problem{Path: path, Message: fmt.Sprintf(format, args...)})
	}
	r := &Rule{loc: time.UTC}
	zoneGiven := false
	if rec != nil && rec.TimeZone != "" {
		loc, err := loadZone(rec.TimeZone)
		if err != nil {
			add("recurrence.timeZone", "unknown time zone %q: expected an IANA name such as Europe/Berlin", rec.TimeZone)
		} else {
			r.loc, zoneGiven = loc, true
		}
	}
	if startTime != "" {
		p, err := parseISO(startTime)
		if err != nil {
			add("startTime", "%v", err)
		} else {
			if !zoneGiven && p.hasOffset {
				r.loc = fixedZone(p.offset)
			}
			r.anchor = p.in(r.loc)
			r.hasStart = true
		}
	} else {
		r.anchor = created.In(r.loc)
	}
	r.tzFixed = isFixed(r.loc)
	if r.tzFixed {
		_, off := time.Unix(0, 0).In(r.loc).Zone()
		r.fixedOff = int64(off)
	}
	if rec == nil {
		if len(ps) > 0 {
			return nil, ps
		}
		return r, nil
	}
	r.recurring = true

	freq, freqOK := ParseFrequency(rec.Frequency)
	switch {
	case rec.Frequency == "":
		add("recurrence.frequency", "required: one of Minute, Hour, Day, Week, Month")
	case !freqOK:
		add("recurrence.frequency", "%q is not one of Minute, Hour, Day, Week, Month", rec.Frequency)
	}
	r.freq = freq
	r.interval = 1
	if rec.Interval != nil {
		r.interval = int64(*rec.Interval)
		if freqOK && (*rec.Interval < 1 || *rec.Interval > maxInterval[freq]) {
			add("recurrence.interval", "%d is outside 1..%d for frequency %s", *rec.Interval, maxInterval[freq], freq)
		} else if !freqOK && *rec.Interval < 1 {
			add("recurrence.interval", "%d is less than 1", *rec.Interval)
		}
	}
	if rec.Count != nil {
		if *rec.Count < 1 {
			add("recurrence.count", "%d is less than 1: count is the number of executions, at least 1", *rec.Count)
		}
		r.count = *rec.Count
	}
	endOK := true
	if rec.EndTime != "" {
		p, err := parseISO(rec.EndTime)
		if err != nil {
			add("recurrence.endTime", "%v", err)
			endOK = false
		} else {
			r.end, r.hasEnd = p.in(r.loc), true
			if r.hasStart && r.end.Before(r.anchor) {
				add("recurrence.endTime", "%s is before startTime %s", r.end.Format(time.RFC3339Nano), r.anchor.Format(time.RFC3339Nano))
				endOK = false
			}
		}
	}
	schedOK := compileSchedule(r, rec.Schedule, freqOK, add)
	compileExcludeDates(r, rec.ExcludeDates, add)
	jitterOK := parseJitter(r, rec.Jitter, add)
	if len(ps) > 0 {
		return nil, ps
	}
	r.prepare()
	if jitterOK && !checkJitter(r, add) {
		return nil, ps
	}
	if !endOK || !schedOK {
		return nil, ps
	}
	// A rule that can never fire is an error, not a job that silently never runs.
	first, ok := r.firstCandidate()
	if !ok {
		path := "recurrence"
		if rec.Schedule != nil && !emptySchedule(rec.Schedule) {
			path = "recurrence.schedule"
		}
		add(path, "the rule can never fire: no %s it reaches from %s (every %d) has a matching day and time",
			strings.ToLower(freq.String()), r.anchor.Format(time.RFC3339), r.interval)
		return nil, ps
	}
	if r.hasStart && r.hasEnd && first.After(r.end) {
		add("recurrence.endTime", "the rule never fires between startTime %s and endTime %s: its first execution would be %s",
			r.anchor.Format(time.RFC3339), r.end.Format(time.RFC3339), first.Format(time.RFC3339))
		return nil, ps
	}
	return r, nil
}

// firstCandidate is the first candidate at or after the anchor, endTime ignored.
func (r *Rule) firstCandidate() (time.Time, bool) {
	raw := func(t time.Time) (time.Time, bool) {
		cur := t.Add(time.Nanosecond)
		if r.freq == Minute || r.freq == Hour {
			return r.nextElapsed(cur)
		}
		return r.nextCalendar(cur)
	}
	at, ok := raw(r.anchor.Add(-time.Nanosecond))
	return r.skipExcluded(at, ok, raw)
}

func emptySchedule(s *wire.JobRecurrenceSchedule) bool {
	return len(s.Minutes) == 0 && len(s.Hours) == 0 && len(s.WeekDays) == 0 && len(s.MonthDays) == 0 && len(s.MonthlyOccurrences) == 0
}

// compileSchedule validates s and stores it into r; it reports false when s has problems.
func compileSchedule(r *Rule, s *wire.JobRecurrenceSchedule, freqOK bool, add func(path, format string, args ...any)) bool {
	if s == nil {
		return true
	}
	ok := true
	bad := func(path, format string, args ...any) {
		add(path, format, args...)
		ok = false
	}
	onlyWith := func(name string, n int, want Frequency) {
		if n > 0 && freqOK && r.freq != want {
			bad("recurrence.schedule."+name, "allowed only with frequency %s, not %s", want, r.freq)
		}
	}
	for i, m := range s.Minutes {
		path := fmt.Sprintf("recurrence.schedule.minutes[%d]", i)
		if m < 0 || m > 59 {
			bad(path, "%d is outside 0..59", m)
			continue
		}
		if j := slices.Index(s.Minutes[:i], m); j >= 0 {
			bad(path, "%d is a duplicate of minutes[%d]", m, j)
			continue
		}
		r.minMask |= 1 << m
	}
	for i, h := range s.Hours {
		path := fmt.Sprintf("recurrence.schedule.hours[%d]", i)
		if h < 0 || h > 23 {
			bad(path, "%d is outside 0..23", h)
			continue
		}
		if j := slices.Index(s.Hours[:i], h); j >= 0 {
			bad(path, "%d is a duplicate of hours[%d]", h, j)
			continue
		}
		r.hourMask |= 1 << h
	}
	r.minsSet = len(s.Minutes) > 0
	r.minsGiven = r.minsSet
	r.hoursSet = len(s.Hours) > 0
	r.weekSet = len(s.WeekDays) > 0

	onlyWith("weekDays", len(s.WeekDays), Week)
	if len(s.WeekDays) > 7 {
		bad("recurrence.schedule.weekDays", "at most 7 days, got %d", len(s.WeekDays))
	}
	for i, name := range s.WeekDays {
		path := fmt.Sprintf("recurrence.schedule.weekDays[%d]", i)
		wd, found := ParseWeekday(name)
		if !found {
			bad(path, "%q is not a day of the week: one of %s", name, strings.Join(weekdayNames[:], ", "))
			continue
		}
		bit := uint8(1) << ((int(wd) + 6) % 7)
		if r.weekMask&bit != 0 {
			bad(path, "%q is a duplicate", name)
			continue
		}
		r.weekMask |= bit
	}

	onlyWith("monthDays", len(s.MonthDays), Month)
	for i, d := range s.MonthDays {
		path := fmt.Sprintf("recurrence.schedule.monthDays[%d]", i)
		switch {
		case d >= 1 && d <= 31:
			if r.posDays&(1<<d) != 0 {
				bad(path, "%d is a duplicate", d)
			}
			r.posDays |= 1 << d
		case d <= -1 && d >= -31:
			if r.negDays&(1<<-d) != 0 {
				bad(path, "%d is a duplicate", d)
			}
			r.negDays |= 1 << -d
		default:
			bad(path, "%d is outside -31..-1, 1..31", d)
		}
	}

	onlyWith("monthlyOccurrences", len(s.MonthlyOccurrences), Month)
	for i, o := range s.MonthlyOccurrences {
		path := fmt.Sprintf("recurrence.schedule.monthlyOccurrences[%d]", i)
		wd, found := time.Weekday(0), false
		if o.Day == "" {
			bad(path+".day", "required: one of %s", strings.Join(weekdayNames[:], ", "))
		} else if wd, found = ParseWeekday(o.Day); !found {
			bad(path+".day", "%q is not a day of the week: one of %s", o.Day, strings.Join(weekdayNames[:], ", "))
		}
		var bit uint16 = occEvery
		if o.Occurrence != nil {
			switch n := *o.Occurrence; {
			case n >= 1 && n <= 5:
				bit = 1 << (n - 1)
			case n <= -1 && n >= -5:
				bit = 1 << (-n + 4)
			default:
				bad(path+".Occurrence", "%d is outside -5..-1, 1..5", n)
				continue
			}
		}
		if found {
			r.occ[(int(wd)+6)%7] |= bit
		}
	}
	r.byDays = len(s.MonthDays) > 0 || len(s.MonthlyOccurrences) > 0
	return ok
}

// prepare precomputes the anchor's wall clock and the candidate lists of a valid recurrence.
func (r *Rule) prepare() {
	ws := wallSeconds(r.anchor)
	r.aDay = floorDiv(ws, secondsPerDay)
	sod := int(ws - r.aDay*secondsPerDay)
	r.aHour, r.aMin, r.aSec = sod/3600, sod/60%60, sod%60
	y, m, d := civilFromDays(r.aDay)
	r.aDom = d
	r.aMonth = y*12 + int64(m-1)
	r.aWeek = weekOf(r.aDay)
	if r.weekMask == 0 {
		r.weekMask = 1 << weekdayOf(r.aDay)
	}

	hours := maskList(uint64(r.hourMask), 24)
	mins := maskList(r.minMask, 60)
	switch r.freq {
	case Minute, Hour:
		bucket := int64(60)
		offs := []int64{int64(r.aSec)}
		start := r.anchor.Unix() - int64(r.aSec)
		if r.freq == Hour {
			bucket = 3600
			start -= int64(r.aMin) * 60
			if !r.minsSet {
				mins = []int{r.aMin}
			}
			offs = offs[:0]
			for _, m := range mins {
				offs = append(offs, int64(m*60+r.aSec))
			}
			r.minsSet = false // the minutes are the bucket's offsets, not a filter
		}
		r.b0, r.period, r.offs = start, bucket*r.interval, offs
		if len(hours) == 0 {
			hours = maskList(1<<24-1, 24)
		}
		if len(mins) == 0 || r.freq == Hour {
			mins = maskList(1<<60-1, 60)
		}
		r.hourList, r.minList = hours, mins
		r.hasFilter = r.hoursSet || r.minsSet
	default:
		if len(hours) == 0 {
			if r.minsSet {
				hours = maskList(1<<24-1, 24)
			} else {
				hours = []int{r.aHour}
			}
		}
		if len(mins) == 0 {
			mins = []int{r.aMin}
		}
		for _, h := range hours {
			for _, m := range mins {
				r.tods = append(r.tods, int32(h*3600+m*60+r.aSec))
			}
		}
	}
}

func maskList(mask uint64, n int) []int {
	var out []int
	for i := range n {
		if mask&(1<<i) != 0 {
			out = append(out, i)
		}
	}
	return out
}

// loadZone loads an IANA zone from the embedded data; "Local" and "" are not zone names here.
func loadZone(name string) (*time.Location, error) {
	if name == "Local" || strings.TrimSpace(name) != name {
		return nil, fmt.Errorf("not an IANA zone name: %q", name)
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, fmt.Errorf("load zone %q: %w", name, err)
	}
	return loc, nil
}

// isFixed reports whether loc never changes its offset (UTC, a fixed zone, or a zone without
// transitions after 1970 such as Asia/Kolkata is still treated as variable: only the cheap cases).
func isFixed(loc *time.Location) bool {
	if loc == time.UTC {
		return true
	}
	start, end := time.Unix(0, 0).In(loc).ZoneBounds()
	return start.IsZero() && end.IsZero()
}
