package sqlite

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store/sqlstore"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/jobstate"
)

// overlapStateSQL reads what jobstate.Overlap needs of a job: its stored executions, oldest
// first, each with its due time (store.BufferedDueAt: waiting, buffered unless a backfill's;
// any other: unfinished).
const overlapStateSQL = `SELECT tag, due_at, backfill FROM executions WHERE job_id = ? ORDER BY id`

// skipClaimSQL skips an occurrence of a job (store.ExecutionClaim.Skip): the job, at the
// version expected and Claimable, takes its next execution ($1) and a new version, its count
// unchanged. With nothing left and no execution of it stored it is Completed (the rule of
// jobstate.Record.Settle for a job with nothing scheduled and no other execution).
const skipClaimSQL = `UPDATE jobs SET version = version + 1,
		next_execution_time = ?1,
		state = CASE WHEN ?1 = 0 AND NOT EXISTS (SELECT 1 FROM executions x WHERE x.job_id = jobs.id)
			THEN '` + jobstate.Completed + `' ELSE state END,
		final_at = CASE WHEN ?1 = 0 AND NOT EXISTS (SELECT 1 FROM executions x WHERE x.job_id = jobs.id)
			THEN ?2 ELSE final_at END
		WHERE id = ?3 AND version = ?4 AND ` + claimableSQL + `
		RETURNING version, execution_count`

// claimBufferedSQL is claim.scheduled for an occurrence the overlap rule buffers: it counts, but
// has not started, so the job's lastExecutionTime is left alone (releasedSQL sets it when it is
// released, jobstate.LastExecutionAt).
const claimBufferedSQL = `UPDATE jobs SET next_execution_time = ?, execution_count = execution_count + 1, version = version + 1
		WHERE id = ? AND version = ? AND ` + claimableSQL + `
		RETURNING version, execution_count`

// releasedSQL: the job ?2 of a released execution started it at ?1 (its lastExecutionTime).
const releasedSQL = `UPDATE jobs SET last_execution_time = ?1, version = version + 1 WHERE id = ?2 RETURNING version, state`

// releaseSQL releases the buffered execution of job ?2 (due_at ?3, store.BufferedDueAt, not a
// backfill's) when no execution of the job is unfinished any more (none that does not wait): it
// is due at ?1. It is the twin of jobstate.BufferedRuns (storetest's Rule/OverlapRelease pins
// both). Only while the job is Claimable: a job disabled meanwhile (or its collection) has it
// cancelled instead (dropBufferedSQL), as a change cancels an occurrence claimed ahead.
var releaseSQL = `UPDATE executions SET due_at = ?1 WHERE job_id = ?2 AND due_at = ?3 AND NOT backfill
		AND NOT EXISTS (SELECT 1 FROM executions x WHERE x.job_id = ?2 AND x.due_at != ?3)
		AND EXISTS (SELECT 1 FROM jobs WHERE jobs.id = ?2 AND ` + claimableSQL + `)
		RETURNING ` + executionReturning

// dropBufferedSQL cancels the buffered execution of job ?1 (due_at ?2) that releaseSQL did not
// release because the job is no longer Claimable; dropBufferedJobSQL takes it off the job's
// executionCount (it did not execute), as a cancelled claim.
const (
	dropBufferedSQL = `DELETE FROM executions WHERE job_id = ?1 AND due_at = ?2 AND NOT backfill
		AND NOT EXISTS (SELECT 1 FROM executions x WHERE x.job_id = ?1 AND x.due_at != ?2)
		AND NOT EXISTS (SELECT 1 FROM jobs WHERE jobs.id = ?1 AND ` + claimableSQL + `)
		RETURNING id`
	dropBufferedJobSQL = `UPDATE jobs SET execution_count = execution_count - 1, version = version + 1 WHERE id = ?`
)

// executionReturning is sqlstore.ExecutionColumns unqualified, for a RETURNING clause.
var executionReturning = strings.ReplaceAll(sqlstore.ExecutionColumns, "e.", "")

