package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/bits"
	"sort"
	"strings"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store/sqlstore"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/jobstate"
)

// JobGetByID returns one job or store.ErrNotFound.
func (d *Driver) JobGetByID(ctx context.Context, params store.JobGetByIDParams) (*store.Job, error) {
	j, err := scanJob(d.crud.jobByID.QueryRowContext(ctx, params.ID))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("job %d: %w", params.ID, store.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("job get by id: %w", err)
	}
	return j, nil
}

// JobGetMany returns the jobs of params.IDs that exist: one prepared read each (SQLite has no
// round trip to save).
func (d *Driver) JobGetMany(ctx context.Context, params store.JobGetManyParams) ([]*store.Job, error) {
	out := make([]*store.Job, 0, len(params.IDs))
	seen := make(map[int64]bool, len(params.IDs))
	for _, id := range params.IDs {
		if seen[id] {
			continue
		}
		seen[id] = true
		j, err := scanJob(d.crud.jobByID.QueryRowContext(ctx, id))
		if errors.Is(err, sql.ErrNoRows) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("job get many: %w", err)
		}
		out = append(out, j)
	}
	return out, nil
}

// schedulableSQL is the twin of jobstate.Schedulable (j the job, c its collection); the
// conformance suite pins both to the same table (storetest's Rule/States).
const schedulableSQL = `j.state = '` + jobstate.Enabled + `' AND c.state = '` + jobstate.CollectionEnabled + `' AND j.next_execution_time != 0`

// claimableSQL is the twin of jobstate.Claimable for the row jobs being updated by a scheduled
// claim (storetest's Rule/States pins both to the same table).
const claimableSQL = `jobs.state = '` + jobstate.Enabled + `'
		AND (SELECT state FROM collections WHERE id = jobs.collection_id) = '` + jobstate.CollectionEnabled + `'`

// JobListSchedulable pages through the jobs that can fire.
func (d *Driver) JobListSchedulable(ctx context.Context, params store.JobListSchedulableParams) ([]*store.Job, error) {
	q := `SELECT ` + sqlstore.JobColumns + sqlstore.JobFrom + ` WHERE ` + schedulableSQL + ` AND j.id > ?`
	args := []any{params.AfterID}
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
	defer rows.Close()
	jobs := []*store.Job{}
	for rows.Next() {
		j, props, err := scanJobRaw(rows)
		if err != nil {
			return nil, fmt.Errorf("job list schedulable: %w", err)
		}
		j.PropertiesJSON = props
		jobs = append(jobs, j)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("job list schedulable: %w", err)
	}
	return jobs, nil
}

