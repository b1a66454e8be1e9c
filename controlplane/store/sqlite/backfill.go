package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store/sqlstore"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/jobstate"
)

// backfillInFlightSQL finds the first stored execution of a job's unfinished backfill (its tag).
const backfillInFlightSQL = `SELECT tag FROM executions WHERE job_id = ? AND backfill = 1 ORDER BY id LIMIT 1`

// backfillReleaseSQL makes the next waiting execution of a job's backfill due (?1 the due time,
// ?2 the job, ?3 store.BackfillWaiting): run when a backfill execution of the job finished.
const backfillReleaseSQL = `UPDATE executions SET due_at = ?1 WHERE id = (
	SELECT id FROM executions WHERE job_id = ?2 AND backfill = 1 AND due_at = ?3 ORDER BY id LIMIT 1) RETURNING id`

// ExecutionBackfill stores a backfill's executions (see store.ExecutionBackfillParams).
func (d *Driver) ExecutionBackfill(ctx context.Context, params store.ExecutionBackfillParams) (*store.ExecutionBackfillResult, error) {
	n := len(params.Executions)
	if n == 0 {
		return nil, errors.New("execution backfill: no execution")
	}
	now := nanos(params.Now)
	out := &store.ExecutionBackfillResult{}
	err := d.tx(ctx, func(tx *sql.Tx) error {
		var state, collectionState string
		switch err := tx.QueryRowContext(ctx, sqlstore.JobStates, params.JobID).Scan(&state, &collectionState); {
		case errors.Is(err, sql.ErrNoRows):
			return fmt.Errorf("job %d: %w", params.JobID, store.ErrNotFound)
		case err != nil:
			return err
		case !jobstate.ManualRunAllowed(state, collectionState):
			return fmt.Errorf("job %d: %w", params.JobID, &store.RunRefusedError{State: state, CollectionState: collectionState})
		}
		var tag string
		switch err := tx.QueryRowContext(ctx, backfillInFlightSQL, params.JobID).Scan(&tag); {
		case errors.Is(err, sql.ErrNoRows):
		case err != nil:
			return err
		default:
			return fmt.Errorf("job %d: %w", params.JobID, &store.BackfillInFlightError{Tag: tag})
		}
		err := tx.QueryRowContext(ctx, `UPDATE jobs SET execution_count = execution_count + ?, last_execution_time = ?,
			version = version + 1 WHERE id = ? RETURNING version, execution_count`, n, now, params.JobID).Scan(&out.Version, &out.Count)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("job %d: %w", params.JobID, store.ErrNotFound)
		}
		if err != nil {
			return err
		}
		out.Previous = out.Version - 1
		ins, err := tx.PrepareContext(ctx, `INSERT INTO executions (job_id, tag, scheduled, repeat_count, missed, manual, phase,
			attempt, due_at, claimed_at, backfill) VALUES (?, ?, ?, ?, 0, 0, ?, 0, ?, ?, 1) RETURNING id`)
		if err != nil {
			return err
		}
		defer ins.Close()
		for i, x := range params.Executions {
			e := x
			e.JobID, e.RepeatCount, e.Phase, e.Attempt, e.Missed, e.Manual, e.Backfill = params.JobID, out.Count-n+i+1, store.ActionMain, 0, 0, false, true
			e.ClaimedAt, e.DueAt = params.Now, params.Now
			if i > 0 {
				e.DueAt = store.BackfillWaiting
			}
			if err := ins.QueryRowContext(ctx, e.JobID, e.Tag, nanos(e.Scheduled), e.RepeatCount, e.Phase, nanos(e.DueAt), now).Scan(&e.ID); err != nil {
				return err
			}
			out.Executions = append(out.Executions, &e)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("execution backfill: %w", err)
	}
	return out, nil
}

// releaseBackfills makes the next waiting execution of the job of each record that finished a
// backfill execution (AttemptRecord.Backfill, the execution existed) due at now.
// next[i] says which (0: none), for the record's result (store.AttemptRecordResult.BackfillNext);
// next is nil when no record finished a backfill execution.
func (d *Driver) releaseBackfills(ctx context.Context, tx *sql.Tx, records []store.AttemptRecord, finished map[int64]bool,
	now int64) (next []int64, err error) {
	for i, r := range records {
		if !r.Backfill || !r.Finished || r.Cancelled || !finished[r.ExecutionID] {
			continue
		}
		if next == nil {
			next = make([]int64, len(records))
		}
		err := tx.QueryRowContext(ctx, backfillReleaseSQL, now, r.JobID, nanos(store.BackfillWaiting)).Scan(&next[i])
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return nil, fmt.Errorf("backfill release: %w", err)
		}
	}
	return next, nil
}