// claimSpecial makes a claim that store.ExecutionClaim.Special says needs more than a scheduled
// claim: the overlap rule decides (run, buffer or skip) from the job's executions, in the claim's
// transaction (SQLite has one writer: nothing changes them meanwhile), or the claim is a skip.
// A claim that runs or buffers returns its execution, to be inserted with the others.
func (d *Driver) claimSpecial(ctx context.Context, tx *sql.Tx, c store.ExecutionClaim, now int64) (store.ExecutionClaimResult, error) {
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
	decided := sqlstore.DecideSpecialClaim(c, running, waiting, fromNanos(now))
	skip, next, buffered, e := decided.Skip, decided.Next, decided.Buffered, decided.Execution
	if skip != nil {
		return d.skipClaim(ctx, tx, c.ExpectVersion, e.JobID, next, skip, now)
	}
	var (
		version int64
		count   int
		row     *sql.Row
	)
	if buffered { // the job's lastExecutionTime stays until its release
		row = tx.QueryRowContext(ctx, claimBufferedSQL, nanos(next), e.JobID, c.ExpectVersion)
	} else {
		row = d.stmt(ctx, tx, "claim.scheduled").QueryRowContext(ctx, nanos(next), lastExecutionAt(&e, now), e.JobID, c.ExpectVersion)
	}
	err := row.Scan(&version, &count)
	if errors.Is(err, sql.ErrNoRows) {
		return d.claimLost(ctx, tx, e.JobID)
	}
	if err != nil {
		return store.ExecutionClaimResult{}, err
	}
	e.RepeatCount = count
	return store.ExecutionClaimResult{Execution: &e, Version: version, Buffered: buffered}, nil
}

// overlapState returns the tag of the job's oldest unfinished execution ("": none) and whether
// one of its executions is buffered.
func overlapState(ctx context.Context, tx *sql.Tx, jobID int64) (running string, buffered bool, err error) {
	rows, err := tx.QueryContext(ctx, overlapStateSQL, jobID)
	if err != nil {
		return "", false, fmt.Errorf("overlap state: %w", err)
	}
	defer rows.Close()
	waiting := nanos(store.BufferedDueAt)
	for rows.Next() {
		var (
			tag      string
			due      int64
			backfill int
		)
		if err := rows.Scan(&tag, &due, &backfill); err != nil {
			return "", false, fmt.Errorf("overlap state: %w", err)
		}
		switch {
		case due == waiting:
			buffered = buffered || backfill == 0
		case running == "":
			running = tag
		}
	}
	if err := rows.Err(); err != nil {
		return "", false, fmt.Errorf("overlap state: %w", err)
	}
	return running, buffered, nil
}

// skipClaim skips an occurrence: the job takes next and h goes into its history.
func (d *Driver) skipClaim(ctx context.Context, tx *sql.Tx, expect, jobID int64, next time.Time, h *store.HistoryEntry, now int64) (store.ExecutionClaimResult, error) {
	var (
		version int64
		count   int
	)
	err := tx.QueryRowContext(ctx, skipClaimSQL, nanos(next), now, jobID, expect).Scan(&version, &count)
	if errors.Is(err, sql.ErrNoRows) {
		return d.claimLost(ctx, tx, jobID)
	}
	if err != nil {
		return store.ExecutionClaimResult{}, fmt.Errorf("skip claim: %w", err)
	}
	if err := d.insertHistory(ctx, tx, []any{jobID, 0, h.ExecutionTag, h.ActionName, h.Status, h.Message, 0, count,
		nanos(h.ExpectedExecutionTime), nanos(h.StartTime), nanos(h.EndTime)}); err != nil {
		return store.ExecutionClaimResult{}, err
	}
	return store.ExecutionClaimResult{Version: version, Skipped: true}, nil
}

// claimLost tells why a claim of job jobID did not win: gone, or changed.
func (d *Driver) claimLost(ctx context.Context, tx *sql.Tx, jobID int64) (store.ExecutionClaimResult, error) {
	var one int
	switch err := d.stmt(ctx, tx, "claim.exists").QueryRowContext(ctx, jobID).Scan(&one); {
	case errors.Is(err, sql.ErrNoRows):
		return store.ExecutionClaimResult{Err: fmt.Errorf("job %d: %w", jobID, store.ErrNotFound)}, nil
	case err != nil:
		return store.ExecutionClaimResult{}, err
	}
	return store.ExecutionClaimResult{Err: fmt.Errorf("job %d changed: %w", jobID, store.ErrConflict)}, nil
}

// release releases the buffered execution of a record's job (store.AttemptRecord.Release) when
// nothing of the job is unfinished (res.Released; the job's lastExecutionTime becomes now and
// res says the job's version and state after it), or cancels it when the job is no longer
// Claimable.
func (d *Driver) release(ctx context.Context, tx *sql.Tx, jobID, now int64, res *store.AttemptRecordResult) error {
	x, err := d.releaseOne(ctx, tx, jobID, now)
	if err != nil || x == nil {
		return err
	}
	res.Released = x
	var version int64
	if err := tx.QueryRowContext(ctx, releasedSQL, nanos(jobstate.LastExecutionAt(fromNanos(now), fromNanos(now))), jobID).Scan(&version, &res.State); err != nil {
		return fmt.Errorf("release: job: %w", err)
	}
	if res.Version == 0 {
		res.Previous = version - 1
	}
	res.Version = version
	return nil
}

