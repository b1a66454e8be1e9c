package recurrence

import "time"

// Civil-date arithmetic on day numbers (days since 1970-01-01 in the proleptic Gregorian
// calendar), so the engine can jump to a period, a week or a month without stepping.

const secondsPerDay = 86400

// daysFromCivil is the day number of y-m-d (H. Hinnant's algorithm).
func daysFromCivil(y int64, m, d int) int64 {
	if m <= 2 {
		y--
	}
	era := floorDiv(y, 400)
	yoe := y - era*400
	mp := int64(m+9) % 12
	doy := (153*mp+2)/5 + int64(d) - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return era*146097 + doe - 719468
}

// civilFromDays is the date of day number z.
func civilFromDays(z int64) (y int64, m, d int) {
	z += 719468
	era := floorDiv(z, 146097)
	doe := z - era*146097
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365
	y = yoe + era*400
	doy := doe - (365*yoe + yoe/4 - yoe/100)
	mp := (5*doy + 2) / 153
	d = int(doy - (153*mp+2)/5 + 1)
	if mp < 10 {
		m = int(mp + 3)
	} else {
		m = int(mp - 9)
	}
	if m <= 2 {
		y++
	}
	return y, m, d
}

// weekdayOf is the weekday of day number n, Monday = 0 ... Sunday = 6 (1970-01-01 was a Thursday).
func weekdayOf(n int64) int {
	return int(floorMod(n+3, 7))
}

// weekOf numbers the Monday-to-Sunday week that holds day n.
func weekOf(n int64) int64 {
	return floorDiv(n+3, 7)
}

// mondayOf is the day number of the Monday of week w.
func mondayOf(w int64) int64 {
	return w*7 - 3
}

func isLeap(y int64) bool {
	return y%4 == 0 && (y%100 != 0 || y%400 == 0)
}

// daysIn is the length of month m of year y.
func daysIn(y int64, m int) int {
	switch m {
	case 2:
		if isLeap(y) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	default:
		return 31
	}
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

func floorMod(a, b int64) int64 {
	return a - floorDiv(a, b)*b
}

// wallSeconds is t's wall clock in its location as seconds since 1970-01-01T00:00 of that
// wall clock (t's sub-second part is dropped).
func wallSeconds(t time.Time) int64 {
	_, off := t.Zone()
	return t.Unix() + int64(off)
}

// wallToInstant converts a wall-clock time in loc to an instant, per SPEC 4.2's daylight-saving
// rule: a wall time that does not exist (spring forward) is moved forward by the length of the
// gap, and one that exists twice (fall back) is the earlier instant. time.Date leaves both choices
// unspecified (it gives the later instant in some zones and moves back in others), so both are
// checked and corrected here.
func wallToInstant(y int64, m, d, hh, mm, ss, ns int, loc *time.Location) time.Time {
	t := time.Date(int(y), time.Month(m), d, hh, mm, ss, ns, loc)
	if loc == time.UTC {
		return t
	}
	wsec := daysFromCivil(y, m, d)*secondsPerDay + int64(hh*3600+mm*60+ss)
	_, off := t.Zone()
	start, end := t.ZoneBounds()
	if t.Unix()+int64(off) == wsec {
		// The wall time exists; is there an earlier instant with the same wall clock?
		if start.IsZero() {
			return t
		}
		_, prev := start.Add(-time.Nanosecond).Zone()
		if prev > off {
			e := t.Add(-time.Duration(prev-off) * time.Second)
			if e.Before(start) {
				return e
			}
		}
		return t
	}
	// A gap: the wall time is read with the offset in force before the gap.
	before := off
	if !start.IsZero() && (end.IsZero() || end.Sub(t) > 26*time.Hour) {
		// t lies after the transition: the offset before it is the previous period's.
		_, before = start.Add(-time.Nanosecond).Zone()
	}
	return time.Unix(wsec-int64(before), int64(ns)).In(loc)
}
