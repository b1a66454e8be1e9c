package jobstate

import (
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/internal/recurrence"
)

// Misfire is a job's misfire rule (SPEC 8 misfire): what happens to occurrences missed by more
// than Threshold. The zero Policy is MisfireRunOnce.
type Misfire struct {
	Policy    string
	Threshold time.Duration
}

// ClaimWith is Claim under a job's misfire rule:
//   - RunOnce (or no policy): Claim's coalescing, every occurrence due by now in one execution;
//   - RunAll: each missed occurrence runs as its own execution, oldest first (the claim is the
//     due one, its Next the following one, due as well); when more than MaxRunAll are due by now
//     the oldest beyond that many are coalesced into the first that runs (Missed);
//   - Skip: the occurrences missed by more than the threshold do not run: Skipped counts them
//     and Scheduled is the first that is not (due within the threshold, or after now); Next
//     follows it. The scheduler records them in one Skipped history entry
//     (MisfireSkippedMessage: due to LastSkipped) and claims Scheduled as its own occurrence.
//
// key is the job's identity key (see StartAt): lateness is counted from the occurrence's start,
// so that a jittered start is not taken for a misfire.
func ClaimWith(rule *recurrence.Rule, key string, due time.Time, executed int, now time.Time, m Misfire) Claimed {
	m.Threshold += StartAt(rule, key, due).Sub(due)
	late := now.Sub(due) > m.Threshold
	switch {
	case !late || m.Policy == "" || m.Policy == MisfireRunOnce:
		return Claim(rule, due, executed, now, m.Threshold)
	case m.Policy == MisfireRunAll:
		// The occurrences due by now, counted up to one more than MaxRunAll beyond due.
		window := make([]time.Time, 0, MaxRunAll+1)
		window = append(window, due)
		missed := 0
		for at := due; missed < MaxCoalesce; missed++ {
			n, ok := rule.Next(at)
			if !ok || n.After(now) {
				break
			}
			at = n
			if len(window) == MaxRunAll {
				window = window[1:]
			}
			window = append(window, n)
		}
		c := Claimed{Scheduled: window[0], Missed: missed + 1 - len(window)}
		c.Next = nextAfter(rule, c.Scheduled, executed)
		return c
	case m.Policy == MisfireSkip:
		c := Claimed{Scheduled: due}
		for c.Skipped < MaxCoalesce && now.Sub(c.Scheduled) > m.Threshold {
			n, ok := rule.Next(c.Scheduled)
			c.Skipped, c.LastSkipped = c.Skipped+1, c.Scheduled
			if !ok {
				c.Scheduled = time.Time{}
				return c // nothing left to run: the job completes
			}
			c.Scheduled = n
		}
		c.Next = nextAfter(rule, c.Scheduled, executed)
		return c
	}
	return Claim(rule, due, executed, now, m.Threshold)
}

// nextAfter is the job's next execution after the one scheduled at, the job having executed
// executed times before it: zero when count is reached with it or no candidate is left.
func nextAfter(rule *recurrence.Rule, at time.Time, executed int) time.Time {
	if count := rule.Count(); count == 0 || executed+1 < count {
		if n, ok := rule.Next(at); ok {
			return n
		}
	}
	return time.Time{}
}

// SkipNext is a job's next execution after its occurrence at was skipped (by the overlap rule):
// the rule's next occurrence, count not spent (a skipped occurrence did not execute); zero when
// none is left.
func SkipNext(rule *recurrence.Rule, at time.Time) time.Time {
	if n, ok := rule.Next(at); ok {
		return n
	}
	return time.Time{}
}
