package recurrence

import (
	"fmt"
	"math/bits"
	"strconv"
	"strings"
	"time"
)

// Describe says in plain English when a rule runs, for people: "at 09:00 and 17:00, Monday to
// Friday, Europe/Berlin", "at 05:15 on the last Friday of every month", "every 15 minutes, 5
// times, from 2026-12-01 08:00". The same rule always gives the same words, whenever it is
// described (the provider compares them between plan and apply):
//   - times of day are wall clock in the rule's zone, named at the end unless it is UTC (a fixed
//     offset from startTime reads "UTC-05:00");
//   - without a startTime the job is anchored at its creation, so what the rule takes from the
//     anchor (the time of day, the week day, the day of the month) is said as "the time it was
//     created" rather than a value that depends on when the description was made;
//   - jitter and excluded dates follow ("up to 5 minutes later", "except 3 dates", or the date
//     when there is one);
//   - count and endTime follow ("5 times", "until 2026-12-31 00:00"), then "from" startTime.
//
// Describe(nil) is "".
func Describe(r *Rule) string {
	if r == nil {
		return ""
	}
	if !r.recurring {
		if !r.hasStart {
			return "once, when the job is created"
		}
		return "once at " + r.wallString(r.anchor) + r.zoneSuffix()
	}
	parts := []string{r.describeRule()}
	if r.jitter > 0 {
		parts = append(parts, "up to "+durationWords(r.jitter)+" later")
	}
	switch n := len(r.excluded); {
	case n == 1:
		y, m, d := civilFromDays(r.excluded[0])
		parts = append(parts, fmt.Sprintf("except %04d-%02d-%02d", y, m, d))
	case n > 1:
		parts = append(parts, "except "+strconv.Itoa(n)+" dates")
	}
	switch {
	case r.count == 1:
		parts = append(parts, "once")
	case r.count > 1:
		parts = append(parts, strconv.Itoa(r.count)+" times")
	}
	if r.hasStart {
		parts = append(parts, "from "+r.wallString(r.anchor))
	}
	if r.hasEnd {
		parts = append(parts, "until "+r.wallString(r.end))
	}
	return strings.Join(parts, ", ") + r.zoneSuffix()
}

// describeRule is the frequency, interval and schedule part of Describe.
func (r *Rule) describeRule() string {
	switch r.freq {
	case Minute, Hour:
		return r.describeElapsed()
	case Day:
		times := r.describeTimes()
		if strings.Contains(times, " past ") || strings.HasSuffix(times, "created") {
			return times + ", " + every(r.interval, "day")
		}
		return times + " " + every(r.interval, "day")
	case Week:
		days := r.describeWeekDays()
		if r.interval == 1 {
			return r.describeTimes() + ", " + days
		}
		return r.describeTimes() + ", " + days + ", " + every(r.interval, "week")
	case Month:
		if !r.byDays && !r.hasStart {
			return r.describeTimes() + ", on the day of the month it was created, " + every(r.interval, "month")
		}
		return r.describeTimes() + " " + r.describeMonthDays() + " of " + every(r.interval, "month")
	}
	return r.freq.String()
}

// describeElapsed describes Minute and Hour rules: elapsed-time buckets with wall-clock filters.
func (r *Rule) describeElapsed() string {
	unit := "minute"
	if r.freq == Hour {
		unit = "hour"
	}
	s := every(r.interval, unit)
	if r.freq == Hour && (r.hasStart || r.minsGiven) {
		// The bucket's minutes: those of the schedule, else the start's.
		mins := make([]int, len(r.offs))
		for i, o := range r.offs {
			mins[i] = int(o / 60)
		}
		s += " at " + minuteList(mins, r.hasStart && r.aSec != 0, r.aSec)
	}
	if r.freq == Minute && r.minsSet {
		s += ", at " + minuteList(maskList(r.minMask, 60), false, 0) + " past the hour"
	}
	if r.hoursSet && r.hourMask != 1<<24-1 {
		s += ", in the hours " + hourList(maskList(uint64(r.hourMask), 24))
	}
	return s
}

// describeTimes is the time-of-day part of a Day, Week or Month rule: "at 09:00 and 17:00", or
// "at :00 and :30 past every hour" when there are many.
func (r *Rule) describeTimes() string {
	hours := maskList(uint64(r.hourMask), 24)
	mins := maskList(r.minMask, 60)
	sec := 0
	if r.hasStart {
		sec = r.aSec
	}
	if !r.hoursSet && !r.minsSet {
		if !r.hasStart {
			return "at the time of day it was created"
		}
		return "at " + clockString(r.aHour, r.aMin, sec)
	}
	if !r.minsSet && !r.hasStart {
		if len(hours) == 1 {
			return "at the minute it was created past the hour " + hourList(hours)
		}
		return "at the minute it was created past the hours " + hourList(hours)
	}
	if !r.minsSet {
		mins = []int{r.aMin}
	}
	if !r.hoursSet || len(hours) == 24 {
		return "at " + minuteList(mins, sec != 0, sec) + " past every hour"
	}
	if len(hours)*len(mins) > 4 {
		return "at " + minuteList(mins, sec != 0, sec) + " past the hours " + hourList(hours)
	}
	var times []string
	for _, h := range hours {
		for _, m := range mins {
			times = append(times, clockString(h, m, sec))
		}
	}
	return "at " + andList(times)
}

