package jobstate

import (
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/internal/recurrence"
)

// ManualRunAllowed reports whether a job in state, in a collection in collectionState, may run on
// request: not when it is final, nor when its collection is set to anything but Enabled (a
// collection whose state is not set lets it run).
func ManualRunAllowed(state, collectionState string) bool {
	return !Final(state) && (collectionState == "" || collectionState == CollectionEnabled)
}

// ManualRunTooEarly applies the collection's maxRecurrence to a manual run (a job whose action
// runs itself cannot multiply): after is the earliest next execution the limit allows after a
// time (nil: no limit), last the job's lastExecutionTime (zero: it never ran). It returns when the
// run is allowed and whether now is before that.
func ManualRunTooEarly(last, now time.Time, after func(time.Time) time.Time) (allowed time.Time, tooEarly bool) {
	if after == nil || last.IsZero() {
		return time.Time{}, false
	}
	allowed = after(last)
	return allowed, allowed.After(now)
}

// ManualRunBlocked reports whether a manual claim is refused: a job runs on request once at a
// time, so a manual run is refused while a manual execution of the job is stored (whichever
// replica runs it) or claimed earlier in the same batch. A scheduled claim is never blocked by
// it. Each driver evaluates this inside its claim (the SQL named as this function's twin).
func ManualRunBlocked(manual, manualInFlight bool) bool {
	return manual && manualInFlight
}

// Runs walks a job's coming runs as the scheduler will start them: the stored next execution,
// then the rule's next candidates, honouring count and endTime.
type Runs struct {
	rule *recurrence.Rule
	next time.Time
	left int // -1: unlimited
}

// RunsLeft is how many runs of a job the scheduler will still start (the scheduled one
// included): -1 when unlimited, 0 when the job will not fire (not Schedulable). executed is its
// executionCount.
func RunsLeft(rule *recurrence.Rule, state, collectionState string, next time.Time, executed int) int {
	if rule == nil || !Schedulable(state, collectionState, next) {
		return 0
	}
	if c := rule.Count(); c > 0 {
		return max(c-executed, 1)
	}
	return -1
}

// NewRuns returns the coming runs of a job whose next execution is next, nil when it will not
// fire (RunsLeft is 0).
func NewRuns(rule *recurrence.Rule, state, collectionState string, next time.Time, executed int) *Runs {
	left := RunsLeft(rule, state, collectionState, next, executed)
	if left == 0 {
		return nil
	}
	return &Runs{rule: rule, next: next.In(rule.Location()), left: left}
}

// Peek returns the next run without taking it; ok is false when none is left.
func (r *Runs) Peek() (time.Time, bool) {
	if r.left == 0 || r.next.IsZero() {
		return time.Time{}, false
	}
	return r.next, true
}

// Pop returns the next run and advances; ok is false when none is left.
func (r *Runs) Pop() (time.Time, bool) {
	at, ok := r.Peek()
	if !ok {
		return at, false
	}
	if r.left > 0 {
		r.left--
	}
	r.next = time.Time{}
	if r.left != 0 {
		if n, ok := r.rule.Next(at); ok {
			r.next = n
		}
	}
	return at, true
}

// Limited reports whether the runs are limited by a count (else only endTime ends them).
func (r *Runs) Limited() bool { return r.left >= 0 }

// SkipTo moves the walk to the first candidate at or after t when that is later than the next run.
// Only an unlimited walk can skip (with a count, how many runs are left depends on those skipped).
func (r *Runs) SkipTo(t time.Time) {
	if r.Limited() || !r.next.Before(t) || r.next.IsZero() {
		return
	}
	if n, ok := r.rule.Next(t.Add(-time.Nanosecond)); ok {
		r.next = n
	} else {
		r.next = time.Time{}
	}
}

// Upcoming returns up to n coming runs of a job (see Runs).
func Upcoming(rule *recurrence.Rule, state, collectionState string, next time.Time, executed, n int) []time.Time {
	r := NewRuns(rule, state, collectionState, next, executed)
	if r == nil || n <= 0 {
		return nil
	}
	out := make([]time.Time, 0, min(n, 1024))
	for len(out) < n {
		at, ok := r.Pop()
		if !ok {
			break
		}
		out = append(out, at)
	}
	return out
}

// Preview returns up to n runs of a job written at now (Enabled, in an Enabled collection) that
// has executed executed times: its FirstRun, then the runs after it, honouring count and endTime.
func Preview(rule *recurrence.Rule, now time.Time, executed, n int) []time.Time {
	next, _ := FirstRun(rule, Enabled, CollectionEnabled, executed, now)
	return Upcoming(rule, Enabled, CollectionEnabled, next, executed, n)
}
