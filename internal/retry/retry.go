// Package retry reads an action's retryPolicy (SPEC 4.1): how often and how long apart a failed
// attempt is retried.
//
// retryInterval is an ISO 8601 duration (PT30S, PT1M, P1DT2H, P18M) or a .NET-style time span
// (hh:mm:ss or d.hh:mm:ss, seconds may have a fraction). In ISO durations a year counts as 365
// days, a month as 30 days and a week as 7 days, so the 18-month maximum is 540 days.
package retry

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"
)

// Type is a retry type.
type Type int

// Retry types.
const (
	// None: a failed attempt is not retried.
	None Type = iota
	// Fixed: a failed attempt is retried Count times, Interval apart.
	Fixed
	// Exponential (extension, SPEC 8): a failed attempt is retried Count times, the first
	// Interval after it, each further one twice the previous delay, at most MaxInterval, with
	// jitter (jobstate.Backoff).
	Exponential
)

func (t Type) String() string {
	switch t {
	case None:
		return "None"
	case Exponential:
		return "Exponential"
	}
	return "Fixed"
}

// Limits and defaults of SPEC 4.1.
const (
	DefaultInterval = 30 * time.Second
	DefaultCount    = 4
	MinInterval     = 15 * time.Second
	MaxInterval     = 18 * Month
	MaxCount        = 20
	// DefaultMaxRetryInterval caps an Exponential policy's delays without maxRetryInterval.
	DefaultMaxRetryInterval = time.Hour

	Day   = 24 * time.Hour
	Month = 30 * Day  // what a month counts as in an ISO 8601 duration
	Year  = 365 * Day // what a year counts as in an ISO 8601 duration
)

// Policy is a validated retry policy. With Type None, Interval and Count are zero; MaxInterval
// is set only with Type Exponential (never below Interval).
type Policy struct {
	Type        Type
	Interval    time.Duration
	Count       int
	MaxInterval time.Duration
}

// Default is the policy of an action without retryPolicy: Fixed, 30 s, 4 retries.
func Default() Policy {
	return Policy{Type: Fixed, Interval: DefaultInterval, Count: DefaultCount}
}

// Parse validates p (nil: the default policy) and returns the policy. path is where p sits in the
// job's properties ("action.retryPolicy"), used to name the fields in problems. A missing
// retryType means Fixed, a missing retryInterval 30 s and a missing retryCount 4. Every problem is
// reported; on problems the returned Policy is the zero value.
func Parse(path string, p *wire.RetryPolicy) (Policy, wire.Problems) {
	if p == nil {
		return Default(), nil
	}
	var ps wire.Problems
	pol := Default()
	switch {
	case p.RetryType == "" || strings.EqualFold(p.RetryType, "Fixed"):
	case strings.EqualFold(p.RetryType, "None"):
		pol.Type = None
	case strings.EqualFold(p.RetryType, "Exponential"):
		pol.Type = Exponential
	default:
		ps = append(ps, wire.Problem{Path: path + ".retryType", Message: fmt.Sprintf("%q is not one of None, Fixed, Exponential", p.RetryType)})
	}
	if p.RetryInterval != "" {
		d, err := ParseInterval(p.RetryInterval)
		switch {
		case err != nil:
			ps = append(ps, wire.Problem{Path: path + ".retryInterval", Message: err.Error()})
		case d < MinInterval:
			ps = append(ps, wire.Problem{Path: path + ".retryInterval", Message: fmt.Sprintf("%q is %v, below the minimum of 15s", p.RetryInterval, d)})
		case d > MaxInterval:
			ps = append(ps, wire.Problem{Path: path + ".retryInterval", Message: fmt.Sprintf("%q is %v, above the maximum of 18 months (540 days)", p.RetryInterval, d)})
		default:
			pol.Interval = d
		}
	}
	if p.RetryCount != nil {
		if c := *p.RetryCount; c < 0 || c > MaxCount {
			ps = append(ps, wire.Problem{Path: path + ".retryCount", Message: fmt.Sprintf("%d is outside 0..20", c)})
		} else {
			pol.Count = c
		}
	}
	ps = append(ps, parseMax(path, p, &pol)...)
	if len(ps) > 0 {
		return Policy{}, ps
	}
	if pol.Type == None {
		return Policy{Type: None}, nil
	}
	return pol, nil
}

