package jobstate

import (
	"fmt"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/internal/recurrence"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"
)

// MaxBackfill is how many occurrences one backfill runs at most (SPEC 8).
const MaxBackfill = 1000

// Backfill lists the occurrences of a job's rule in [from, to) that a backfill at now runs, in
// order: the rule's candidates (anchor, endTime and excluded dates apply; count does not, a
// backfill is asked for explicitly). A range backwards or empty, reaching past now, or holding
// more than MaxBackfill occurrences is a problem naming "from" or "to".
func Backfill(rule *recurrence.Rule, from, to, now time.Time) ([]time.Time, wire.Problems) {
	var ps wire.Problems
	bad := func(path, format string, args ...any) {
		ps = append(ps, wire.Problem{Path: path, Message: fmt.Sprintf(format, args...)})
	}
	switch {
	case !to.After(from):
		bad("to", "%s is not after from %s: the range is [from, to)", utc(to), utc(from))
	case to.After(now):
		bad("to", "%s is in the future (now is %s): a backfill runs occurrences that are past", utc(to), utc(now))
	}
	if len(ps) > 0 {
		return nil, ps
	}
	var out []time.Time
	for at := range rule.After(from.Add(-time.Nanosecond)) {
		if !at.Before(to) {
			break
		}
		if len(out) == MaxBackfill {
			bad("to", "[%s, %s) holds more than %d occurrences: backfill a shorter range", utc(from), utc(to), MaxBackfill)
			return nil, ps
		}
		out = append(out, at)
	}
	if len(out) == 0 {
		bad("from", "[%s, %s) holds no occurrence of the job's schedule", utc(from), utc(to))
		return nil, ps
	}
	return out, nil
}

func utc(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// BackfillOnChange is what a change of a job's state, or of its collection's, does to the job's
// backfill under way (SPEC 5: a change cancels the occurrences not yet started): a change that
// stops the job from firing (Claimable before the change, not after: the job or its collection
// disabled) or from running on request (ManualRunAllowed before, not after: its collection
// disabled or suspended, which stops a Disabled job's backfill too, as the jobs of a collection
// that is not Enabled do not run) cancels the backfill's executions still waiting, deleted with
// no history and taken off the job's executionCount, as a cancelled claim; the execution under
// way finishes (its retries and error action too). Any other change leaves the backfill alone,
// so that a job that is Disabled can still be backfilled and its backfill runs to the end. The
// stores cancel them in the transaction of the job's write (store.JobPutParams.CancelBackfill)
// or of its collection's (store.CollectionPutParams.CancelBackfillOf, from
// BackfillOnCollectionChange), with the waiting occurrence a change cancels (WaitingOnChange).
// Deleting the job deletes its executions with it.
func BackfillOnChange(state, collectionState, newState, newCollectionState string) (cancel bool) {
	return Claimable(state, collectionState) && !Claimable(newState, newCollectionState) ||
		ManualRunAllowed(state, collectionState) && !ManualRunAllowed(newState, newCollectionState)
}

// BackfillOnCollectionChange lists the job states whose backfill a change of their collection's
// state from collectionState to newCollectionState cancels (BackfillOnChange of a job in that
// state whose state stays), for the collection's write to cancel them in its transaction
// (store.CollectionPutParams.CancelBackfillOf); nil when it cancels none.
func BackfillOnCollectionChange(collectionState, newCollectionState string) []string {
	var out []string
	for _, s := range []string{Enabled, Disabled, Completed, Faulted} {
		if BackfillOnChange(s, collectionState, s, newCollectionState) {
			out = append(out, s)
		}
	}
	return out
}
