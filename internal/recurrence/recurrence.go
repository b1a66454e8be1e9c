// Package recurrence is the schedule engine shared by the daemon and the provider: it validates a
// job's startTime and recurrence (SPEC 4.1) and computes when the job runs (SPEC 3, 4.2, 4.3).
// It does no I/O and never reads the wall clock: callers pass "now".
//
// Candidates are computed arithmetically: Next jumps to the right period (day, Monday-based week,
// month, or elapsed minute/hour bucket), then to the right day through precomputed bitmasks, then
// to the right time of day through a precomputed sorted list, and allocates nothing.
//
// Decisions where SPEC is silent, fixed here:
//   - Minute and Hour frequencies count elapsed time (SPEC 4.2 rule 1), so an hourly job runs 25
//     times on a fall-back day and 23 on a spring-forward day; their hours and minutes filters are
//     read on the wall clock of each elapsed-time candidate (a repeated wall hour matches twice, a
//     skipped one never). Hour buckets start at the anchor's wall-clock hour, which assumes
//     whole-hour daylight-saving shifts (all zones but Australia/Lord_Howe).
//   - Day, Week and Month candidates are wall-clock times; the daylight-saving rule of SPEC 4.2
//     turns each into exactly one instant.
//   - A rule that can never fire is an error at "recurrence.schedule" (or "recurrence"). Month
//     rules are searched over 400 years (the Gregorian cycle); Minute and Hour rules with hours or
//     minutes filters over 400 days. With a startTime, a schedule whose first candidate lies after
//     endTime is an error at "recurrence.endTime". Without a startTime the job runs once at
//     creation anyway, so a past endTime is not an error there: the job simply completes.
package recurrence

import (
	"iter"
	"math/bits"
	"slices"
	"strconv"
	"time"
	_ "time/tzdata" // zone data is embedded: no system tzdata needed (SPEC 3).

	"github.com/schedulerhq/terraform-provider-scheduler/internal/ascii"
)

// Frequency is a recurrence's bucket size.
type Frequency uint8

// Frequencies, in Azure spelling order.
const (
	Minute Frequency = iota + 1
	Hour
	Day
	Week
	Month
)

var freqNames = [...]string{Minute: "Minute", Hour: "Hour", Day: "Day", Week: "Week", Month: "Month"}

// maxInterval is SPEC 4.1's upper bound of interval per frequency.
var maxInterval = [...]int{Minute: 1000, Hour: 1000, Day: 548, Week: 78, Month: 18}

// String is the Azure spelling ("Week").
func (f Frequency) String() string {
	if f >= Minute && f <= Month {
		return freqNames[f]
	}
	return "Frequency(" + strconv.Itoa(int(f)) + ")"
}

// Duration is the nominal length of one bucket (a month counts as 31 days, a day as 24 hours),
// for comparing a rule with a quota's maxRecurrence.
func (f Frequency) Duration() time.Duration {
	switch f {
	case Minute:
		return time.Minute
	case Hour:
		return time.Hour
	case Day:
		return 24 * time.Hour
	case Week:
		return 7 * 24 * time.Hour
	case Month:
		return 31 * 24 * time.Hour
	}
	return 0
}

// ParseFrequency reads a frequency case-insensitively ("week", "WEEK").
func ParseFrequency(s string) (Frequency, bool) {
	for f := Minute; f <= Month; f++ {
		if ascii.EqualFold(s, freqNames[f]) {
			return f, true
		}
	}
	return 0, false
}

var weekdayNames = [7]string{"Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"}

// ParseWeekday reads a day name case-insensitively and returns it as a time.Weekday.
func ParseWeekday(s string) (time.Weekday, bool) {
	for i, n := range weekdayNames {
		if ascii.EqualFold(s, n) {
			return time.Weekday((i + 1) % 7), true
		}
	}
	return 0, false
}

