package jobstate

import (
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/internal/recurrence"
)

// MaxCoalesce bounds how many missed occurrences one claim coalesces (one misfire check walks
// through at most this many).
const MaxCoalesce = 1_000_000

// Claimed is the claim of a job's due occurrence.
type Claimed struct {
	// Scheduled is the expected execution time: the due occurrence, or after a misfire the latest
	// occurrence due by now.
	Scheduled time.Time
	// Missed is how many earlier occurrences were coalesced into this one; they do not count
	// toward the recurrence's count (they did not execute).
	Missed int
	// Next is the job's next execution after this one; zero when nothing is left (count reached
	// with this execution, or no candidate before endTime).
	Next time.Time
	// Skipped is how many occurrences the Skip misfire policy skipped before Scheduled (see
	// ClaimWith); they did not execute and do not count toward count.
	Skipped int
	// LastSkipped is the last of the occurrences skipped (the first is the claim's due one).
	LastSkipped time.Time
}

// Claim is the claim at now of a job's occurrence due at due, the job having executed executed
// times before it (its executionCount). When the occurrence is more than misfire late (after
// downtime or overload), it and every later occurrence due by now become one execution, expected
// at the latest of them; occurrences late by less each run, one after the other. Next
// occurrences are computed from the scheduled time, never from when the claim is made, so a
// schedule does not drift.
func Claim(rule *recurrence.Rule, due time.Time, executed int, now time.Time, misfire time.Duration) Claimed {
	c := Claimed{Scheduled: due}
	if now.Sub(due) > misfire {
		for c.Missed < MaxCoalesce {
			n, ok := rule.Next(c.Scheduled)
			if !ok || n.After(now) {
				break
			}
			c.Scheduled = n
			c.Missed++
		}
	}
	c.Next = nextAfter(rule, c.Scheduled, executed)
	return c
}

// LastExecutionAt is a job's lastExecutionTime after an occurrence due at dueAt is claimed at
// now: when its attempt starts, the later of the two (an occurrence claimed ahead starts when it
// is due). An occurrence buffered by the BufferOne overlap policy starts when released: its claim
// leaves lastExecutionTime alone and its release sets it, as LastExecutionAt(release, release).
// The claim also adds one to the job's executionCount (a cancelled claim takes it back:
// it did not execute).
func LastExecutionAt(now, dueAt time.Time) time.Time {
	if dueAt.After(now) {
		return dueAt
	}
	return now
}

// ResumeAfter is a job's next execution when its stored one is next and an occurrence at started
// (zero: none) has already started: the first of the rule's occurrences from next on that is after
// started, so that a change that comes after an attempt started does not make it run twice. ok is
// false when none is left.
func ResumeAfter(rule *recurrence.Rule, next, started time.Time) (time.Time, bool) {
	if started.IsZero() {
		return next, true
	}
	for !next.After(started) {
		n, ok := rule.Next(next)
		if !ok {
			return time.Time{}, false
		}
		next = n
	}
	return next, true
}

// StoredInstant is the rule's occurrence that a store kept as at: PostgreSQL keeps microseconds,
// so an occurrence with a finer part (a startTime written with seven fractional digits, as .NET
// writes them) comes back up to a microsecond early. Taken as it is, that earlier instant would
// be claimed and the occurrence itself after it: the job would fire twice.
func StoredInstant(rule *recurrence.Rule, at time.Time) time.Time {
	if at.Nanosecond()%1000 != 0 {
		return at // kept to the nanosecond: as computed
	}
	if c, ok := rule.Next(at.Add(-time.Nanosecond)); ok && c.Before(at.Add(time.Microsecond)) {
		return c
	}
	return at
}