// parseMax reads maxRetryInterval into pol: only an Exponential policy has one (default one hour,
// or the retry interval when that is longer), within the interval's bounds and not below it.
func parseMax(path string, p *wire.RetryPolicy, pol *Policy) wire.Problems {
	if pol.Type != Exponential {
		if p.MaxRetryInterval != "" {
			return wire.Problems{{Path: path + ".maxRetryInterval", Message: "is allowed only with retryType Exponential"}}
		}
		return nil
	}
	if p.MaxRetryInterval == "" {
		pol.MaxInterval = max(DefaultMaxRetryInterval, pol.Interval)
		return nil
	}
	d, err := ParseInterval(p.MaxRetryInterval)
	at := path + ".maxRetryInterval"
	switch {
	case err != nil:
		return wire.Problems{{Path: at, Message: err.Error()}}
	case d > MaxInterval:
		return wire.Problems{{Path: at, Message: fmt.Sprintf("%q is %v, above the maximum of 18 months (540 days)", p.MaxRetryInterval, d)}}
	case d < pol.Interval:
		return wire.Problems{{Path: at, Message: fmt.Sprintf("%q is %v, below the retryInterval of %v", p.MaxRetryInterval, d, pol.Interval)}}
	}
	pol.MaxInterval = d
	return nil
}

// ParseInterval reads an ISO 8601 duration (PnYnMnWnDTnHnMnS, fractions allowed on the last
// field) or a time span hh:mm:ss / d.hh:mm:ss. It does not check the 15 s..18 months bounds.
func ParseInterval(s string) (time.Duration, error) {
	bad := fmt.Errorf("%q is not an ISO 8601 duration (such as PT30S, PT1M, P1D) or hh:mm:ss", s)
	if s == "" {
		return 0, bad
	}
	if s[0] == 'P' || s[0] == 'p' {
		d, ok := parseISODuration(s[1:])
		if !ok {
			return 0, bad
		}
		return d, nil
	}
	d, ok := parseSpan(s)
	if !ok {
		return 0, bad
	}
	return d, nil
}

func parseISODuration(s string) (time.Duration, bool) {
	if s == "" {
		return 0, false
	}
	var total float64
	inTime, seen, fraction := false, false, false
	for len(s) > 0 {
		if s[0] == 'T' || s[0] == 't' {
			if inTime {
				return 0, false
			}
			inTime = true
			s = s[1:]
			if s == "" {
				return 0, false
			}
			continue
		}
		i := 0
		for i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] == '.' || s[i] == ',') {
			i++
		}
		if i == 0 || i == len(s) || fraction {
			return 0, false
		}
		num := strings.Replace(s[:i], ",", ".", 1)
		fraction = strings.Contains(num, ".")
		v, err := strconv.ParseFloat(num, 64)
		if err != nil {
			return 0, false
		}
		var unit time.Duration
		switch c := s[i] | 0x20; {
		case !inTime && c == 'y':
			unit = Year
		case !inTime && c == 'm':
			unit = Month
		case !inTime && c == 'w':
			unit = 7 * Day
		case !inTime && c == 'd':
			unit = Day
		case inTime && c == 'h':
			unit = time.Hour
		case inTime && c == 'm':
			unit = time.Minute
		case inTime && c == 's':
			unit = time.Second
		default:
			return 0, false
		}
		total += v * float64(unit)
		seen = true
		s = s[i+1:]
	}
	if !seen || total > math.MaxInt64/2 {
		return 0, false
	}
	return time.Duration(total), true
}

// parseSpan reads [d.]hh:mm:ss[.fff].
func parseSpan(s string) (time.Duration, bool) {
	parts := strings.Split(s, ":")
	if len(parts) != 3 {
		return 0, false
	}
	var days int64
	hh := parts[0]
	if d, h, ok := strings.Cut(hh, "."); ok {
		v, err := strconv.ParseUint(d, 10, 16)
		if err != nil {
			return 0, false
		}
		days, hh = int64(v), h
	}
	h, err1 := strconv.ParseUint(hh, 10, 8)
	m, err2 := strconv.ParseUint(parts[1], 10, 8)
	if err1 != nil || err2 != nil || len(parts[1]) != 2 || h > 23 || m > 59 {
		return 0, false
	}
	sec := parts[2]
	if len(sec) < 2 || sec[0] < '0' || sec[0] > '9' || sec[1] < '0' || sec[1] > '9' {
		return 0, false
	}
	sv, err := strconv.ParseFloat(sec, 64)
	if err != nil || sv >= 60 || (len(sec) > 2 && sec[2] != '.') {
		return 0, false
	}
	return time.Duration(days)*Day + time.Duration(h)*time.Hour + time.Duration(m)*time.Minute +
		time.Duration(sv*float64(time.Second)), true
}
