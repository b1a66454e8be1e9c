package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
)

// recordStatement records a run of attempts of distinct jobs in one statement: the executions
// go on (phase, attempt, due time) or are deleted, the history entries of those that existed are
// inserted, and their jobs' counters and states change when the record changes them (see
// sqlite's recordChanges). One row per record comes back, in record order. Every part of one
// statement sees the same snapshot, so "no other execution of the job" leaves out the record's
// own (deleted by this very statement). A record applies only while its execution's owner is the
// record's (store.AttemptRecord.Owner). A finished backfill execution's next one is released
// by a statement of its own (releaseBackfills).
const recordStatement = `WITH v AS (
	SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::boolean[], $4::boolean[], $5::boolean[], $6::integer[],
		$7::timestamptz[], $8::text[], $9::integer[], $10::text[], $11::text[], $12::text[], $13::text[], $14::integer[],
		$15::integer[], $16::timestamptz[], $17::timestamptz[], $18::timestamptz[], $20::text[])
		WITH ORDINALITY AS v(exec_id, job_id, finished, failure, faulted, faulted_after, next_due, phase, attempt,
			tag, action, status, message, retry, repeat, expected, started, ended, owner, ord)
), del AS (
	DELETE FROM executions e USING v WHERE v.finished AND e.id = v.exec_id AND e.job_id = v.job_id AND e.owner = v.owner
	RETURNING e.id
), nxt AS (
	UPDATE executions e SET phase = v.phase, attempt = v.attempt, due_at = v.next_due
	FROM v WHERE NOT v.finished AND e.id = v.exec_id AND e.job_id = v.job_id AND e.owner = v.owner RETURNING e.id
), ok AS (
	SELECT v.* FROM v WHERE v.exec_id IN (SELECT id FROM del UNION ALL SELECT id FROM nxt)
), hist AS (
	INSERT INTO history (job_id, execution_id, execution_tag, action_name, status, message, retry_count, repeat_count,
		expected_execution_time, start_time, end_time)
	SELECT job_id, exec_id, tag, action, status, message, retry, repeat, expected, started, ended FROM ok ORDER BY ord
	RETURNING id
), upd AS (
	UPDATE jobs j SET failure_count = j.failure_count + ok.failure::integer,
		faulted_count = j.faulted_count + (ok.finished AND ok.faulted)::integer,
		consecutive_faults = CASE WHEN ok.finished AND ok.faulted THEN j.consecutive_faults + 1
			WHEN ok.finished THEN 0 ELSE j.consecutive_faults END,
		version = j.version + 1,
		state = ` + recordedState + `,
		next_execution_time = CASE WHEN ` + recordedState + ` <> j.state THEN NULL ELSE j.next_execution_time END,
		final_at = CASE WHEN ` + recordedState + ` <> j.state THEN $19 ELSE j.final_at END
	FROM ok WHERE j.id = ok.job_id
		AND (ok.failure OR (ok.finished AND ok.faulted) OR (ok.finished AND (j.consecutive_faults <> 0 OR j.next_execution_time IS NULL)))
	RETURNING j.id, j.version, j.state
)
SELECT v.exec_id IN (SELECT exec_id FROM ok), upd.version, upd.state, (SELECT count(*) FROM hist)
FROM v LEFT JOIN upd ON upd.id = v.job_id ORDER BY v.ord`

// recordedState is a job's state after a record (ok) that changes it: an Enabled job whose
// execution finished becomes Faulted when its consecutive faults reach FaultedAfter, Completed
// when nothing is scheduled and no other execution of it is left. With the counters and the
// condition of recordStatement's upd, it is the twin of jobstate.Record.Apply: storetest's
// Rule/Record drives the driver through jobstate.RecordTable.
const recordedState = `(CASE
			WHEN NOT ok.finished OR j.state <> 'Enabled' THEN j.state
			WHEN ok.faulted AND ok.faulted_after > 0 AND j.consecutive_faults + 1 >= ok.faulted_after THEN 'Faulted'
			WHEN j.next_execution_time IS NULL AND NOT EXISTS (
				SELECT 1 FROM executions x WHERE x.job_id = j.id AND x.id <> ok.exec_id) THEN 'Completed'
			ELSE j.state END)`

// AttemptRecordMany records attempts: one statement (one round trip) per run of distinct jobs,
// in one transaction when there are several runs.
func (d *Driver) AttemptRecordMany(ctx context.Context, params store.AttemptRecordManyParams) ([]store.AttemptRecordResult, error) {
	for _, r := range params.Records {
		if r.Cancelled {
			return d.recordWithCancels(ctx, params)
		}
	}
	records := params.Records
	out := make([]store.AttemptRecordResult, len(records))
	runs := distinctJobRuns(len(records), func(i int) int64 { return records[i].JobID })
	release := releasing(records)
	statements := len(runs) + backfillReleases(records)
	if len(release) > 0 {
		statements += 2
	}
	err := d.atomically(ctx, statements, func(q querier) error {
		if err := lockJobs(ctx, q, release); err != nil {
			return err
		}
		for _, r := range runs {
			if err := recordRun(ctx, q, params, r[0], r[1], out); err != nil {
				return err
			}
		}
		if err := releaseBackfills(ctx, q, params.Now, records, out); err != nil {
			return err
		}
		return releaseAll(ctx, q, params.Now, records, out)
	})
	if err != nil {
		return nil, fmt.Errorf("attempt record: %w", err)
	}
	return out, nil
}

