package recurrence

import (
	"fmt"
	"slices"
	"time"
)

// MaxExcludeDates is how many dates recurrence.excludeDates may name (SPEC 8).
const MaxExcludeDates = 1000

// compileExcludeDates validates excludeDates (dates YYYY-MM-DD, no repeats, at most
// MaxExcludeDates) and stores them into r as sorted day numbers.
func compileExcludeDates(r *Rule, dates []string, add func(path, format string, args ...any)) {
	if len(dates) > MaxExcludeDates {
		add("recurrence.excludeDates", "%d dates: at most %d", len(dates), MaxExcludeDates)
		return
	}
	seen := make(map[int64]int, len(dates))
	for i, s := range dates {
		path := fmt.Sprintf("recurrence.excludeDates[%d]", i)
		p, err := parseISO(s)
		if err != nil || len(s) != len("2006-01-02") {
			add(path, "%q is not a date YYYY-MM-DD such as 2026-12-25", s)
			continue
		}
		d := daysFromCivil(p.year, p.month, p.day)
		if j, dup := seen[d]; dup {
			add(path, "%q is a duplicate of excludeDates[%d]", s, j)
			continue
		}
		seen[d] = i
		r.excluded = append(r.excluded, d)
	}
	slices.Sort(r.excluded)
}

// ExcludedDates is how many dates the rule excludes.
func (r *Rule) ExcludedDates() int { return len(r.excluded) }

// Excluded reports whether t falls on an excluded date in the rule's zone.
func (r *Rule) Excluded(t time.Time) bool {
	if len(r.excluded) == 0 {
		return false
	}
	_, found := slices.BinarySearch(r.excluded, floorDiv(wallSeconds(t.In(r.loc)), secondsPerDay))
	return found
}

// skipExcluded returns at, or when it falls on an excluded date the first candidate of next (a
// Next without exclusions) after that date. Each step leaves one excluded date behind, so it ends
// after at most len(r.excluded) steps.
func (r *Rule) skipExcluded(at time.Time, ok bool, next func(time.Time) (time.Time, bool)) (time.Time, bool) {
	for ok && r.Excluded(at) {
		day := floorDiv(wallSeconds(at.In(r.loc)), secondsPerDay) + 1
		y, m, d := civilFromDays(day)
		midnight := wallToInstant(y, m, d, 0, 0, 0, 0, r.loc)
		if !midnight.After(at) { // cannot happen: the next day starts after any instant of this one
			return time.Time{}, false
		}
		at, ok = next(midnight.Add(-time.Nanosecond))
	}
	return at, ok
}