// releaseOne releases the buffered execution of job jobID, or cancels it: nil when none is
// released.
func (d *Driver) releaseOne(ctx context.Context, tx *sql.Tx, jobID, now int64) (*store.Execution, error) {
	rows, err := tx.QueryContext(ctx, releaseSQL, now, jobID, nanos(store.BufferedDueAt))
	if err != nil {
		return nil, fmt.Errorf("release: %w", err)
	}
	defer rows.Close()
	var out *store.Execution
	for rows.Next() {
		e := &store.Execution{}
		dest, done := executionDest(e)
		if err := rows.Scan(dest...); err != nil {
			return nil, fmt.Errorf("release: %w", err)
		}
		done()
		if out == nil {
			out = e
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("release: %w", err)
	}
	if out != nil {
		return out, nil
	}
	var id int64
	switch err := tx.QueryRowContext(ctx, dropBufferedSQL, jobID, nanos(store.BufferedDueAt)).Scan(&id); {
	case errors.Is(err, sql.ErrNoRows):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("release: drop: %w", err)
	}
	if _, err := tx.ExecContext(ctx, dropBufferedJobSQL, jobID); err != nil {
		return nil, fmt.Errorf("release: drop: %w", err)
	}
	return nil, nil
}

// cancelWaitingSQL cancels job ?1's occurrence waiting (buffered, due at ?2, not a backfill's):
// a change of the job (store.JobPutParams.CancelWaiting, jobstate.WaitingOnChange).
// cancelAllWaitingSQL cancels the executions of its backfill that wait too (due at ?2 as well):
// the job or its collection disabled (store.JobPutParams.CancelBackfill, jobstate.BackfillOnChange).
const (
	cancelWaitingSQL    = `DELETE FROM executions WHERE job_id = ?1 AND due_at = ?2 AND NOT backfill RETURNING id, tag, scheduled, backfill`
	cancelAllWaitingSQL = `DELETE FROM executions WHERE job_id = ?1 AND due_at = ?2 RETURNING id, tag, scheduled, backfill`
)

// cancelWaiting is what a write p does to job jobID's waiting occurrence and backfill before
// replacing the job: for a change, they are deleted in tx; it returns them, oldest first (their
// number is taken off the count written).
func cancelWaiting(ctx context.Context, tx *sql.Tx, p store.JobPutParams, jobID int64) ([]store.Execution, error) {
	q := cancelWaitingSQL
	switch {
	case p.CancelBackfill:
		q = cancelAllWaitingSQL
	case !p.CancelWaiting:
		return nil, nil
	}
	rows, err := tx.QueryContext(ctx, q, jobID, nanos(store.BufferedDueAt))
	if err != nil {
		return nil, fmt.Errorf("cancel waiting: %w", err)
	}
	defer rows.Close()
	var out []store.Execution
	for rows.Next() {
		var (
			e         = store.Execution{JobID: jobID}
			scheduled int64
			backfill  int
		)
		if err := rows.Scan(&e.ID, &e.Tag, &scheduled, &backfill); err != nil {
			return nil, fmt.Errorf("cancel waiting: %w", err)
		}
		e.Scheduled, e.Backfill = fromNanos(scheduled), backfill != 0
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("cancel waiting: %w", err)
	}
	slices.SortFunc(out, func(a, b store.Execution) int { return cmp.Compare(a.ID, b.ID) })
	return out, nil
}

// cancelCollectionWaiting cancels, in tx, the waiting executions of the jobs of collection id in
// the given states (store.CollectionPutParams.CancelBackfillOf): deleted, and their number taken
// off each job's count at now. It returns them by job, oldest first.
func cancelCollectionWaiting(ctx context.Context, tx *sql.Tx, id int64, states []string, now int64) ([]store.Execution, error) {
	rows, err := tx.QueryContext(ctx, sqlstore.CollectionCancelWaiting(len(states)),
		sqlstore.CollectionCancelArgs(nanos(store.BackfillWaiting), id, states)...)
	if err != nil {
		return nil, fmt.Errorf("cancel waiting: %w", err)
	}
	defer rows.Close()
	var out []store.Execution
	for rows.Next() {
		var (
			e         store.Execution
			scheduled int64
			backfill  int
		)
		if err := rows.Scan(&e.ID, &e.JobID, &e.Tag, &scheduled, &backfill); err != nil {
			return nil, fmt.Errorf("cancel waiting: %w", err)
		}
		e.Scheduled, e.Backfill = fromNanos(scheduled), backfill != 0
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("cancel waiting: %w", err)
	}
	rows.Close()
	return out, sqlstore.CancelledCounts(out, func(jobID int64, n int) error {
		_, err := tx.ExecContext(ctx, sqlstore.CollectionCancelCount, n, now, jobID)
		return err
	})
}