// cancelStatement deletes a cancelled execution and takes it off its job's executionCount; no
// row when the execution is gone (or not the record's owner's).
const cancelStatement = `WITH del AS (
	DELETE FROM executions WHERE id = $1 AND job_id = $2 AND owner = $3 RETURNING job_id
)
UPDATE jobs j SET execution_count = j.execution_count - 1, version = j.version + 1
FROM del WHERE j.id = del.job_id RETURNING j.version, j.state`

// recordWithCancels records a batch holding cancelled executions: those one by one, the others
// as AttemptRecordMany does, in one transaction.
func (d *Driver) recordWithCancels(ctx context.Context, params store.AttemptRecordManyParams) ([]store.AttemptRecordResult, error) {
	out := make([]store.AttemptRecordResult, len(params.Records))
	var (
		cancelled, restIdx []int
		rest               []store.AttemptRecord
	)
	for i, r := range params.Records {
		if r.Cancelled {
			cancelled = append(cancelled, i)
		} else {
			rest, restIdx = append(rest, r), append(restIdx, i)
		}
	}
	sub := store.AttemptRecordManyParams{Records: rest, Now: params.Now}
	subOut := make([]store.AttemptRecordResult, len(rest))
	runs := distinctJobRuns(len(rest), func(i int) int64 { return rest[i].JobID })
	err := d.tx(ctx, func(tx pgx.Tx) error {
		if err := lockJobs(ctx, tx, releasing(rest)); err != nil {
			return err
		}
		for _, i := range cancelled {
			r := params.Records[i]
			var (
				version int64
				state   string
			)
			err := tx.QueryRow(ctx, cancelStatement, r.ExecutionID, r.JobID, r.Owner).Scan(&version, &state)
			switch {
			case errors.Is(err, pgx.ErrNoRows):
				out[i] = store.AttemptRecordResult{Gone: true}
			case err != nil:
				return err
			default:
				out[i] = store.AttemptRecordResult{State: state, Version: version, Previous: version - 1}
			}
		}
		for _, r := range runs {
			if err := recordRun(ctx, tx, sub, r[0], r[1], subOut); err != nil {
				return err
			}
		}
		if err := releaseBackfills(ctx, tx, params.Now, rest, subOut); err != nil {
			return err
		}
		return releaseAll(ctx, tx, params.Now, rest, subOut)
	})
	if err != nil {
		return nil, fmt.Errorf("attempt record: %w", err)
	}
	for k, i := range restIdx {
		out[i] = subOut[k]
	}
	return out, nil
}

func recordRun(ctx context.Context, q querier, params store.AttemptRecordManyParams, from, to int, out []store.AttemptRecordResult) error {
	n := to - from
	var (
		execIDs, jobIDs                       = make([]int64, n), make([]int64, n)
		finished, failure, faulted            = make([]bool, n), make([]bool, n), make([]bool, n)
		faultedAfter, attempts, retry, repeat = make([]int32, n), make([]int32, n), make([]int32, n), make([]int32, n)
		nextDue, expected, started, ended     = make([]*time.Time, n), make([]*time.Time, n), make([]*time.Time, n), make([]*time.Time, n)
		phases, tags, actions, statuses, msgs = make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
		owners                                = make([]string, n)
	)
	for i := range n {
		r := params.Records[from+i]
		h := r.History
		execIDs[i], jobIDs[i], owners[i] = r.ExecutionID, r.JobID, r.Owner
		finished[i], failure[i], faulted[i], faultedAfter[i] = r.Finished, r.Failure, r.Finished && r.Faulted, int32(r.FaultedAfter)
		nextDue[i], phases[i], attempts[i] = ts(r.Next), r.Phase, int32(r.Attempt)
		tags[i], actions[i], statuses[i], msgs[i] = h.ExecutionTag, h.ActionName, h.Status, h.Message
		retry[i], repeat[i] = int32(h.RetryCount), int32(h.RepeatCount)
		expected[i], started[i], ended[i] = ts(h.ExpectedExecutionTime), ts(h.StartTime), ts(h.EndTime)
	}
	rows, err := q.Query(ctx, recordStatement, execIDs, jobIDs, finished, failure, faulted, faultedAfter, nextDue, phases, attempts,
		tags, actions, statuses, msgs, retry, repeat, expected, started, ended, ts(params.Now), owners)
	if err != nil {
		return err
	}
	defer rows.Close()
	i := 0
	for rows.Next() {
		var (
			found   bool
			version *int64
			state   *string
			hist    int64
		)
		if err := rows.Scan(&found, &version, &state, &hist); err != nil {
			return err
		}
		switch {
		case !found:
			out[from+i] = store.AttemptRecordResult{Gone: true}
		case version != nil:
			out[from+i] = store.AttemptRecordResult{State: *state, Version: *version, Previous: *version - 1}
		}
		i++
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if i != n {
		return fmt.Errorf("%d rows returned for %d records", i, n)
	}
	return nil
}