// Rule is a compiled, valid schedule. It is immutable and safe for concurrent use.
type Rule struct {
	recurring bool
	hasStart  bool
	anchor    time.Time // A, in loc
	loc       *time.Location
	tzFixed   bool  // loc has no transitions (UTC or a fixed offset)
	fixedOff  int64 // loc's offset in seconds when tzFixed

	freq     Frequency
	interval int64
	count    int
	end      time.Time
	hasEnd   bool

	// a, the anchor's wall clock in loc.
	aDay   int64 // day number of a's date
	aWeek  int64
	aMonth int64 // year*12 + month-1
	aHour  int
	aMin   int
	aSec   int
	aDom   int // a's day of the month

	// Day, Week, Month.
	tods     []int32 // sorted seconds of the day of every (hour, minute) candidate
	weekMask uint8   // bit i: weekday i (Monday = 0)
	weekSet  bool    // weekDays given (else weekMask is the anchor's week day)
	byDays   bool    // monthDays or monthlyOccurrences given
	posDays  uint32  // bit d: monthDays d (1..31)
	negDays  uint32  // bit k: monthDays -k (1..31)
	occ      [7]uint16

	// Minute, Hour.
	b0        int64   // unix second at which the anchor's bucket starts
	period    int64   // seconds per interval
	offs      []int64 // sorted offsets (seconds) of candidates in a bucket
	hoursSet  bool
	hourMask  uint32
	minsSet   bool // Minute frequency only
	minsGiven bool // minutes given in the schedule (any frequency)
	minMask   uint64
	hourList  []int
	minList   []int
	hasFilter bool

	excluded []int64       // sorted day numbers of excludeDates
	jitter   time.Duration // recurrence.jitter, 0: none
}

// occurrence bits of Rule.occ: bits 0..4 are occurrences 1..5, bits 5..9 are -1..-5, bit 10 is
// "every such weekday".
const occEvery = 1 << 10

// Recurring reports whether the job has a recurrence.
func (r *Rule) Recurring() bool { return r.recurring }

// HasStartTime reports whether the job has a startTime (else the anchor is the creation time).
func (r *Rule) HasStartTime() bool { return r.hasStart }

// Anchor is the startTime, or the creation time when there is none, in Location().
func (r *Rule) Anchor() time.Time { return r.anchor }

// Frequency is the recurrence's frequency, 0 when there is no recurrence.
func (r *Rule) Frequency() Frequency { return r.freq }

// Interval is the recurrence's interval, 0 when there is no recurrence.
func (r *Rule) Interval() int { return int(r.interval) }

// Count is the recurrence's count, 0 when unlimited.
func (r *Rule) Count() int { return r.count }

// EndTime is the recurrence's endTime (inclusive) in the rule's zone; ok is false when there is none.
func (r *Rule) EndTime() (t time.Time, ok bool) { return r.end, r.hasEnd }

// FixedZone reports whether Location has no transitions (UTC or a fixed offset): wall clock and
// elapsed time then move together.
func (r *Rule) FixedZone() bool { return r.tzFixed }

// MinGap returns a lower bound of the time between two consecutive candidates, when the rule has
// candidates it knows exactly (ok false otherwise): Minute and Hour rules without an hours or
// minutes filter (elapsed time: the interval, or the closest two minutes of an Hour rule's),
// and, in a FixedZone, Day rules at one time of day without week days (exactly the interval),
// Week rules at one time on one day of the week (exactly the interval) and Month rules at one
// time on the anchor's day of the month (at least 28 days per month of the interval).
func (r *Rule) MinGap() (time.Duration, bool) {
	if !r.recurring {
		return 0, false
	}
	switch r.freq {
	case Minute, Hour:
		if r.hasFilter {
			return 0, false
		}
		// Every bucket has the same candidates: the closest two are neighbours in one bucket or
		// the last of one and the first of the next.
		gap := r.period - r.offs[len(r.offs)-1] + r.offs[0]
		for i := 1; i < len(r.offs); i++ {
			gap = min(gap, r.offs[i]-r.offs[i-1])
		}
		return time.Duration(gap) * time.Second, true
	}
	if !r.tzFixed || len(r.tods) != 1 || r.byDays {
		return 0, false
	}
	var days int64
	switch {
	case r.freq == Day && !r.weekSet:
		days = r.interval
	case r.freq == Week && bits.OnesCount8(r.weekMask) == 1:
		days = 7 * r.interval
	case r.freq == Month:
		days = 28 * r.interval
	default:
		return 0, false
	}
	return time.Duration(days) * 24 * time.Hour, true
}

