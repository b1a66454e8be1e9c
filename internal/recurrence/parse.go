package recurrence

import (
	"fmt"
	"time"
)

// parsedTime is an ISO 8601 date-time or date as written.
type parsedTime struct {
	year                      int64
	month, day                int
	hour, minute, second, nan int
	hasOffset                 bool
	offset                    int // seconds east of UTC
}

// ParseTime parses an ISO 8601 date-time or date as SPEC 3 reads it: without an offset it is wall
// clock in loc (UTC when loc is nil), with the daylight-saving rule of SPEC 4.2 (a time in a
// spring-forward gap moves forward by the gap, a repeated time is the earlier instant). A date
// alone means 00:00:00. Accepted forms: 2012-11-04, 2012-08-04T00:00, 2012-08-04T00:00:05,
// 2012-08-04T00:00:05.123, each optionally followed by Z or ±hh:mm. With an offset the result is
// in loc when loc is given, else in a fixed zone of that offset (UTC for Z).
func ParseTime(s string, loc *time.Location) (time.Time, error) {
	p, err := parseISO(s)
	if err != nil {
		return time.Time{}, err
	}
	return p.in(loc), nil
}

// in is the instant p denotes, expressed in loc (see ParseTime).
func (p parsedTime) in(loc *time.Location) time.Time {
	if p.hasOffset {
		t := time.Date(int(p.year), time.Month(p.month), p.day, p.hour, p.minute, p.second, p.nan, time.UTC).
			Add(-time.Duration(p.offset) * time.Second)
		if loc == nil {
			loc = fixedZone(p.offset)
		}
		return t.In(loc)
	}
	if loc == nil {
		loc = time.UTC
	}
	return wallToInstant(p.year, p.month, p.day, p.hour, p.minute, p.second, p.nan, loc)
}

func fixedZone(offset int) *time.Location {
	if offset == 0 {
		return time.UTC
	}
	return time.FixedZone("", offset)
}

func parseISO(s string) (parsedTime, error) {
	var p parsedTime
	bad := func(why string) (parsedTime, error) {
		return parsedTime{}, fmt.Errorf("%q is not an ISO 8601 date-time such as 2012-08-04T00:00:00Z or a date such as 2012-11-04: %s", s, why)
	}
	i := 0
	num := func(width int) (int, bool) {
		if i+width > len(s) {
			return 0, false
		}
		v := 0
		for _, c := range []byte(s[i : i+width]) {
			if c < '0' || c > '9' {
				return 0, false
			}
			v = v*10 + int(c-'0')
		}
		i += width
		return v, true
	}
	lit := func(c byte) bool {
		if i < len(s) && s[i] == c {
			i++
			return true
		}
		return false
	}
	y, ok := num(4)
	if !ok || !lit('-') {
		return bad("expected the year as YYYY-")
	}
	mo, ok := num(2)
	if !ok || !lit('-') {
		return bad("expected the month as MM-")
	}
	d, ok := num(2)
	if !ok {
		return bad("expected the day as DD")
	}
	p.year, p.month, p.day = int64(y), mo, d
	if mo < 1 || mo > 12 {
		return bad(fmt.Sprintf("month %d is outside 1..12", mo))
	}
	if d < 1 || d > daysIn(p.year, mo) {
		return bad(fmt.Sprintf("day %d is outside 1..%d", d, daysIn(p.year, mo)))
	}
	if i == len(s) {
		return p, nil
	}
	if !lit('T') && !lit('t') {
		return bad("expected T after the date")
	}
	if p.hour, ok = num(2); !ok || !lit(':') {
		return bad("expected the time as hh:mm")
	}
	if p.minute, ok = num(2); !ok {
		return bad("expected the minutes as mm")
	}
	if lit(':') {
		if p.second, ok = num(2); !ok {
			return bad("expected the seconds as ss")
		}
		if lit('.') || lit(',') {
			digits := 0
			scale := 100000000
			for i < len(s) && s[i] >= '0' && s[i] <= '9' {
				if digits < 9 {
					p.nan += int(s[i]-'0') * scale
					scale /= 10
				}
				digits++
				i++
			}
			if digits == 0 {
				return bad("expected digits after the decimal point")
			}
		}
	}
	if p.hour > 23 || p.minute > 59 || p.second > 59 {
		return bad("time of day out of range")
	}
	switch {
	case i == len(s):
	case lit('Z') || lit('z'):
		p.hasOffset = true
	case i < len(s) && (s[i] == '+' || s[i] == '-'):
		sign := 1
		if s[i] == '-' {
			sign = -1
		}
		i++
		oh, ok1 := num(2)
		ok2 := lit(':')
		om, ok3 := num(2)
		if !ok1 || !ok2 || !ok3 || oh > 23 || om > 59 {
			return bad("expected the offset as ±hh:mm")
		}
		p.hasOffset = true
		p.offset = sign * (oh*3600 + om*60)
	default:
		return bad("unexpected text after the time")
	}
	if i != len(s) {
		return bad("unexpected text after the offset")
	}
	return p, nil
}
