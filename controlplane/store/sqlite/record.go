package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/jobstate"
)

// historyColumnsN is the number of values of one history row; rowsPerStatement rows go in one
// INSERT (one statement per chunk instead of one per row).
const (
	historyColumnsN = 11
	historyInsert   = `INSERT INTO history (job_id, execution_id, execution_tag, action_name, status, message, retry_count,
		repeat_count, expected_execution_time, start_time, end_time) VALUES `
	historyRow = `(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
)

func historyInsertOf(n int) string {
	return historyInsert + strings.TrimSuffix(strings.Repeat(historyRow+", ", n), ", ")
}

// executionDeleteOf deletes n executions by (id, job_id, owner), returning the ones that existed.
func executionDeleteOf(n int) string {
	return `DELETE FROM executions WHERE (id, job_id, owner) IN (VALUES ` +
		strings.TrimSuffix(strings.Repeat("(?, ?, ?), ", n), ", ") + `) RETURNING id`
}

// deleteExecutions deletes the executions the finished records end (those of the record's
// owner), a chunk per statement, and returns which of them existed.
func (d *Driver) deleteExecutions(ctx context.Context, tx *sql.Tx, records []store.AttemptRecord) (map[int64]bool, error) {
	triples := make([]any, 0, 3*len(records))
	for _, r := range records {
		if r.Finished {
			triples = append(triples, r.ExecutionID, r.JobID, r.Owner)
		}
	}
	existed := make(map[int64]bool, len(triples)/3)
	for len(triples) > 0 {
		n := chunkSize(len(triples) / 3)
		chunk := triples[:3*n]
		triples = triples[3*n:]
		err := queryChunk(ctx, d.chunk(ctx, tx, "record.delete", n), chunk, func(rows *sql.Rows) error {
			var id int64
			if err := rows.Scan(&id); err != nil {
				return err
			}
			existed[id] = true
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("execution delete: %w", err)
		}
	}
	return existed, nil
}

// insertHistory inserts history rows (historyColumnsN values each), in order.
func (d *Driver) insertHistory(ctx context.Context, tx *sql.Tx, rows []any) error {
	for len(rows) > 0 {
		n := chunkSize(len(rows) / historyColumnsN)
		chunk := rows[:n*historyColumnsN]
		rows = rows[n*historyColumnsN:]
		if _, err := d.chunk(ctx, tx, "record.history", n).ExecContext(ctx, chunk...); err != nil {
			return fmt.Errorf("history insert: %w", err)
		}
	}
	return nil
}

// AttemptRecordMany records attempts in one transaction.
func (d *Driver) AttemptRecordMany(ctx context.Context, params store.AttemptRecordManyParams) ([]store.AttemptRecordResult, error) {
	out := make([]store.AttemptRecordResult, len(params.Records))
	now := nanos(params.Now)
	err := d.tx(ctx, func(tx *sql.Tx) error {
		next := d.stmt(ctx, tx, "record.next")
		job, othersStmt, final := d.stmt(ctx, tx, "record.job"), d.stmt(ctx, tx, "record.others"), d.stmt(ctx, tx, "record.final")
		cancel := d.stmt(ctx, tx, "record.cancel")
		finished, err := d.deleteExecutions(ctx, tx, params.Records)
		if err != nil {
			return err
		}
		backfillNext, err := d.releaseBackfills(ctx, tx, params.Records, finished, now)
		if err != nil {
			return err
		}
		// History rows, inserted together at the end, and the records that change their job, each
		// sized once for the batch (grown by append, the rows were copied about twice over).
		rows := make([]any, 0, historyColumnsN*len(params.Records))
		touched := make([]int, 0, len(params.Records))
		for i, r := range params.Records {
			var err error
			if r.Finished {
				if !finished[r.ExecutionID] {
					err = sql.ErrNoRows
				}
			} else {
				var id int64
				err = next.QueryRowContext(ctx, r.Phase, r.Attempt, nanos(r.Next), r.ExecutionID, r.JobID, r.Owner).Scan(&id)
			}
			if errors.Is(err, sql.ErrNoRows) {
				out[i] = store.AttemptRecordResult{Gone: true}
				continue
			}
			if err != nil {
				return err
			}
			if r.Cancelled {
				var j recordedJob
				err := cancel.QueryRowContext(ctx, r.JobID).Scan(&j.version, &j.state)
				if errors.Is(err, sql.ErrNoRows) {
					continue
				}
				if err != nil {
					return err
				}
				out[i] = store.AttemptRecordResult{State: j.state, Version: j.version, Previous: j.version - 1}
				continue
			}
			h := r.History
			rows = append(rows, r.JobID, r.ExecutionID, h.ExecutionTag, word(h.ActionName), word(h.Status), h.Message,
				h.RetryCount, h.RepeatCount, nanos(h.ExpectedExecutionTime), nanos(h.StartTime), nanos(h.EndTime))
			if r.Failure || r.Finished {
				touched = append(touched, i)
			}
		}
		// Records of distinct jobs update them a chunk per statement; else row by row, in order.
		batched, err := d.recordJobs(ctx, tx, params.Records, touched)
		if err != nil {
			return err
		}
		for _, i := range touched {
			r := params.Records[i]
			var j recordedJob
			if batched != nil {
				var ok bool
				if j, ok = batched[r.JobID]; !ok {
					continue // nothing to change: the job is untouched
				}
			} else {
				err := job.QueryRowContext(ctx, boolInt(r.Failure), boolInt(r.Finished && r.Faulted),
					boolInt(r.Finished), r.JobID).Scan(&j.version, &j.state, &j.consecutive, &j.next)
				if errors.Is(err, sql.ErrNoRows) {
					continue // nothing to change: the job is untouched
				}
				if err != nil {
					return err
				}
			}
			out[i] = store.AttemptRecordResult{State: j.state, Version: j.version, Previous: j.version - 1}
			// The counters are applied (the twin of jobstate.Record.Apply's); the state is settled
			// by the rule itself.
			rule := jobstate.Record{Failure: r.Failure, Finished: r.Finished, Faulted: r.Faulted, FaultedAfter: r.FaultedAfter}
			others := 0
			if rule.AsksOtherExecutions(j.state, j.consecutive, j.next != 0) {
				if err := othersStmt.QueryRowContext(ctx, r.JobID).Scan(&others); err != nil {
					return err
				}
			}
			if to, ok := rule.Settle(j.state, j.consecutive, j.next != 0, others > 0); ok {
				if _, err := final.ExecContext(ctx, to, now, r.JobID); err != nil {
					return err
				}
				out[i].State = to
			}
		}
		for i, r := range params.Records {
			if backfillNext != nil {
				out[i].BackfillNext = backfillNext[i]
			}
			if r.Release && r.Finished && !r.Cancelled && finished[r.ExecutionID] {
				if err := d.release(ctx, tx, r.JobID, now, &out[i]); err != nil {
					return err
				}
			}
		}
		return d.insertHistory(ctx, tx, rows)
	})
	if err != nil {
		return nil, fmt.Errorf("attempt record: %w", err)
	}
	return out, nil
}

// recordedJob is a job as a record left it.
type recordedJob struct {
	version     int64
	state       string
	consecutive int
	next        int64
}

// recordJobs applies the counters of the touched records to their jobs, rowsPerStatement per
// statement, when those jobs are distinct; it returns nil, doing nothing, otherwise.
func (d *Driver) recordJobs(ctx context.Context, tx *sql.Tx, records []store.AttemptRecord, touched []int) (map[int64]recordedJob, error) {
	seen := make(map[int64]bool, len(touched))
	for _, i := range touched {
		if seen[records[i].JobID] {
			return nil, nil
		}
		seen[records[i].JobID] = true
	}
	out := make(map[int64]recordedJob, len(touched))
	for len(touched) > 0 {
		n := chunkSize(len(touched))
		chunk := touched[:n]
		touched = touched[n:]
		args := make([]any, 0, 4*n)
		for _, i := range chunk {
			r := records[i]
			args = append(args, r.JobID, boolInt(r.Failure), boolInt(r.Finished && r.Faulted), boolInt(r.Finished))
		}
		err := queryChunk(ctx, d.chunk(ctx, tx, "record.batch", n), args, func(rows *sql.Rows) error {
			var (
				id int64
				j  recordedJob
			)
			if err := rows.Scan(&id, &j.version, &j.state, &j.consecutive, &j.next); err != nil {
				return err
			}
			out[id] = j
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("record jobs: %w", err)
		}
	}
	return out, nil
}

func recordBatchOf(n int) string {
	return `UPDATE jobs SET failure_count = failure_count + v.column2, faulted_count = faulted_count + v.column3,
		consecutive_faults = CASE WHEN v.column3 THEN consecutive_faults + 1 WHEN v.column4 THEN 0 ELSE consecutive_faults END,
		version = version + 1
		FROM (VALUES ` + strings.TrimSuffix(strings.Repeat("(?, ?, ?, ?), ", n), ", ") + `) AS v
		WHERE jobs.id = v.column1 AND ` + recordChanges("v.column2", "v.column3", "v.column4") + `
		RETURNING jobs.id, jobs.version, jobs.state, jobs.consecutive_faults, jobs.next_execution_time`
}

// recordChanges is the condition under which a record changes its job (failure, faulted and
// finished are the record's flags): a failure or a fault counts; a good occurrence resets a run
// of consecutive faults; a finished execution of a job with nothing scheduled may complete it.
// With the counters of "record.job" and recordBatchOf it is the twin of jobstate.Record.Apply
// (Changed and the counters; Settle decides the state in Go): storetest's Rule/Record drives the
// driver through jobstate.RecordTable.
// A good occurrence of a job that had no fault and has more to run changes nothing, and the job
// row is not rewritten: most records are that one, and skipping the write saves a scattered page
// per fire.
func recordChanges(failure, faulted, finished string) string {
	return `(` + failure + ` OR ` + faulted + ` OR (` + finished + ` AND (jobs.consecutive_faults != 0 OR jobs.next_execution_time = 0)))`
}

// word returns s as a statement argument without an allocation when it is one of the few words a
// phase or a history status column holds (a constant is boxed in place; a string variable is
// copied to the heap): two allocations fewer per fire.
func word(s string) any {
	switch s {
	case store.ActionMain:
		return store.ActionMain
	case store.ActionError:
		return store.ActionError
	case store.HistoryCompleted:
		return store.HistoryCompleted
	case store.HistoryFailed:
		return store.HistoryFailed
	}
	return s
}
