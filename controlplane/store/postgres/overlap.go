package postgres

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store/sqlstore"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/jobstate"
)

// Statements of the claims that store.ExecutionClaim.Special says need more than a scheduled
// claim, and of the release of a buffered execution.
const (
	// lockJobsSQL locks job rows, in ID order: a claim that reads a job's executions for the
	// overlap rule and a record that ends one of them (and releases the buffered one) take their
	// turns, whichever replica makes them, so that neither decides on what the other is changing.
	lockJobsSQL = `SELECT id FROM jobs WHERE id = ANY($1::bigint[]) ORDER BY id FOR UPDATE`
	// fenceSQL is true when the claims may be made under term $1 (see termFence).
	fenceSQL = `SELECT ` + termFence
	// overlapStateSQL reads what jobstate.Overlap needs of a job: its executions, oldest first,
	// each saying whether it waits (due at store.BufferedDueAt, $2) and whether it is a
	// backfill's (waiting, it is not buffered).
	overlapStateSQL = `SELECT tag, due_at = $2, backfill FROM executions WHERE job_id = $1 ORDER BY id`
	// claimOneSQL is a scheduled claim of one job (its execution inserted by executionInsertSQL);
	// $3 NULL (a buffered occurrence, not started) leaves its lastExecutionTime alone.
	claimOneSQL = `UPDATE jobs j SET next_execution_time = $2, execution_count = j.execution_count + 1,
		last_execution_time = COALESCE($3, j.last_execution_time), version = j.version + 1
		WHERE j.id = $1 AND j.version = $4 AND ` + claimableSQL + ` RETURNING j.version, j.execution_count`
	executionInsertSQL = `INSERT INTO executions (job_id, tag, scheduled, repeat_count, missed, manual, phase, attempt, due_at, claimed_at)
		VALUES ($1, $2, $3, $4, $5, false, $6, 0, $7, $8) RETURNING id`
	// skipClaimSQL skips an occurrence (store.ExecutionClaim.Skip): the job, at the version
	// expected and Claimable, takes its next execution ($2) and a new version, its count
	// unchanged; with nothing left and no execution of it stored it is Completed (the rule of
	// jobstate.Record.Settle for a job with nothing scheduled and no other execution).
	skipClaimSQL = `UPDATE jobs j SET version = j.version + 1,
		next_execution_time = $2::timestamptz,
		state = CASE WHEN $2::timestamptz IS NULL AND NOT EXISTS (SELECT 1 FROM executions x WHERE x.job_id = j.id)
			THEN '` + jobstate.Completed + `' ELSE j.state END,
		final_at = CASE WHEN $2::timestamptz IS NULL AND NOT EXISTS (SELECT 1 FROM executions x WHERE x.job_id = j.id)
			THEN $3 ELSE j.final_at END
		WHERE j.id = $1 AND j.version = $4 AND ` + claimableSQL + ` RETURNING j.version, j.execution_count`
	historyInsertSQL = `INSERT INTO history (job_id, execution_id, execution_tag, action_name, status, message, retry_count,
		repeat_count, expected_execution_time, start_time, end_time) VALUES ($1, 0, $2, $3, $4, $5, 0, $6, $7, $8, $9)`
	// releaseSQL releases the buffered execution of job $2 (due at $3, store.BufferedDueAt, not a
	// backfill's) when no execution of the job is unfinished any more (none that does not wait):
	// it is due at $1. It is the twin of jobstate.BufferedRuns (storetest's Rule/OverlapRelease
	// pins both).
	// Only while the job is Claimable: a job disabled meanwhile (or its collection) has it
	// cancelled instead (dropBufferedSQL), as a change cancels an occurrence claimed ahead.
	releaseSQL = `UPDATE executions e SET due_at = $1 WHERE e.job_id = $2 AND e.due_at = $3 AND NOT e.backfill
		AND NOT EXISTS (SELECT 1 FROM executions x WHERE x.job_id = $2 AND x.due_at <> $3)
		AND EXISTS (SELECT 1 FROM jobs j WHERE j.id = $2 AND ` + claimableSQL + `)
		RETURNING ` + sqlstore.ExecutionColumns
	// releasedSQL: the job $2 of a released execution started it at $1 (its lastExecutionTime).
	releasedSQL = `UPDATE jobs SET last_execution_time = $1, version = version + 1 WHERE id = $2 RETURNING version, state`
	// dropBufferedSQL cancels the buffered execution of job $1 (due at $2) that releaseSQL did
	// not release because the job is no longer Claimable, and takes it off the job's
	// executionCount (it did not execute), as a cancelled claim.
	dropBufferedSQL = `WITH del AS (
	DELETE FROM executions e WHERE e.job_id = $1 AND e.due_at = $2 AND NOT e.backfill
		AND NOT EXISTS (SELECT 1 FROM executions x WHERE x.job_id = $1 AND x.due_at <> $2)
		AND NOT EXISTS (SELECT 1 FROM jobs j WHERE j.id = $1 AND ` + claimableSQL + `)
	RETURNING e.job_id
)
UPDATE jobs j SET execution_count = j.execution_count - 1, version = j.version + 1 FROM del WHERE j.id = del.job_id`
)

