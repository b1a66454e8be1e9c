// Package jobstate is the rulebook of a job's life: every rule that decides when a job runs, what
// an attempt leads to and which state a job is in lives here once, and the API, the dashboard,
// the scheduler, the executor, the store drivers and the tests call it. It does no I/O and never
// reads the clock: callers pass times and values, it returns decisions.
//
// The rules, by the moment they apply:
//
//   - States: Final (Completed, Faulted: never changed again, only deleted), Schedulable (the
//     job can fire: Enabled, in an Enabled collection, with a next execution), Claimable (a
//     scheduled claim may be made: Enabled, collection Enabled).
//   - Written or enabled: FirstRun is a job's next execution and state when it is written (PUT,
//     PATCH), enabled, or its collection is enabled: the startTime table of SPEC 4.3, count
//     already spent, and no repeat of the "once, immediately" run of a job that executed.
//   - Paused: Resume is what enabling a paused job does to its definition (resumeAt goes, the
//     note stays); ResumeDue says when a pause ends by itself, Resumed is the job it leaves
//     (FirstRun at resumeAt: nothing missed during the pause is replayed).
//   - Started: StartAt is when an occurrence starts: its scheduled time plus the recurrence's
//     jitter offset (JitterOffset), the same for every replica and preview, never reaching the
//     next occurrence.
//   - Claimed: Claim is an occurrence's claim: misfire coalescing (MaxCoalesce), the expected
//     time, the next execution (count and endTime), and LastExecutionAt, the job's
//     lastExecutionTime after the claim. ResumeAfter moves a next execution past an occurrence
//     already started; StoredInstant reads back an occurrence kept to the microsecond.
//   - Overlapping: Overlap is what a due occurrence of a job with an overlap policy leads to
//     while an execution of the job is unfinished (run, skip recorded as Skipped, buffer) and
//     BufferedRuns when a buffered one runs (WaitingOnChange: a change cancels it); the stores read the rule's inputs in the claim's
//     transaction and call it, and their release SQL is BufferedRuns' twin (OverlapTable).
//   - Attempted: Outcome is what an attempt leads to (finished, retried, error action, faulted)
//     from its result and its phase's retry policy (RetryPolicy).
//   - Recorded: Recorded is what a record does to its job: its counters, whether it touches the
//     job at all (Changes) and the state it leaves (Completed, Faulted after FaultedAfter
//     consecutive faults). The SQL that evaluates this rule inside a statement is named in each
//     driver as this function's twin; the conformance suite runs both over RecordTable.
//   - Backfill: Backfill lists the occurrences of [from, to) a backfill runs (anchor, endTime and
//     excluded dates applying, count not; at most MaxBackfill); they run as the job's manual runs
//     may (ManualRunAllowed), one execution each, one after the other, oldest first (the store
//     makes the next due in the transaction that records the end of the previous one);
//     BackfillOnChange: disabling the job or its collection cancels those not yet started, in
//     the job's write (store.JobPutParams.CancelBackfill) or the collection's
//     (BackfillOnCollectionChange, store.CollectionPutParams.CancelBackfillOf).
//   - Manual runs: ManualRunAllowed (not final, collection not disabled), ManualRunTooEarly
//     (the collection's maxRecurrence applies to manual runs too) and ManualRunBlocked (one
//     manual run in flight at a time).
//   - Upcoming: Runs walks a job's coming runs as they will start (previews, the dashboard);
//     Upcoming lists n of them; Preview lists the runs of a job written at now.
package jobstate

import (
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/internal/recurrence"
)

// Job states (Azure spelling).
const (
	Enabled   = "Enabled"
	Disabled  = "Disabled"
	Completed = "Completed"
	Faulted   = "Faulted"
)

// CollectionEnabled is the collection state that lets its jobs fire.
const CollectionEnabled = "Enabled"

// Phases of an execution (Azure's history action names).
const (
	PhaseMain  = "MainAction"
	PhaseError = "ErrorAction"
)

// Final reports whether a job state is final (Completed, Faulted): a final job never runs again
// and cannot be changed, only deleted.
func Final(state string) bool {
	return state == Completed || state == Faulted
}

// Claimable reports whether a scheduled claim of a job in state, in a collection in
// collectionState, may be made (the store's version check aside).
func Claimable(state, collectionState string) bool {
	return state == Enabled && collectionState == CollectionEnabled
}

// Schedulable reports whether a job fires: it is Claimable and has a next execution.
func Schedulable(state, collectionState string, next time.Time) bool {
	return Claimable(state, collectionState) && !next.IsZero()
}

// FirstRun is a job's next execution and its state when it is written (created, replaced,
// patched), enabled, or its collection is enabled at now (SPEC 4.3). executed is how many times
// the job has executed (its counters survive an update and count toward count). next is zero
// when the job must not fire: when it is not Enabled or its collection is not (state unchanged),
// or when nothing is left (state Completed).
//
// A job that has executed never repeats its "once, immediately" run: a recurring one resumes from
// its first candidate at or after now, a one-shot one is Completed.
func FirstRun(rule *recurrence.Rule, state, collectionState string, executed int, now time.Time) (next time.Time, newState string) {
	if !Claimable(state, collectionState) {
		return time.Time{}, state
	}
	if c := rule.Count(); c > 0 && executed >= c {
		return time.Time{}, Completed
	}
	at, immediate, ok := rule.First(now)
	if ok && immediate && executed > 0 {
		if rule.Recurring() {
			at, ok = rule.Next(now.Add(-time.Nanosecond))
		} else {
			ok = false
		}
	}
	if !ok {
		return time.Time{}, Completed
	}
	return at, state
}

// StateCase is one row of StateTable: a job's state, its collection's state and whether it has a
// next execution, with what the rules decide of them.
type StateCase struct {
	State, Collection string
	Scheduled         bool
	Final             bool // Final(State)
	Claimable         bool // Claimable(State, Collection)
	Schedulable       bool // Schedulable(State, Collection, next)
	ManualRunAllowed  bool // ManualRunAllowed(State, Collection)
}

// StateTable pins Final, Claimable, Schedulable and ManualRunAllowed: the rules' table test runs
// it, and the store's conformance suite drives both drivers through the same rows (the SQL that
// lists schedulable jobs, claims them and purges final ones is those rules' twin).
var StateTable = []StateCase{
	{Enabled, CollectionEnabled, true, false, true, true, true},
	{Enabled, CollectionEnabled, false, false, true, false, true},
	{Enabled, "Disabled", true, false, false, false, false},
	{Enabled, "Suspended", true, false, false, false, false},
	{Disabled, CollectionEnabled, true, false, false, false, true},
	{Disabled, CollectionEnabled, false, false, false, false, true},
	{Disabled, "Suspended", false, false, false, false, false},
	{Completed, CollectionEnabled, false, true, false, false, false},
	{Completed, CollectionEnabled, true, true, false, false, false},
	{Faulted, CollectionEnabled, false, true, false, false, false},
	{Faulted, "Disabled", false, true, false, false, false},
}
