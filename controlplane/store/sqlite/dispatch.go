package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
)

// JobGetByID returns one job or store.ErrNotFound.
func (d *Driver) JobGetByID(ctx context.Context, params store.JobGetByIDParams) (*store.Job, error) {
	j, err := scanJob(d.r.QueryRowContext(ctx, `SELECT `+jobColumns+jobFrom+` WHERE j.id = ?`, params.ID))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("job %d: %w", params.ID, store.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("job get by id: %w", err)
	}
	return j, nil
}

// JobListSchedulable pages through the jobs that can fire.
func (d *Driver) JobListSchedulable(ctx context.Context, params store.JobListSchedulableParams) ([]*store.Job, error) {
	q := `SELECT ` + jobColumns + jobFrom + ` WHERE j.state = ? AND c.state = ? AND j.next_execution_time != 0 AND j.id > ?`
	args := []any{store.JobStateEnabled, store.CollectionStateEnabled, params.AfterID}
	if params.CollectionID != 0 {
		q += ` AND j.collection_id = ?`
		args = append(args, params.CollectionID)
	}
	q += ` ORDER BY j.id LIMIT ?`
	args = append(args, limit(params.Limit))
	rows, err := d.r.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("job list schedulable: %w", err)
	}
	jobs, err := scanJobs(rows)
	if err != nil {
		return nil, fmt.Errorf("job list schedulable: %w", err)
	}
	return jobs, nil
}

