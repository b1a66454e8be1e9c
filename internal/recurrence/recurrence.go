// Package recurrence is the schedule engine shared by the daemon and the provider: it validates a
// job's startTime and recurrence (SPEC 4.1) and computes when the job runs (SPEC 3, 4.2, 4.3).
// It does no I/O and never reads the wall clock: callers pass "now".
package recurrence

import (
	"errors"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"
)

// Rule is a compiled, valid schedule. It is immutable and safe for concurrent use.
type Rule struct {
	_ struct{}
}

// Compile validates startTime and rec (nil: no recurrence) and returns the job's rule. created is
// the job's creation time: the anchor when startTime is empty. On invalid input the error is a
// wire.Problems with one entry per violation, paths relative to the job's properties
// ("startTime", "recurrence.schedule.monthDays[2]").
func Compile(startTime string, rec *wire.JobRecurrence, created time.Time) (*Rule, error) {
	return nil, errors.New("recurrence.Compile: not implemented yet")
}

// Recurring reports whether the job has a recurrence.
func (r *Rule) Recurring() bool { return false }

// Anchor is the startTime, or the creation time when there is none.
func (r *Rule) Anchor() time.Time { return time.Time{} }

// Count is the recurrence's count, 0 when unlimited.
func (r *Rule) Count() int { return 0 }

// EndTime is the recurrence's endTime (inclusive) in the rule's zone; ok is false when there is none.
func (r *Rule) EndTime() (t time.Time, ok bool) { return time.Time{}, false }

// Location is the zone Z the rule works in (SPEC 4.2): timeZone, else the fixed offset written in
// startTime, else UTC. Anchor and EndTime are returned in it, so formatting them with
// time.RFC3339 gives the normalized form the daemon returns.
func (r *Rule) Location() *time.Location { return time.UTC }

// First returns the first execution of a job being scheduled at now (on creation, on enable or
// after an update) per the table of SPEC 4.3; ok is false when nothing is left to run.
// immediate reports whether that execution is the "once, immediately" run.
func (r *Rule) First(now time.Time) (at time.Time, immediate bool, ok bool) {
	return time.Time{}, false, false
}

// Next returns the first candidate strictly after t that is not after endTime; ok is false when
// there is none. It does not apply count: the caller knows how many executions happened.
func (r *Rule) Next(t time.Time) (time.Time, bool) { return time.Time{}, false }

// Occurrences returns up to n executions of a job created (or last updated) at now that has
// already executed done times, per SPEC 4.3, honouring count and endTime.
func (r *Rule) Occurrences(now time.Time, done, n int) []time.Time { return nil }

// ParseTime parses an ISO 8601 date-time or date as SPEC 3 reads it: without an offset it is wall
// clock in loc (UTC when loc is nil).
func ParseTime(s string, loc *time.Location) (time.Time, error) {
	return time.Time{}, errors.New("recurrence.ParseTime: not implemented yet")
}
