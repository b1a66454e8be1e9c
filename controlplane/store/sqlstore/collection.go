package sqlstore

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
)

// JobStates reads job $1's state and its collection's (c), for a rule that needs both inside a
// transaction (jobstate.ManualRunAllowed when a backfill is stored).
const JobStates = `SELECT j.state, c.state FROM jobs j JOIN collections c ON c.id = j.collection_id WHERE j.id = $1`

// A collection's write that cancels its jobs' waiting executions (store.CollectionPutParams.
// CancelBackfillOf, jobstate.BackfillOnCollectionChange) runs, in its transaction, the delete
// below and then CollectionCancelCount once for each job it deleted executions of.

// collectionWaitingJobs selects the jobs of collection $2 in the states $3.. that have an
// execution waiting (due at $1, store.BackfillWaiting: a backfill's or the occurrence buffered
// by BufferOne).
const collectionWaitingJobs = `SELECT j.id FROM jobs j WHERE j.collection_id = $2 AND j.state IN (%s)
	AND EXISTS (SELECT 1 FROM executions x WHERE x.job_id = j.id AND x.due_at = $1)`

// CollectionCancelWaiting deletes the waiting executions of those jobs (n states), returning each
// one's id, job_id, tag, scheduled and backfill.
func CollectionCancelWaiting(n int) string {
	return `DELETE FROM executions WHERE due_at = $1 AND job_id IN (` + collectionWaitingSelect(n) + `)
	RETURNING id, job_id, tag, scheduled, backfill`
}

// CollectionWaitingJobsLock locks those jobs' rows, in ID order, before the delete (PostgreSQL:
// a job's own write locks its row before its executions, CancelBackfill; this write does the
// same, so that the two never wait for each other in opposite orders).
func CollectionWaitingJobsLock(n int) string {
	return collectionWaitingSelect(n) + ` ORDER BY j.id FOR UPDATE OF j`
}

// CollectionCancelCount takes $1 cancelled executions off job $3's executionCount (as a cancelled
// claim does): a write of the job at $2, its version bumped.
const CollectionCancelCount = `UPDATE jobs SET execution_count = execution_count - $1, updated_at = $2, version = version + 1 WHERE id = $3`

// collectionWaitingSelect is collectionWaitingJobs with n state placeholders, $3 to $(n+2).
func collectionWaitingSelect(n int) string {
	ps := make([]string, n)
	for i := range ps {
		ps[i] = "$" + strconv.Itoa(i+3)
	}
	return strings.Replace(collectionWaitingJobs, "%s", strings.Join(ps, ", "), 1)
}

// CollectionCancelArgs are the statements' arguments after the waiting due time: the collection
// and the states.
func CollectionCancelArgs(waiting any, collectionID int64, states []string) []any {
	args := []any{waiting, collectionID}
	for _, s := range states {
		args = append(args, s)
	}
	return args
}

// CancelledCounts sorts the executions a collection's write cancelled by job, oldest first, and
// calls count once per job with their number (the driver runs CollectionCancelCount).
func CancelledCounts(xs []store.Execution, count func(jobID int64, n int) error) error {
	slices.SortFunc(xs, func(a, b store.Execution) int { return cmp.Or(cmp.Compare(a.JobID, b.JobID), cmp.Compare(a.ID, b.ID)) })
	for i := 0; i < len(xs); {
		j := i
		for j < len(xs) && xs[j].JobID == xs[i].JobID {
			j++
		}
		if err := count(xs[i].JobID, j-i); err != nil {
			return fmt.Errorf("cancel waiting: job %d: %w", xs[i].JobID, err)
		}
		i = j
	}
	return nil
}