// describeWeekDays names the week days of a Week rule: "Monday to Friday", "Saturday and Sunday".
func (r *Rule) describeWeekDays() string {
	if !r.weekSet && !r.hasStart {
		return "on the week day it was created" // the anchor's, filled in by prepare
	}
	if r.weekMask == 0x7f {
		return "every day of the week"
	}
	var runs []string
	for d := 0; d < 7; {
		if r.weekMask&(1<<d) == 0 {
			d++
			continue
		}
		e := d
		for e+1 < 7 && r.weekMask&(1<<(e+1)) != 0 {
			e++
		}
		switch {
		case e-d >= 2:
			runs = append(runs, weekdayNames[d]+" to "+weekdayNames[e])
		case e == d+1:
			runs = append(runs, weekdayNames[d], weekdayNames[e])
		default:
			runs = append(runs, weekdayNames[d])
		}
		d = e + 1
	}
	return andList(runs)
}

// describeMonthDays names the days of a Month rule: "on day 1, day 15 and the last Friday".
func (r *Rule) describeMonthDays() string {
	if !r.byDays {
		return "on day " + strconv.Itoa(r.aDom)
	}
	var days []string
	for m := r.posDays; m != 0; m &= m - 1 {
		days = append(days, "day "+strconv.Itoa(bits.TrailingZeros32(m)))
	}
	for k := 31; k >= 1; k-- { // -31 first: days from the end, in calendar order
		if r.negDays&(1<<k) == 0 {
			continue
		}
		if k == 1 {
			days = append(days, "the last day")
		} else {
			days = append(days, "the "+ordinal(k)+" to last day")
		}
	}
	for wd, o := range r.occ {
		name := weekdayNames[wd]
		if o&occEvery != 0 {
			days = append(days, "every "+name)
			continue
		}
		for k := 1; k <= 5; k++ {
			if o&(1<<(k-1)) != 0 {
				days = append(days, "the "+ordinal(k)+" "+name)
			}
		}
		for k := 5; k >= 1; k-- {
			if o&(1<<(k+4)) == 0 {
				continue
			}
			if k == 1 {
				days = append(days, "the last "+name)
			} else {
				days = append(days, "the "+ordinal(k)+" to last "+name)
			}
		}
	}
	return "on " + andList(days)
}

// zoneSuffix names the rule's zone, ", Europe/Berlin", or nothing for UTC.
func (r *Rule) zoneSuffix() string {
	if r.loc == time.UTC {
		return ""
	}
	if name := r.loc.String(); name != "" {
		return ", " + name
	}
	_, off := time.Unix(0, 0).In(r.loc).Zone()
	sign := '+'
	if off < 0 {
		sign, off = '-', -off
	}
	return fmt.Sprintf(", UTC%c%02d:%02d", sign, off/3600, off/60%60)
}

// wallString is t's wall clock in the rule's zone, "2026-12-01 08:00" (seconds when not zero).
func (r *Rule) wallString(t time.Time) string {
	t = t.In(r.loc)
	if t.Second() != 0 || t.Nanosecond() != 0 {
		return t.Format("2006-01-02 15:04:05")
	}
	return t.Format("2006-01-02 15:04")
}

func clockString(h, m, s int) string {
	if s != 0 {
		return fmt.Sprintf("%02d:%02d:%02d", h, m, s)
	}
	return fmt.Sprintf("%02d:%02d", h, m)
}

// minuteList is ":00, :15 and :30" (":15:30" when the job fires at a second of the minute).
func minuteList(mins []int, withSec bool, sec int) string {
	out := make([]string, len(mins))
	for i, m := range mins {
		if withSec {
			out[i] = fmt.Sprintf(":%02d:%02d", m, sec)
		} else {
			out[i] = fmt.Sprintf(":%02d", m)
		}
	}
	return andList(out)
}

// hourList is "09 to 16" or "05 and 17": runs of three or more consecutive hours are ranges.
func hourList(hours []int) string {
	var out []string
	for i := 0; i < len(hours); {
		j := i
		for j+1 < len(hours) && hours[j+1] == hours[j]+1 {
			j++
		}
		if j-i >= 2 {
			out = append(out, fmt.Sprintf("%02d to %02d", hours[i], hours[j]))
		} else {
			for k := i; k <= j; k++ {
				out = append(out, fmt.Sprintf("%02d", hours[k]))
			}
		}
		i = j + 1
	}
	return andList(out)
}

// every is "every day", "every 3 days".
func every(n int64, unit string) string {
	if n == 1 {
		return "every " + unit
	}
	return "every " + strconv.FormatInt(n, 10) + " " + unit + "s"
}

var ordinals = [...]string{1: "first", 2: "second", 3: "third", 4: "fourth", 5: "fifth"}

// ordinal is "first" .. "fifth", then "6th" .. "31st".
func ordinal(n int) string {
	if n < len(ordinals) {
		return ordinals[n]
	}
	suffix := "th"
	if n%100 < 11 || n%100 > 13 {
		switch n % 10 {
		case 1:
			suffix = "st"
		case 2:
			suffix = "nd"
		case 3:
			suffix = "rd"
		}
	}
	return strconv.Itoa(n) + suffix
}

// durationWords is "5 minutes", "1 hour and 30 minutes", "90 milliseconds".
func durationWords(d time.Duration) string {
	if d%time.Second != 0 {
		return strconv.FormatInt(d.Milliseconds(), 10) + " milliseconds"
	}
	var out []string
	for _, u := range []struct {
		size time.Duration
		name string
	}{{time.Hour, "hour"}, {time.Minute, "minute"}, {time.Second, "second"}} {
		if n := int64(d / u.size); n > 0 {
			if n == 1 {
				out = append(out, "1 "+u.name)
			} else {
				out = append(out, strconv.FormatInt(n, 10)+" "+u.name+"s")
			}
			d -= time.Duration(n) * u.size
		}
	}
	return andList(out)
}

// andList is "a", "a and b", "a, b and c".
func andList(items []string) string {
	switch len(items) {
	case 0:
		return ""
	case 1:
		return items[0]
	}
	return strings.Join(items[:len(items)-1], ", ") + " and " + items[len(items)-1]
}
