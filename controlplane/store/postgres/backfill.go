package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store/sqlstore"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/jobstate"
)

// backfillStatement stores a backfill's executions in one statement once the job is locked
// ($1 the job, $2 the tags, $3 the scheduled times, $4 now, $5 store.BackfillWaiting): the job's
// counters move by their number and each execution gets its RepeatCount in order, the first due
// now, the others waiting.
const backfillStatement = `WITH v AS (
	SELECT * FROM unnest($2::text[], $3::timestamptz[]) WITH ORDINALITY AS v(tag, scheduled, ord)
), upd AS (
	UPDATE jobs SET execution_count = execution_count + (SELECT count(*) FROM v), last_execution_time = $4,
		version = version + 1 WHERE id = $1 RETURNING version, execution_count
), ins AS (
	INSERT INTO executions (job_id, tag, scheduled, repeat_count, missed, manual, phase, attempt, due_at, claimed_at, backfill)
	SELECT $1, v.tag, v.scheduled, upd.execution_count - (SELECT count(*) FROM v) + v.ord, 0, false, '` + store.ActionMain + `', 0,
		CASE WHEN v.ord = 1 THEN $4 ELSE $5 END, $4, true
	FROM v, upd ORDER BY v.ord
	RETURNING id, tag, repeat_count
)
SELECT ins.id, ins.tag, ins.repeat_count, upd.version, upd.execution_count FROM ins, upd ORDER BY ins.id`

// ExecutionBackfill stores a backfill's executions (see store.ExecutionBackfillParams). The job
// row is locked first, so that two backfills of one job at once store one, the other finding it.
func (d *Driver) ExecutionBackfill(ctx context.Context, params store.ExecutionBackfillParams) (*store.ExecutionBackfillResult, error) {
	n := len(params.Executions)
	if n == 0 {
		return nil, errors.New("execution backfill: no execution")
	}
	out := &store.ExecutionBackfillResult{}
	err := d.tx(ctx, func(tx pgx.Tx) error {
		// The collection's row first (against a change of its state until the commit), then the
		// job's, in the order a collection's write locks them (CollectionPut).
		var state, collectionState string
		err := tx.QueryRow(ctx, sqlstore.JobStates+` FOR SHARE OF c`, params.JobID).Scan(&state, &collectionState)
		if err == nil {
			err = tx.QueryRow(ctx, `SELECT state FROM jobs WHERE id = $1 FOR UPDATE`, params.JobID).Scan(&state)
		}
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			return fmt.Errorf("job %d: %w", params.JobID, store.ErrNotFound)
		case err != nil:
			return err
		case !jobstate.ManualRunAllowed(state, collectionState):
			return fmt.Errorf("job %d: %w", params.JobID, &store.RunRefusedError{State: state, CollectionState: collectionState})
		}
		var tag string
		err = tx.QueryRow(ctx, `SELECT tag FROM executions WHERE job_id = $1 AND backfill ORDER BY id LIMIT 1`, params.JobID).Scan(&tag)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
		case err != nil:
			return err
		default:
			return fmt.Errorf("job %d: %w", params.JobID, &store.BackfillInFlightError{Tag: tag})
		}
		tags, sched := make([]string, n), make([]time.Time, n)
		for i, x := range params.Executions {
			tags[i], sched[i] = x.Tag, x.Scheduled
		}
		rows, err := tx.Query(ctx, backfillStatement, params.JobID, tags, sched, params.Now, store.BackfillWaiting)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			e := &store.Execution{JobID: params.JobID, Phase: store.ActionMain, Backfill: true, ClaimedAt: params.Now}
			if err := rows.Scan(&e.ID, &e.Tag, &e.RepeatCount, &out.Version, &out.Count); err != nil {
				return err
			}
			i := len(out.Executions)
			if i >= n || e.Tag != tags[i] {
				return fmt.Errorf("backfill row %d came back as %q", i, e.Tag)
			}
			e.Scheduled, e.DueAt = params.Executions[i].Scheduled, params.Now
			if i > 0 {
				e.DueAt = store.BackfillWaiting
			}
			out.Executions = append(out.Executions, e)
		}
		if err := rows.Err(); err != nil {
			return err
		}
		if len(out.Executions) != n {
			return fmt.Errorf("%d executions stored for %d", len(out.Executions), n)
		}
		out.Previous = out.Version - 1
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("execution backfill: %w", err)
	}
	return out, nil
}

// backfillReleaseSQL makes the next waiting execution of a job's backfill due ($1 the due time,
// $2 the job, $3 store.BackfillWaiting): run when a record finished a backfill execution of it.
const backfillReleaseSQL = `UPDATE executions SET due_at = $1 WHERE id = (
	SELECT id FROM executions WHERE job_id = $2 AND backfill AND due_at = $3 ORDER BY id LIMIT 1) RETURNING id`

// backfillReleases counts the records that finish a backfill execution (a statement each).
func backfillReleases(records []store.AttemptRecord) int {
	n := 0
	for _, r := range records {
		if r.Backfill && r.Finished && !r.Cancelled {
			n++
		}
	}
	return n
}

// releaseBackfills makes the next waiting execution of the job of each record that finished a
// backfill execution (AttemptRecord.Backfill; not Gone) due at now (out[i].BackfillNext), after the records and before
// any buffered execution is released (releaseAll): a buffered occurrence waits for the whole
// backfill.
func releaseBackfills(ctx context.Context, q querier, now time.Time, records []store.AttemptRecord, out []store.AttemptRecordResult) error {
	for i, r := range records {
		if !r.Backfill || !r.Finished || r.Cancelled || out[i].Gone {
			continue
		}
		rows, err := q.Query(ctx, backfillReleaseSQL, now, r.JobID, store.BackfillWaiting)
		if err != nil {
			return fmt.Errorf("backfill release: %w", err)
		}
		for rows.Next() {
			if err := rows.Scan(&out[i].BackfillNext); err != nil {
				rows.Close()
				return fmt.Errorf("backfill release: %w", err)
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("backfill release: %w", err)
		}
	}
	return nil
}