// Location is the zone Z the rule works in (SPEC 4.2): timeZone, else the fixed offset written in
// startTime, else UTC. Anchor and EndTime are returned in it, so formatting them with
// time.RFC3339 gives the normalized form the daemon returns.
func (r *Rule) Location() *time.Location { return r.loc }

// First returns the first execution of a job scheduled at now, per the table of SPEC 4.3; ok is
// false when nothing is left to run. immediate reports whether that execution is the "once,
// immediately" run (at == now).
//
//   - No recurrence: now (immediate) when there is no startTime or it is before now, else startTime.
//   - Recurrence without startTime: now (immediate), unless now is after endTime. This is the run
//     at creation: on enable or after an update use Next(now - 1ns) instead, which never repeats it.
//   - Recurrence with startTime: the first candidate at or after both now and startTime
//     (Next(now - 1ns)); past candidates are discarded, none is run late.
//
// First does not apply count (count ≥ 1 always allows the first execution).
func (r *Rule) First(now time.Time) (at time.Time, immediate bool, ok bool) {
	now = now.In(r.loc)
	if !r.recurring {
		if !r.hasStart || r.anchor.Before(now) {
			return now, true, true
		}
		return r.anchor, false, true
	}
	if !r.hasStart {
		if r.hasEnd && now.After(r.end) {
			return time.Time{}, false, false
		}
		if r.Excluded(now) {
			// The run at creation falls on an excluded date: the first candidate after it instead.
			at, ok = r.Next(now)
			return at, false, ok
		}
		return now, true, true
	}
	at, ok = r.Next(now.Add(-time.Nanosecond))
	return at, false, ok
}

// Next returns the first candidate strictly after t that is not before the anchor, not after
// endTime and not on an excluded date, in Location(); ok is false when there is none. It does not
// apply count: the caller knows how many executions happened. Without a recurrence the only
// candidate is startTime (none when there is no startTime). Next allocates nothing.
func (r *Rule) Next(t time.Time) (time.Time, bool) {
	at, ok := r.next(t)
	return r.skipExcluded(at, ok, r.next)
}

// next is Next without excluded dates.
func (r *Rule) next(t time.Time) (time.Time, bool) {
	if !r.recurring {
		if r.hasStart && r.anchor.After(t) {
			return r.anchor, true
		}
		return time.Time{}, false
	}
	cur := t.Add(time.Nanosecond)
	if cur.Before(r.anchor) {
		cur = r.anchor
	}
	var (
		at time.Time
		ok bool
	)
	if r.freq == Minute || r.freq == Hour {
		at, ok = r.nextElapsed(cur)
	} else {
		at, ok = r.nextCalendar(cur)
	}
	if !ok || (r.hasEnd && at.After(r.end)) {
		return time.Time{}, false
	}
	return at, true
}

// After iterates over the candidates strictly after t, in order, as Next would return them one
// by one (endTime applies, count does not). It stops when there are none left or the loop breaks.
func (r *Rule) After(t time.Time) iter.Seq[time.Time] {
	return func(yield func(time.Time) bool) {
		for {
			at, ok := r.Next(t)
			if !ok || !yield(at) {
				return
			}
			t = at
		}
	}
}

// Occurrences returns up to n executions of a job created (or last updated) at now that has
// already executed done times, per SPEC 4.3, honouring count and endTime. With done == 0 and no
// startTime the first is the immediate run at now (as First); otherwise they are the candidates
// at or after now.
func (r *Rule) Occurrences(now time.Time, done, n int) []time.Time {
	if n <= 0 {
		return nil
	}
	now = now.In(r.loc)
	if !r.recurring {
		if done > 0 {
			return nil
		}
		at, _, _ := r.First(now)
		return []time.Time{at}
	}
	if r.count > 0 {
		left := r.count - done
		if left <= 0 {
			return nil
		}
		n = min(n, left)
	}
	out := make([]time.Time, 0, min(n, 1024))
	t := now.Add(-time.Nanosecond)
	if done == 0 && !r.hasStart {
		at, immediate, ok := r.First(now)
		if !ok {
			return nil
		}
		if immediate {
			out = append(out, at)
		}
		t = now
	}
	for len(out) < n {
		at, ok := r.Next(t)
		if !ok {
			break
		}
		out = append(out, at)
		t = at
	}
	return out
}