// ExecutionClaimMany claims occurrences in one transaction.
func (d *Driver) ExecutionClaimMany(ctx context.Context, params store.ExecutionClaimManyParams) ([]store.ExecutionClaimResult, error) {
	out := make([]store.ExecutionClaimResult, len(params.Claims))
	now := nanos(params.Now)
	err := d.tx(ctx, func(tx *sql.Tx) error {
		scheduled, err := tx.PrepareContext(ctx, `UPDATE jobs SET next_execution_time = ?, execution_count = execution_count + 1,
			last_execution_time = ?, version = version + 1
			WHERE id = ? AND version = ? AND state = 'Enabled'
			AND (SELECT state FROM collections WHERE id = jobs.collection_id) = 'Enabled'
			RETURNING version, execution_count`)
		if err != nil {
			return err
		}
		defer scheduled.Close()
		manual, err := tx.PrepareContext(ctx, `UPDATE jobs SET execution_count = execution_count + 1,
			last_execution_time = ?, version = version + 1 WHERE id = ? RETURNING version, execution_count`)
		if err != nil {
			return err
		}
		defer manual.Close()
		insert, err := tx.PrepareContext(ctx, `INSERT INTO executions
			(job_id, tag, scheduled, repeat_count, missed, manual, phase, attempt, due_at, claimed_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`)
		if err != nil {
			return err
		}
		defer insert.Close()
		for i, c := range params.Claims {
			e := c.Execution
			var version int64
			var count int
			if c.ExpectVersion > 0 {
				err = scheduled.QueryRowContext(ctx, nanos(c.NextExecutionTime), now, e.JobID, c.ExpectVersion).Scan(&version, &count)
			} else {
				err = manual.QueryRowContext(ctx, now, e.JobID).Scan(&version, &count)
			}
			if errors.Is(err, sql.ErrNoRows) {
				var one int
				switch err := tx.QueryRowContext(ctx, `SELECT 1 FROM jobs WHERE id = ?`, e.JobID).Scan(&one); {
				case errors.Is(err, sql.ErrNoRows):
					out[i].Err = fmt.Errorf("job %d: %w", e.JobID, store.ErrNotFound)
				case err != nil:
					return err
				default:
					out[i].Err = fmt.Errorf("job %d changed: %w", e.JobID, store.ErrConflict)
				}
				continue
			}
			if err != nil {
				return err
			}
			e.RepeatCount = count
			if e.Phase == "" {
				e.Phase = store.ActionMain
			}
			err = insert.QueryRowContext(ctx, e.JobID, e.Tag, nanos(e.Scheduled), e.RepeatCount, e.Missed, boolInt(e.Manual),
				e.Phase, e.Attempt, nanos(e.DueAt), nanos(e.ClaimedAt)).Scan(&e.ID)
			if err != nil {
				return err
			}
			out[i] = store.ExecutionClaimResult{Execution: &e, Version: version}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("execution claim: %w", err)
	}
	return out, nil
}

// ExecutionListUnfinished pages through the stored executions.
func (d *Driver) ExecutionListUnfinished(ctx context.Context, params store.ExecutionListUnfinishedParams) ([]*store.Execution, error) {
	rows, err := d.r.QueryContext(ctx, `SELECT id, job_id, tag, scheduled, repeat_count, missed, manual, phase, attempt, due_at, claimed_at
		FROM executions WHERE id > ? ORDER BY id LIMIT ?`, params.AfterID, limit(params.Limit))
	if err != nil {
		return nil, fmt.Errorf("execution list: %w", err)
	}
	defer rows.Close()
	out := []*store.Execution{}
	for rows.Next() {
		var (
			e                       store.Execution
			scheduled, due, claimed int64
			manual                  int
		)
		if err := rows.Scan(&e.ID, &e.JobID, &e.Tag, &scheduled, &e.RepeatCount, &e.Missed, &manual, &e.Phase, &e.Attempt, &due, &claimed); err != nil {
			return nil, fmt.Errorf("execution list: %w", err)
		}
		e.Scheduled, e.DueAt, e.ClaimedAt, e.Manual = fromNanos(scheduled), fromNanos(due), fromNanos(claimed), manual != 0
		out = append(out, &e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("execution list: %w", err)
	}
	return out, nil
}

// AttemptRecordMany records attempts in one transaction.
func (d *Driver) AttemptRecordMany(ctx context.Context, params store.AttemptRecordManyParams) ([]store.AttemptRecordResult, error) {
	out := make([]store.AttemptRecordResult, len(params.Records))
	now := nanos(params.Now)
	err := d.tx(ctx, func(tx *sql.Tx) error {
		stmts := map[string]string{
			"exists": `SELECT j.version, j.state FROM executions e JOIN jobs j ON j.id = e.job_id WHERE e.id = ? AND e.job_id = ?`,
			"history": `INSERT INTO history (job_id, execution_id, execution_tag, action_name, status, message, retry_count, repeat_count,
				expected_execution_time, start_time, end_time) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			"next": `UPDATE executions SET phase = ?, attempt = ?, due_at = ? WHERE id = ?`,
			"job": `UPDATE jobs SET failure_count = failure_count + ?, faulted_count = faulted_count + ?,
				consecutive_faults = CASE WHEN ? THEN consecutive_faults + 1 WHEN ? THEN 0 ELSE consecutive_faults END,
				version = version + 1 WHERE id = ? RETURNING version, state, consecutive_faults, next_execution_time`,
			"delete": `DELETE FROM executions WHERE id = ?`,
			"others": `SELECT count(*) FROM executions WHERE job_id = ?`,
			"final":  `UPDATE jobs SET state = ?, next_execution_time = 0, final_at = ? WHERE id = ?`,
		}
		prepared := make(map[string]*sql.Stmt, len(stmts))
		for name, q := range stmts {
			s, err := tx.PrepareContext(ctx, q)
			if err != nil {
				return fmt.Errorf("prepare %s: %w", name, err)
			}
			defer s.Close()
			prepared[name] = s
		}
		for i, r := range params.Records {
			var (
				version int64
				state   string
			)
			err := prepared["exists"].QueryRowContext(ctx, r.ExecutionID, r.JobID).Scan(&version, &state)
			if errors.Is(err, sql.ErrNoRows) {
				out[i] = store.AttemptRecordResult{Gone: true}
				continue
			}
			if err != nil {
				return err
			}
			out[i] = store.AttemptRecordResult{State: state, Version: version, Previous: version}
			h := r.History
			_, err = prepared["history"].ExecContext(ctx, r.JobID, r.ExecutionID, h.ExecutionTag, h.ActionName, h.Status, h.Message,
				h.RetryCount, h.RepeatCount, nanos(h.ExpectedExecutionTime), nanos(h.StartTime), nanos(h.EndTime))
			if err != nil {
				return err
			}
			if !r.Finished {
				if _, err := prepared["next"].ExecContext(ctx, r.Phase, r.Attempt, nanos(r.Next), r.ExecutionID); err != nil {
					return err
				}
			}
			if !r.Failure && !r.Finished {
				continue
			}
			var (
				consecutive int
				next        int64
			)
			err = prepared["job"].QueryRowContext(ctx, boolInt(r.Failure), boolInt(r.Finished && r.Faulted),
				r.Finished && r.Faulted, r.Finished, r.JobID).Scan(&version, &state, &consecutive, &next)
			if err != nil {
				return err
			}
			out[i].Version, out[i].State = version, state
			if !r.Finished {
				continue
			}
			if _, err := prepared["delete"].ExecContext(ctx, r.ExecutionID); err != nil {
				return err
			}
			if state != store.JobStateEnabled {
				continue
			}
			final := ""
			if r.Faulted && r.FaultedAfter > 0 && consecutive >= r.FaultedAfter {
				final = store.JobStateFaulted
			} else if next == 0 {
				var others int
				if err := prepared["others"].QueryRowContext(ctx, r.JobID).Scan(&others); err != nil {
					return err
				}
				if others == 0 {
					final = store.JobStateCompleted
				}
			}
			if final != "" {
				if _, err := prepared["final"].ExecContext(ctx, final, now, r.JobID); err != nil {
					return err
				}
				out[i].State = final
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("attempt record: %w", err)
	}
	return out, nil
}

// HistoryPurge deletes old history and history beyond the last KeepPerJob executions of each job.
func (d *Driver) HistoryPurge(ctx context.Context, params store.HistoryPurgeParams) (int64, error) {
	var total int64
	err := d.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM history WHERE end_time < ?`, nanos(params.Before))
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		if err != nil {
			return err
		}
		total += n
		if params.KeepPerJob <= 0 {
			return nil
		}
		res, err = tx.ExecContext(ctx, `DELETE FROM history WHERE id IN (
			SELECT id FROM (SELECT id, dense_rank() OVER (PARTITION BY job_id ORDER BY execution_id DESC) AS r FROM history)
			WHERE r > ?)`, params.KeepPerJob)
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		total += n
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("history purge: %w", err)
	}
	return total, nil
}

// JobPurgeFinal deletes Completed and Faulted jobs that ended before params.Before.
func (d *Driver) JobPurgeFinal(ctx context.Context, params store.JobPurgeFinalParams) (int64, error) {
	res, err := d.w.ExecContext(ctx, `DELETE FROM jobs WHERE state IN ('Completed', 'Faulted') AND final_at > 0 AND final_at < ?`,
		nanos(params.Before))
	if err != nil {
		return 0, fmt.Errorf("job purge: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("job purge: %w", err)
	}
	return n, nil
}
