package recurrence

import (
	"slices"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/internal/retry"
)

// MaxJitter is the largest recurrence.jitter (SPEC 8).
const MaxJitter = 12 * time.Hour

// parseJitter reads recurrence.jitter (an ISO 8601 duration, 0 < jitter ≤ MaxJitter) into r; it
// reports false when there is none or it is invalid.
func parseJitter(r *Rule, s string, add func(path, format string, args ...any)) bool {
	if s == "" {
		return false
	}
	d, err := retry.ParseInterval(s)
	switch {
	case err != nil || (s[0] != 'P' && s[0] != 'p'):
		add("recurrence.jitter", "%q is not an ISO 8601 duration such as PT5M", s)
		return false
	case d <= 0:
		add("recurrence.jitter", "%s is not positive: omit jitter for none", s)
		return false
	case d > MaxJitter:
		add("recurrence.jitter", "%s is more than PT12H", s)
		return false
	}
	r.jitter = d
	return true
}

// checkJitter checks a parsed jitter against the rule's shortest period (prepare has run).
func checkJitter(r *Rule, add func(path, format string, args ...any)) bool {
	if gap := r.ShortestGap(); r.jitter >= gap {
		add("recurrence.jitter", "%s is not less than the rule's shortest period between two executions, %s",
			r.jitter, gap)
		return false
	}
	return true
}

// Jitter is the recurrence's jitter, 0 when there is none: each occurrence starts up to this much
// after its scheduled time (the rulebook decides exactly when).
func (r *Rule) Jitter() time.Duration { return r.jitter }

// ShortestGap is a lower bound of the time between two consecutive candidates of a recurring
// rule, daylight saving aside: the interval of elapsed-time rules (or the closest two minutes of
// an Hour rule), and for calendar rules the closest two times of day (counting the one from the
// last of a day to the first of the next, except for Day rules every few days), else a day
// (every few days for Day rules).
func (r *Rule) ShortestGap() time.Duration {
	if !r.recurring {
		return 0
	}
	if r.freq == Minute || r.freq == Hour {
		gap := r.period - r.offs[len(r.offs)-1] + r.offs[0]
		for i := 1; i < len(r.offs); i++ {
			gap = min(gap, r.offs[i]-r.offs[i-1])
		}
		return time.Duration(gap) * time.Second
	}
	days := int64(1)
	if r.freq == Day {
		days = r.interval
	}
	tods := slices.Clone(r.tods)
	slices.Sort(tods)
	gap := days*secondsPerDay - int64(tods[len(tods)-1]) + int64(tods[0])
	for i := 1; i < len(tods); i++ {
		gap = min(gap, int64(tods[i]-tods[i-1]))
	}
	return time.Duration(gap) * time.Second
}