// nextCalendar is Next for Day, Week and Month: the earliest wall-clock candidate whose instant
// is at or after cur.
func (r *Rule) nextCalendar(cur time.Time) (time.Time, bool) {
	if r.tzFixed {
		// Wall clock and instants move together: the first wall candidate is the answer.
		ws := cur.Unix() + r.fixedOff
		if cur.Nanosecond() != 0 {
			ws++
		}
		n := floorDiv(ws, secondsPerDay)
		d, tod, ok := r.nextWall(n, ws-n*secondsPerDay)
		if !ok {
			return time.Time{}, false
		}
		return time.Unix(d*secondsPerDay+tod-r.fixedOff, 0).In(r.loc), true
	}
	scan := cur.In(r.loc)
	if !r.tzFixed {
		// Wall times in a spring-forward gap map to instants just after it: when cur lies within
		// a gap's length after a transition, start scanning from the wall clock before the gap.
		if start, _ := scan.ZoneBounds(); !start.IsZero() {
			_, off := scan.Zone()
			_, prev := start.Add(-time.Nanosecond).Zone()
			if gap := off - prev; gap > 0 && scan.Sub(start) < time.Duration(gap)*time.Second {
				scan = start.Add(-time.Nanosecond)
			}
		}
	}
	ws := wallSeconds(scan)
	if scan.Nanosecond() != 0 {
		ws++
	}
	n := floorDiv(ws, secondsPerDay)
	sod := ws - n*secondsPerDay
	var best time.Time
	found := false
	for range 5000 {
		d, tod, ok := r.nextWall(n, sod)
		if !ok {
			break
		}
		y, m, dd := civilFromDays(d)
		inst := wallToInstant(y, m, dd, int(tod/3600), int(tod/60%60), int(tod%60), 0, r.loc)
		if !inst.Before(cur) && (!found || inst.Before(best)) {
			best, found = inst, true
		}
		if found && d*secondsPerDay+tod >= wallSeconds(best) {
			break
		}
		n, sod = d, tod+1
	}
	return best, found
}

// nextWall is the first wall-clock candidate (day number, second of day) at or after (n, sod).
func (r *Rule) nextWall(n, sod int64) (int64, int64, bool) {
	for range 2 {
		d, ok := r.nextDay(n)
		if !ok {
			return 0, 0, false
		}
		if d != n {
			sod = 0
		}
		if i, _ := slices.BinarySearch(r.tods, int32(min(sod, secondsPerDay))); i < len(r.tods) {
			return d, int64(r.tods[i]), true
		}
		n, sod = d+1, 0
	}
	return 0, 0, false
}

// nextDay is the first day number ≥ n (and ≥ the anchor's date) that the period and day rules allow.
func (r *Rule) nextDay(n int64) (int64, bool) {
	n = max(n, r.aDay)
	switch r.freq {
	case Day:
		if rem := floorMod(n-r.aDay, r.interval); rem != 0 {
			n += r.interval - rem
		}
		return n, true
	case Week:
		for range 4 {
			w := weekOf(n)
			if rem := floorMod(w-r.aWeek, r.interval); rem != 0 {
				n = mondayOf(w + r.interval - rem)
			}
			if m := r.weekMask >> weekdayOf(n); m != 0 {
				return n + int64(bits.TrailingZeros8(m)), true
			}
			n = mondayOf(weekOf(n) + 1)
		}
		return 0, false
	case Month:
		y, m, d := civilFromDays(n)
		mi := y*12 + int64(m-1)
		if rem := floorMod(mi-r.aMonth, r.interval); rem != 0 {
			mi += r.interval - rem
			d = 1
		}
		for range 4801 {
			yy := floorDiv(mi, 12)
			mm := int(mi-yy*12) + 1
			if mask := r.monthMask(yy, mm) >> uint(d); mask != 0 {
				return daysFromCivil(yy, mm, d+bits.TrailingZeros32(mask)), true
			}
			mi += r.interval
			d = 1
		}
	}
	return 0, false
}

