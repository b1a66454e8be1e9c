package postgres

import (
	"context"
	"fmt"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/jobstate"
)

// Statements of a manual claim's check (store.ExecutionClaim, ExpectVersion 0 and
// Execution.Manual): the collections' rows first, FOR SHARE (against a change of their state
// until the commit), then the jobs' FOR UPDATE, in the order a collection's write locks them
// (CollectionPut), as a backfill does (ExecutionBackfill).
const (
	// manualCollectionsLockSQL locks the collections of jobs $1, in ID order.
	manualCollectionsLockSQL = `SELECT c.id FROM collections c
		WHERE c.id IN (SELECT j.collection_id FROM jobs j WHERE j.id = ANY($1::bigint[])) ORDER BY c.id FOR SHARE`
	// manualStatesSQL locks jobs $1, in ID order (two replicas claiming a manual run of one
	// job at once: the second waits here for the first's commit, and its claim statement, run
	// after, sees the first's execution), and reads each one's state and its collection's.
	manualStatesSQL = `SELECT j.id, j.state, c.state FROM jobs j JOIN collections c ON c.id = j.collection_id
		WHERE j.id = ANY($1::bigint[]) ORDER BY j.id FOR UPDATE OF j`
)

// lockManual locks the jobs of manual claims (jobIDs) and their collections and returns, by
// job, the refusal (a *store.RunRefusedError) of those that may not run on request as their
// states are in the transaction (jobstate.ManualRunAllowed). A job absent is left to the claim
// (store.ErrNotFound).
func lockManual(ctx context.Context, q querier, jobIDs []int64) (map[int64]error, error) {
	rows, err := q.Query(ctx, manualCollectionsLockSQL, jobIDs)
	if err != nil {
		return nil, fmt.Errorf("manual claim: lock collections: %w", err)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("manual claim: lock collections: %w", err)
	}
	rows, err = q.Query(ctx, manualStatesSQL, jobIDs)
	if err != nil {
		return nil, fmt.Errorf("manual claim: lock jobs: %w", err)
	}
	defer rows.Close()
	var refused map[int64]error
	for rows.Next() {
		var (
			id                     int64
			state, collectionState string
		)
		if err := rows.Scan(&id, &state, &collectionState); err != nil {
			return nil, fmt.Errorf("manual claim: lock jobs: %w", err)
		}
		if !jobstate.ManualRunAllowed(state, collectionState) {
			if refused == nil {
				refused = map[int64]error{}
			}
			refused[id] = fmt.Errorf("job %d: %w", id, &store.RunRefusedError{State: state, CollectionState: collectionState})
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("manual claim: lock jobs: %w", err)
	}
	return refused, nil
}

// manualJobs returns the jobs of the manual claims among claims.
func manualJobs(claims []store.ExecutionClaim) []int64 {
	var out []int64
	for _, c := range claims {
		if c.ExpectVersion <= 0 && c.Execution.Manual {
			out = append(out, c.Execution.JobID)
		}
	}
	return out
}

// claimUnrefused claims params.Claims (none special), one statement per run of distinct jobs
// (runs, distinctJobRuns of params.Claims),
// except the manual claims of the jobs lockManual refused (refused): those claim nothing and
// their results are the refusal.
func (d *Driver) claimUnrefused(ctx context.Context, q querier, params store.ExecutionClaimManyParams, runs [][2]int,
	refused map[int64]error, out []store.ExecutionClaimResult) error {
	claims := params.Claims
	if len(refused) == 0 {
		return d.claimRuns(ctx, q, params, runs, out)
	}
	sub := store.ExecutionClaimManyParams{Now: params.Now, Term: params.Term}
	var at []int
	for i, c := range claims {
		if err := refused[c.Execution.JobID]; err != nil && c.ExpectVersion <= 0 && c.Execution.Manual {
			out[i] = store.ExecutionClaimResult{Err: err}
			continue
		}
		sub.Claims, at = append(sub.Claims, c), append(at, i)
	}
	subOut := make([]store.ExecutionClaimResult, len(sub.Claims))
	subRuns := distinctJobRuns(len(sub.Claims), func(i int) int64 { return sub.Claims[i].Execution.JobID })
	if err := d.claimRuns(ctx, q, sub, subRuns, subOut); err != nil {
		return err
	}
	for k, i := range at {
		out[i] = subOut[k]
	}
	return nil
}