// ExecutionClaimMany claims occurrences in one transaction.
func (d *Driver) ExecutionClaimMany(ctx context.Context, params store.ExecutionClaimManyParams) ([]store.ExecutionClaimResult, error) {
	out := make([]store.ExecutionClaimResult, len(params.Claims))
	now := nanos(params.Now)
	err := d.tx(ctx, func(tx *sql.Tx) error {
		if err := checkTerm(ctx, tx, params.Term); err != nil {
			return err
		}
		scheduled, manual := d.stmt(ctx, tx, "claim.scheduled"), d.stmt(ctx, tx, "claim.manual")
		exists := d.stmt(ctx, tx, "claim.exists")
		var claimed []*store.Execution   // inserted together at the end
		manualTags := map[int64]string{} // manual runs claimed by this call, by job
		// The dispatcher's batches (scheduled claims of distinct jobs) update their jobs a chunk
		// per statement; any other batch goes row by row, in order.
		batched, err := d.claimJobs(ctx, tx, params.Claims, now)
		if err != nil {
			return err
		}
		for i, c := range params.Claims {
			if c.Special() {
				r, err := d.claimSpecial(ctx, tx, c, now)
				if err != nil {
					return err
				}
				out[i] = r
				if r.Execution != nil {
					claimed = append(claimed, r.Execution)
				}
				continue
			}
			e := c.Execution
			var (
				version int64
				count   int
				err     error
			)
			switch r, ok := batched[e.JobID]; {
			case batched != nil && ok:
				version, count = r.version, r.count
			case batched != nil:
				err = sql.ErrNoRows
			case c.ExpectVersion > 0:
				err = scheduled.QueryRowContext(ctx, nanos(c.NextExecutionTime), lastExecutionAt(&e, now), e.JobID, c.ExpectVersion).Scan(&version, &count)
			case e.Manual:
				// The job may run on request as its state and its collection's are in this
				// transaction (the caller read them before).
				var state, collectionState string
				switch err := tx.QueryRowContext(ctx, sqlstore.JobStates, e.JobID).Scan(&state, &collectionState); {
				case errors.Is(err, sql.ErrNoRows):
					out[i].Err = fmt.Errorf("job %d: %w", e.JobID, store.ErrNotFound)
					continue
				case err != nil:
					return err
				case !jobstate.ManualRunAllowed(state, collectionState):
					out[i].Err = fmt.Errorf("job %d: %w", e.JobID, &store.RunRefusedError{State: state, CollectionState: collectionState})
					continue
				}
				tag, ok := manualTags[e.JobID]
				if !ok {
					switch err := d.stmt(ctx, tx, "claim.inflight").QueryRowContext(ctx, e.JobID).Scan(&tag); {
					case errors.Is(err, sql.ErrNoRows):
					case err != nil:
						return err
					default:
						ok = true
					}
				}
				if ok {
					out[i].Err = fmt.Errorf("job %d: %w", e.JobID, &store.RunInFlightError{Tag: tag})
					continue
				}
				err = manual.QueryRowContext(ctx, lastExecutionAt(&e, now), e.JobID).Scan(&version, &count)
				if err == nil {
					manualTags[e.JobID] = e.Tag
				}
			default:
				err = manual.QueryRowContext(ctx, lastExecutionAt(&e, now), e.JobID).Scan(&version, &count)
			}
			if errors.Is(err, sql.ErrNoRows) {
				var one int
				switch err := exists.QueryRowContext(ctx, e.JobID).Scan(&one); {
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
			out[i] = store.ExecutionClaimResult{Execution: &e, Version: version}
			claimed = append(claimed, &e)
		}
		return d.insertExecutions(ctx, tx, claimed)
	})
	if err != nil {
		return nil, fmt.Errorf("execution claim: %w", err)
	}
	return out, nil
}

// claimed is a job as a claim left it.
type claimedJob struct {
	version int64
	count   int
}

// claimJobs updates the jobs of a batch of scheduled claims of distinct jobs, rowsPerStatement per
// statement, and returns the jobs it updated (a claim whose job is absent lost: conflict or gone).
// It returns nil, doing nothing, for any other batch.
func (d *Driver) claimJobs(ctx context.Context, tx *sql.Tx, claims []store.ExecutionClaim, now int64) (map[int64]claimedJob, error) {
	seen := make(map[int64]claimedJob, len(claims))
	regular := make([]store.ExecutionClaim, 0, len(claims))
	for _, c := range claims {
		if _, dup := seen[c.Execution.JobID]; dup || c.ExpectVersion <= 0 {
			return nil, nil
		}
		seen[c.Execution.JobID] = claimedJob{}
		if !c.Special() {
			regular = append(regular, c) // the special ones are claimed one by one (claimSpecial)
		}
	}
	claims = regular
	out := make(map[int64]claimedJob, len(claims))
	for len(claims) > 0 {
		n := chunkSize(len(claims))
		chunk := claims[:n]
		claims = claims[n:]
		args := make([]any, 0, 4*n)
		for _, c := range chunk {
			args = append(args, c.Execution.JobID, c.ExpectVersion, nanos(c.NextExecutionTime), lastExecutionAt(&c.Execution, now))
		}
		err := queryChunk(ctx, d.chunk(ctx, tx, "claim.batch", n), args, func(rows *sql.Rows) error {
			var (
				id int64
				r  claimedJob
			)
			if err := rows.Scan(&id, &r.version, &r.count); err != nil {
				return err
			}
			out[id] = r
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("claim jobs: %w", err)
		}
	}
	return out, nil
}

// queryChunk runs the statement of a chunk (see chunk) with args and calls scan for every row
// returned.
func queryChunk(ctx context.Context, stmt *sql.Stmt, args []any, scan func(*sql.Rows) error) error {
	rows, err := stmt.QueryContext(ctx, args...)
	if err != nil {
		return err
	}
	for rows.Next() {
		if err := scan(rows); err != nil {
			_ = rows.Close()
			return err
		}
	}
	if err := rows.Close(); err != nil {
		return err
	}
	return rows.Err()
}

// lastExecutionAt is the job's lastExecutionTime after claiming e at now (jobstate.LastExecutionAt).
func lastExecutionAt(e *store.Execution, now int64) int64 {
	return nanos(jobstate.LastExecutionAt(fromNanos(now), e.DueAt))
}

func claimBatchOf(n int) string {
	return `UPDATE jobs SET next_execution_time = v.column3, execution_count = execution_count + 1,
		last_execution_time = v.column4, version = version + 1
		FROM (VALUES ` + strings.TrimSuffix(strings.Repeat("(?, ?, ?, ?), ", n), ", ") + `) AS v
		WHERE jobs.id = v.column1 AND jobs.version = v.column2 AND ` + claimableSQL + `
		RETURNING jobs.id, jobs.version, jobs.execution_count`
}

// ExecutionListUnfinished pages through the stored executions.
func (d *Driver) ExecutionListUnfinished(ctx context.Context, params store.ExecutionListUnfinishedParams) ([]*store.Execution, error) {
	q, args := sqlstore.ExecutionListUnfinished, []any{params.AfterID, limit(params.Limit)}
	if params.JobID > 0 {
		q, args = sqlstore.ExecutionListUnfinishedOfJob, append(args, params.JobID)
	}
	rows, err := d.r.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("execution list: %w", err)
	}
	defer rows.Close()
	out := []*store.Execution{}
	for rows.Next() {
		e := &store.Execution{}
		dest, done := executionDest(e)
		if err := rows.Scan(dest...); err != nil {
			return nil, fmt.Errorf("execution list: %w", err)
		}
		done()
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("execution list: %w", err)
	}
	return out, nil
}

// rowsPerStatement is how many rows one multi-row statement carries at most (claimed jobs,
// executions inserted or deleted, history rows, recorded jobs).
const rowsPerStatement = 64

// chunkSize is how many of rest rows the next multi-row statement carries: rowsPerStatement, else
// the largest power of two that fits (37 rows go as 32, 4 and 1). Each size's statement is
// prepared once (chunkedStatements): a batch compiles no statement of its own. Compiling the
// text of a partial chunk on every batch took about 5 % of the daemon's CPU at 20,000 fires/s.
func chunkSize(rest int) int {
	if rest >= rowsPerStatement {
		return rowsPerStatement
	}
	return 1 << (bits.Len(uint(rest)) - 1)
}

// chunkedStatements are the multi-row statements, by kind: the text for n rows. Each is prepared
// for every chunkSize (1, 2, 4 ... rowsPerStatement rows).
var chunkedStatements = map[string]func(n int) string{
	"claim.batch":    claimBatchOf,
	"claim.insert":   executionInsertOf,
	"record.batch":   recordBatchOf,
	"record.delete":  executionDeleteOf,
	"record.history": historyInsertOf,
}

const (
	executionInsert = `INSERT INTO executions (job_id, tag, scheduled, repeat_count, missed, manual, phase, attempt, due_at,
		claimed_at) VALUES `
	executionRow = `(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
)

func executionInsertOf(n int) string {
	return executionInsert + strings.TrimSuffix(strings.Repeat(executionRow+", ", n), ", ") + " RETURNING id, tag"
}

// insertExecutions inserts executions in chunks of rowsPerStatement rows and sets their IDs. Rows of
// one INSERT get increasing IDs in VALUES order; the returned tags check that pairing.
func (d *Driver) insertExecutions(ctx context.Context, tx *sql.Tx, xs []*store.Execution) error {
	for len(xs) > 0 {
		n := chunkSize(len(xs))
		chunk := xs[:n]
		xs = xs[n:]
		args := make([]any, 0, n*10)
		for _, e := range chunk {
			args = append(args, e.JobID, e.Tag, nanos(e.Scheduled), e.RepeatCount, e.Missed, boolInt(e.Manual),
				word(e.Phase), e.Attempt, nanos(e.DueAt), nanos(e.ClaimedAt))
		}
		rows, err := d.chunk(ctx, tx, "claim.insert", n).QueryContext(ctx, args...)
		if err != nil {
			return fmt.Errorf("execution insert: %w", err)
		}
		type idTag struct {
			id  int64
			tag string
		}
		got := make([]idTag, 0, n)
		for rows.Next() {
			var r idTag
			if err := rows.Scan(&r.id, &r.tag); err != nil {
				_ = rows.Close()
				return fmt.Errorf("execution insert: %w", err)
			}
			got = append(got, r)
		}
		if err := rows.Close(); err != nil {
			return fmt.Errorf("execution insert: %w", err)
		}
		if err := rows.Err(); err != nil {
			return fmt.Errorf("execution insert: %w", err)
		}
		if len(got) != n {
			return fmt.Errorf("execution insert: %d rows returned for %d", len(got), n)
		}
		sort.Slice(got, func(i, j int) bool { return got[i].id < got[j].id })
		for i, e := range chunk {
			if got[i].tag != e.Tag {
				return fmt.Errorf("execution insert: row %d came back as %q, want %q", i, got[i].tag, e.Tag)
			}
			e.ID = got[i].id
		}
	}
	return nil
}

// manualInFlightSQL finds the manual run in flight of a job (its tag): with it, the twin of
// jobstate.ManualRunBlocked (storetest's ManualRun/InFlight pins the rule).
const manualInFlightSQL = `SELECT tag FROM executions WHERE job_id = ? AND manual = 1 ORDER BY id LIMIT 1`

// Statements of the dispatcher's batch methods, prepared once on the writer connection.
var writerStatements = map[string]string{
	"claim.scheduled": `UPDATE jobs SET next_execution_time = ?, execution_count = execution_count + 1,
		last_execution_time = ?, version = version + 1
		WHERE id = ? AND version = ? AND ` + claimableSQL + `
		RETURNING version, execution_count`,
	"claim.manual": `UPDATE jobs SET execution_count = execution_count + 1,
		last_execution_time = ?, version = version + 1 WHERE id = ? RETURNING version, execution_count`,
	"claim.exists":   `SELECT 1 FROM jobs WHERE id = ?`,
	"claim.inflight": manualInFlightSQL,
	"record.next":    `UPDATE executions SET phase = ?, attempt = ?, due_at = ? WHERE id = ? AND job_id = ? AND owner = ? RETURNING id`,
	"record.job": `UPDATE jobs SET failure_count = failure_count + ?1, faulted_count = faulted_count + ?2,
		consecutive_faults = CASE WHEN ?2 THEN consecutive_faults + 1 WHEN ?3 THEN 0 ELSE consecutive_faults END,
		version = version + 1 WHERE id = ?4 AND ` + recordChanges("?1", "?2", "?3") + `
		RETURNING version, state, consecutive_faults, next_execution_time`,
	"record.others": `SELECT count(*) FROM executions WHERE job_id = ?`,
	"record.cancel": `UPDATE jobs SET execution_count = execution_count - 1, version = version + 1 WHERE id = ?
		RETURNING version, state`,
	"record.final": `UPDATE jobs SET state = ?, next_execution_time = 0, final_at = ? WHERE id = ?`,
}

// prepare prepares the writer statements once.
func (d *Driver) prepare(ctx context.Context) error {
	d.stmts = make(map[string]*sql.Stmt, len(writerStatements))
	for name, q := range writerStatements {
		s, err := d.w.PrepareContext(ctx, q)
		if err != nil {
			return fmt.Errorf("prepare %s: %w", name, err)
		}
		d.stmts[name] = s
	}
	d.chunks = make(map[string][]*sql.Stmt, len(chunkedStatements))
	for name, textOf := range chunkedStatements {
		for n := 1; n <= rowsPerStatement; n *= 2 {
			s, err := d.w.PrepareContext(ctx, textOf(n))
			if err != nil {
				return fmt.Errorf("prepare %s of %d rows: %w", name, n, err)
			}
			d.chunks[name] = append(d.chunks[name], s)
		}
	}
	return nil
}

// stmt returns a prepared writer statement bound to tx.
func (d *Driver) stmt(ctx context.Context, tx *sql.Tx, name string) *sql.Stmt {
	return tx.StmtContext(ctx, d.stmts[name])
}

// chunk returns the prepared multi-row statement name for n rows (a chunkSize), bound to tx.
func (d *Driver) chunk(ctx context.Context, tx *sql.Tx, name string, n int) *sql.Stmt {
	return tx.StmtContext(ctx, d.chunks[name][bits.Len(uint(n))-1])
}