// monthMask has bit d set for every day d of month m of year y that the Month day rule allows.
func (r *Rule) monthMask(y int64, m int) uint32 {
	length := daysIn(y, m)
	valid := uint32(1)<<(length+1) - 2 // bits 1..length
	if !r.byDays {
		return uint32(1) << r.aDom & valid
	}
	mask := r.posDays & valid
	for neg := r.negDays; neg != 0; neg &= neg - 1 {
		k := bits.TrailingZeros32(neg)
		if k <= length {
			mask |= 1 << (length + 1 - k)
		}
	}
	first := daysFromCivil(y, m, 1)
	wd1 := weekdayOf(first)
	for wd, o := range r.occ {
		if o == 0 {
			continue
		}
		firstDay := 1 + (wd-wd1+7)%7
		howMany := (length-firstDay)/7 + 1
		if o&occEvery != 0 {
			for i := range howMany {
				mask |= 1 << (firstDay + 7*i)
			}
			continue
		}
		for k := 1; k <= 5; k++ {
			if k > howMany {
				break
			}
			if o&(1<<(k-1)) != 0 {
				mask |= 1 << (firstDay + 7*(k-1))
			}
			if o&(1<<(k+4)) != 0 {
				mask |= 1 << (firstDay + 7*(howMany-k))
			}
		}
	}
	return mask
}

// nextElapsed is Next for Minute and Hour: candidates are elapsed-time buckets counted from the
// anchor's, filtered by the wall clock's hour (and minute, for Minute).
func (r *Rule) nextElapsed(cur time.Time) (time.Time, bool) {
	cs := cur.Unix()
	if cur.Nanosecond() != 0 {
		cs++
	}
	limit := cs + 400*secondsPerDay
	for cs <= limit {
		k := max(floorDiv(cs-r.b0, r.period), 0)
		base := r.b0 + k*r.period
		i, _ := slices.BinarySearch(r.offs, cs-base)
		if i == len(r.offs) {
			base += r.period
			i = 0
		}
		u := base + r.offs[i]
		t := time.Unix(u, 0).In(r.loc)
		if !r.hasFilter {
			return t, true
		}
		ws := wallSeconds(t)
		sod := floorMod(ws, secondsPerDay)
		h, mi := int(sod/3600), int(sod/60%60)
		if r.hourOK(h) && (r.freq == Hour || r.minuteOK(mi)) {
			return t, true
		}
		// Jump to the next wall-clock slot the filters allow. Within one zone period wall clock
		// and elapsed time move together; never jump across a transition, re-read the wall
		// clock there instead (a fall-back repeats slots, a spring-forward skips some).
		nh, nm, dayAdd := r.nextSlot(h, mi)
		target := (floorDiv(ws, secondsPerDay)+dayAdd)*secondsPerDay + int64(nh*3600+nm*60)
		next := u + target - ws
		if !r.tzFixed {
			if _, end := t.ZoneBounds(); !end.IsZero() && next > end.Unix() {
				next = end.Unix()
			}
		}
		cs = max(next, u+1)
	}
	return time.Time{}, false
}

func (r *Rule) hourOK(h int) bool   { return !r.hoursSet || r.hourMask&(1<<h) != 0 }
func (r *Rule) minuteOK(m int) bool { return !r.minsSet || r.minMask&(1<<m) != 0 }

// nextSlot is the next wall-clock (hour, minute) after (h, m) that the filters allow, dayAdd
// telling whether it is on the next day.
func (r *Rule) nextSlot(h, m int) (nh, nm int, dayAdd int64) {
	if r.freq == Minute && r.hourOK(h) {
		for _, x := range r.minList {
			if x > m {
				return h, x, 0
			}
		}
	}
	first := 0
	if r.freq == Minute {
		first = r.minList[0]
	}
	for _, x := range r.hourList {
		if x > h {
			return x, first, 0
		}
	}
	return r.hourList[0], first, 1
}
