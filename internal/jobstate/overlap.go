package jobstate

import (
	"fmt"
	"time"
)

// Skipped is the history status of an occurrence that did not run: the overlap policy Skip (or
// BufferOne with one already waiting) skipped it, or the misfire policy Skip did.
const Skipped = "Skipped"

// OverlapAction is what the overlap rule does with an occurrence that falls due.
type OverlapAction int

// What Overlap decides.
const (
	OverlapRun    OverlapAction = iota // run it now
	OverlapSkipIt                      // do not run it: record a Skipped history entry
	OverlapBuffer                      // keep it waiting: it runs when the unfinished execution ends
)

func (a OverlapAction) String() string {
	switch a {
	case OverlapRun:
		return "run"
	case OverlapSkipIt:
		return "skip"
	case OverlapBuffer:
		return "buffer"
	}
	return fmt.Sprintf("OverlapAction(%d)", int(a))
}

// Overlap is the overlap rule (SPEC 8 overlap): what happens to a scheduled occurrence of a job
// whose overlap policy is policy ("" is Allow) when it falls due. unfinished says whether an
// execution of the job is unfinished (its attempts, retries or error action still to come; an
// occurrence waiting, buffered, does not count), buffered whether one occurrence already waits
// for it.
//   - Allow, or nothing unfinished: run it.
//   - Skip: skip it (recorded, naming the unfinished execution's tag).
//   - BufferOne: keep it waiting when none waits yet, else skip it.
//
// A waiting occurrence runs once nothing of its job is unfinished: the store releases it in the
// transaction that records the end of the execution it waited for (BufferedRuns), so that
// every replica agrees. The stores read unfinished and buffered in the claim's transaction,
// with the job's row locked, and call this rule.
func Overlap(policy string, unfinished, buffered bool) OverlapAction {
	if !unfinished {
		return OverlapRun
	}
	switch policy {
	case OverlapSkip:
		return OverlapSkipIt
	case OverlapBufferOne:
		if buffered {
			return OverlapSkipIt
		}
		return OverlapBuffer
	}
	return OverlapRun
}

// BufferedRuns reports whether an occurrence kept waiting by the BufferOne policy runs: when
// nothing of its job is unfinished any more (Overlap would run it). The stores evaluate it in
// SQL when a record ends an execution (each driver's releaseSQL is its twin; storetest's
// Rule/OverlapRelease pins both). A job that is no longer Claimable then (disabled, or its
// collection) has the waiting occurrence cancelled instead, as a change cancels an occurrence
// claimed ahead (Rule/OverlapReleaseDisabled).
func BufferedRuns(unfinished bool) bool {
	return Overlap(OverlapBufferOne, unfinished, false) == OverlapRun
}

// WaitingOnChange is what a change of a job does to its occurrence waiting (buffered by the
// BufferOne overlap policy) for the end of the unfinished execution: it cancels it (SPEC 5: a
// change cancels the occurrences not yet started; a waiting one has not started). It is deleted
// with no history and taken off the job's executionCount, as a change cancels an occurrence
// claimed ahead; the job then runs as changed, from its next occurrence. A change is a write of
// the job by its owner (the API's PUT and PATCH, any of them: its policy, its action, its note,
// its state); the daemon's own writes (a pause that ends, secrets sealed again) are not changes.
//
// It reports whether the change of a job whose stored overlap policy is stored (canonical) has
// to cancel one: only a BufferOne job can have an occurrence waiting (claims are made at the
// version they read, so none is buffered under a policy the job no longer has), so the write of
// any other job is not asked to look. The stores cancel it in the write's transaction
// (store.JobPutParams.CancelWaiting), so that no occurrence of a job that no longer buffers (its
// policy now Allow or Skip) waits with nothing left to release it, whatever its unfinished
// execution does afterwards (a restart, a rescue).
func WaitingOnChange(stored string) (cancel bool) {
	return stored == OverlapBufferOne
}

// Overlapping reports whether a job's overlap policy needs the overlap rule at claim time (any
// policy but Allow).
func Overlapping(policy string) bool {
	return policy == OverlapSkip || policy == OverlapBufferOne
}

// OverlapSkippedMessage is the message of the Skipped history entry of an occurrence the overlap
// policy skipped while the execution tagged running was unfinished.
func OverlapSkippedMessage(policy, running string) string {
	if policy == OverlapBufferOne {
		return fmt.Sprintf("Skipped: the execution %s is unfinished and an occurrence already waits for it (overlap policy %s).", running, policy)
	}
	return fmt.Sprintf("Skipped: the execution %s is unfinished (overlap policy %s).", running, policy)
}

// MisfireSkippedMessage is the message of the one Skipped history entry that records the
// occurrences the misfire policy Skip skipped: n of them, from first to last, missed by more
// than threshold.
func MisfireSkippedMessage(n int, first, last time.Time, threshold time.Duration) string {
	f, l := first.UTC().Format(time.RFC3339), last.UTC().Format(time.RFC3339)
	if n == 1 {
		return fmt.Sprintf("Skipped 1 occurrence (%s): missed by more than the misfire threshold %s (misfire policy Skip).", f, threshold)
	}
	return fmt.Sprintf("Skipped %d occurrences from %s to %s: missed by more than the misfire threshold %s (misfire policy Skip).",
		n, f, l, threshold)
}

// OverlapCase is one row of OverlapTable.
type OverlapCase struct {
	Policy               string
	Unfinished, Buffered bool
	Want                 OverlapAction
}

// OverlapTable pins Overlap: the rule's table test runs it, and the store's conformance suite
// drives both drivers' claims through the same rows.
var OverlapTable = []OverlapCase{
	{"", false, false, OverlapRun},
	{"", true, false, OverlapRun},
	{OverlapAllow, true, false, OverlapRun},
	{OverlapAllow, true, true, OverlapRun},
	{OverlapSkip, false, false, OverlapRun},
	{OverlapSkip, true, false, OverlapSkipIt},
	{OverlapBufferOne, false, false, OverlapRun},
	{OverlapBufferOne, true, false, OverlapBuffer},
	{OverlapBufferOne, true, true, OverlapSkipIt},
}