// specialClaims reports whether any of claims needs claimSpecial.
func specialClaims(claims []store.ExecutionClaim) bool {
	for i := range claims {
		if claims[i].Special() {
			return true
		}
	}
	return false
}

// claimWithSpecial claims a batch holding special claims (store.ExecutionClaim.Special) in one
// transaction: those one by one, with their jobs locked, the others as ExecutionClaimMany does.
func (d *Driver) claimWithSpecial(ctx context.Context, params store.ExecutionClaimManyParams) ([]store.ExecutionClaimResult, error) {
	out := make([]store.ExecutionClaimResult, len(params.Claims))
	var (
		special, restIdx []int
		rest             []store.ExecutionClaim
		locked           []int64
	)
	for i, c := range params.Claims {
		if c.Special() {
			special, locked = append(special, i), append(locked, c.Execution.JobID)
		} else {
			rest, restIdx = append(rest, c), append(restIdx, i)
		}
	}
	sub := store.ExecutionClaimManyParams{Claims: rest, Now: params.Now, Term: params.Term}
	subOut := make([]store.ExecutionClaimResult, len(rest))
	runs := distinctJobRuns(len(rest), func(i int) int64 { return rest[i].Execution.JobID })
	manual := manualJobs(rest)
	err := d.tx(ctx, func(tx pgx.Tx) error {
		var ok bool
		if err := tx.QueryRow(ctx, fenceSQL, params.Term).Scan(&ok); err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("term %d: %w", params.Term, store.ErrStaleTerm)
		}
		// The manual claims' collections and jobs first (collections before jobs), then the
		// special claims' jobs.
		var refused map[int64]error
		if len(manual) > 0 {
			var err error
			if refused, err = lockManual(ctx, tx, manual); err != nil {
				return err
			}
		}
		if err := lockJobs(ctx, tx, locked); err != nil {
			return err
		}
		if err := d.claimUnrefused(ctx, tx, sub, runs, refused, subOut); err != nil {
			return err
		}
		for _, i := range special {
			r, err := claimSpecial(ctx, tx, params.Claims[i], params.Now)
			if err != nil {
				return err
			}
			out[i] = r
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("execution claim: %w", err)
	}
	for k, i := range restIdx {
		out[i] = subOut[k]
	}
	return out, nil
}

// lockJobs locks the rows of jobs (lockJobsSQL).
func lockJobs(ctx context.Context, q querier, ids []int64) error {
	if len(ids) == 0 {
		return nil
	}
	ids = append([]int64(nil), ids...)
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	rows, err := q.Query(ctx, lockJobsSQL, ids)
	if err != nil {
		return err
	}
	rows.Close()
	return rows.Err()
}

// claimSpecial makes one special claim, its job's row locked: the overlap rule decides (run,
// buffer or skip) from the job's executions, or the claim is a skip.
func claimSpecial(ctx context.Context, tx pgx.Tx, c store.ExecutionClaim, now time.Time) (store.ExecutionClaimResult, error) {
	var (
		running string
		waiting bool
	)
	if c.Skip == nil {
		var err error
		if running, waiting, err = overlapState(ctx, tx, c.Execution.JobID); err != nil {
			return store.ExecutionClaimResult{}, err
		}
	}
	decided := sqlstore.DecideSpecialClaim(c, running, waiting, now)
	skip, next, buffered, e := decided.Skip, decided.Next, decided.Buffered, decided.Execution
	if skip != nil {
		var (
			version int64
			count   int
		)
		err := tx.QueryRow(ctx, skipClaimSQL, e.JobID, ts(next), now, c.ExpectVersion).Scan(&version, &count)
		if errors.Is(err, pgx.ErrNoRows) {
			return claimLostOne(ctx, tx, e.JobID)
		}
		if err != nil {
			return store.ExecutionClaimResult{}, fmt.Errorf("skip claim: %w", err)
		}
		_, err = tx.Exec(ctx, historyInsertSQL, e.JobID, skip.ExecutionTag, skip.ActionName, skip.Status, skip.Message, count,
			ts(skip.ExpectedExecutionTime), ts(skip.StartTime), ts(skip.EndTime))
		if err != nil {
			return store.ExecutionClaimResult{}, fmt.Errorf("skip claim: history: %w", err)
		}
		return store.ExecutionClaimResult{Version: version, Skipped: true}, nil
	}
	last := ts(jobstate.LastExecutionAt(now, e.DueAt))
	if buffered {
		last = nil // the job's lastExecutionTime stays until its release (releasedSQL)
	}
	var version int64
	err := tx.QueryRow(ctx, claimOneSQL, e.JobID, ts(next), last, c.ExpectVersion).Scan(&version, &e.RepeatCount)
	if errors.Is(err, pgx.ErrNoRows) {
		return claimLostOne(ctx, tx, e.JobID)
	}
	if err != nil {
		return store.ExecutionClaimResult{}, err
	}
	err = tx.QueryRow(ctx, executionInsertSQL, e.JobID, e.Tag, e.Scheduled, e.RepeatCount, e.Missed, e.Phase, e.DueAt, e.ClaimedAt).Scan(&e.ID)
	if err != nil {
		return store.ExecutionClaimResult{}, fmt.Errorf("execution insert: %w", err)
	}
	return store.ExecutionClaimResult{Execution: &e, Version: version, Buffered: buffered}, nil
}

// overlapState returns the tag of the job's oldest unfinished execution ("": none) and whether
// one of its executions is buffered.
func overlapState(ctx context.Context, q querier, jobID int64) (running string, buffered bool, err error) {
	rows, err := q.Query(ctx, overlapStateSQL, jobID, store.BufferedDueAt)
	if err != nil {
		return "", false, fmt.Errorf("overlap state: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			tag               string
			waiting, backfill bool
		)
		if err := rows.Scan(&tag, &waiting, &backfill); err != nil {
			return "", false, fmt.Errorf("overlap state: %w", err)
		}
		switch {
		case waiting:
			buffered = buffered || !backfill
		case running == "":
			running = tag
		}
	}
	if err := rows.Err(); err != nil {
		return "", false, fmt.Errorf("overlap state: %w", err)
	}
	return running, buffered, nil
}

// claimLostOne tells why a special claim did not win: its job is gone, or changed.
func claimLostOne(ctx context.Context, q querier, jobID int64) (store.ExecutionClaimResult, error) {
	var exists bool
	if err := q.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM jobs WHERE id = $1)`, jobID).Scan(&exists); err != nil {
		return store.ExecutionClaimResult{}, err
	}
	if exists {
		return store.ExecutionClaimResult{Err: fmt.Errorf("job %d changed: %w", jobID, store.ErrConflict)}, nil
	}
	return store.ExecutionClaimResult{Err: fmt.Errorf("job %d: %w", jobID, store.ErrNotFound)}, nil
}

// releasing lists the jobs of the records that may release a buffered execution.
func releasing(records []store.AttemptRecord) []int64 {
	var ids []int64
	for _, r := range records {
		if r.Release && r.Finished && !r.Cancelled {
			ids = append(ids, r.JobID)
		}
	}
	return ids
}

// releaseAll releases, after records (their results in out), the buffered executions of their
// jobs that nothing unfinished holds back any more (store.AttemptRecord.Release).
func releaseAll(ctx context.Context, q querier, now time.Time, records []store.AttemptRecord, out []store.AttemptRecordResult) error {
	for i, r := range records {
		if !r.Release || !r.Finished || r.Cancelled || out[i].Gone {
			continue
		}
		rows, err := q.Query(ctx, releaseSQL, now, r.JobID, store.BufferedDueAt)
		if err != nil {
			return fmt.Errorf("release: %w", err)
		}
		for rows.Next() {
			e := &store.Execution{}
			dest, done := executionDest(e)
			if err := rows.Scan(dest...); err != nil {
				rows.Close()
				return fmt.Errorf("release: %w", err)
			}
			done()
			if out[i].Released == nil {
				out[i].Released = e
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("release: %w", err)
		}
		if out[i].Released != nil {
			if err := released(ctx, q, now, r.JobID, &out[i]); err != nil {
				return err
			}
		} else {
			rows, err := q.Query(ctx, dropBufferedSQL, r.JobID, store.BufferedDueAt)
			if err != nil {
				return fmt.Errorf("release: drop: %w", err)
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return fmt.Errorf("release: drop: %w", err)
			}
		}
	}
	return nil
}

// released sets the lastExecutionTime of the job of an execution released at now (it starts
// then: jobstate.LastExecutionAt) and says the job's version and state in res.
func released(ctx context.Context, q querier, now time.Time, jobID int64, res *store.AttemptRecordResult) error {
	var version int64
	if err := q.QueryRow(ctx, releasedSQL, jobstate.LastExecutionAt(now, now), jobID).Scan(&version, &res.State); err != nil {
		return fmt.Errorf("release: job: %w", err)
	}
	if res.Version == 0 {
		res.Previous = version - 1
	}
	res.Version = version
	return nil
}

// cancelCollectionWaiting cancels, in tx, the waiting executions of the jobs of collection id in
// the given states (store.CollectionPutParams.CancelBackfillOf): those jobs' rows are locked
// first, the executions deleted, and their number taken off each job's count at now. It returns
// them by job, oldest first.
func cancelCollectionWaiting(ctx context.Context, tx pgx.Tx, id int64, states []string, now time.Time) ([]store.Execution, error) {
	args := sqlstore.CollectionCancelArgs(store.BackfillWaiting, id, states)
	if _, err := tx.Exec(ctx, sqlstore.CollectionWaitingJobsLock(len(states)), args...); err != nil {
		return nil, fmt.Errorf("cancel waiting: lock: %w", err)
	}
	rows, err := tx.Query(ctx, sqlstore.CollectionCancelWaiting(len(states)), args...)
	if err != nil {
		return nil, fmt.Errorf("cancel waiting: %w", err)
	}
	var out []store.Execution
	for rows.Next() {
		var e store.Execution
		if err := rows.Scan(&e.ID, &e.JobID, &e.Tag, &e.Scheduled, &e.Backfill); err != nil {
			rows.Close()
			return nil, fmt.Errorf("cancel waiting: %w", err)
		}
		e.Scheduled = e.Scheduled.UTC()
		out = append(out, e)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("cancel waiting: %w", err)
	}
	return out, sqlstore.CancelledCounts(out, func(jobID int64, n int) error {
		_, err := tx.Exec(ctx, sqlstore.CollectionCancelCount, n, now, jobID)
		return err
	})
}
