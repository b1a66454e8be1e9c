package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store/sqlstore"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/jobstate"
)

// leaderName is the name of the one leadership row.
const leaderName = "scheduler"

// JobGetByID returns one job or store.ErrNotFound.
func (d *Driver) JobGetByID(ctx context.Context, params store.JobGetByIDParams) (*store.Job, error) {
	j, err := scanJob(d.pool.QueryRow(ctx, `SELECT `+sqlstore.JobColumns+sqlstore.JobFrom+` WHERE j.id = $1`, params.ID))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("job %d: %w", params.ID, store.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("job get by id: %w", err)
	}
	return j, nil
}

// JobGetMany returns the jobs of params.IDs that exist, in one statement.
func (d *Driver) JobGetMany(ctx context.Context, params store.JobGetManyParams) ([]*store.Job, error) {
	if len(params.IDs) == 0 {
		return []*store.Job{}, nil
	}
	rows, err := d.pool.Query(ctx, `SELECT `+sqlstore.JobColumns+sqlstore.JobFrom+` WHERE j.id = ANY($1::bigint[])`, params.IDs)
	if err != nil {
		return nil, fmt.Errorf("job get many: %w", err)
	}
	jobs, err := scanJobs(rows)
	if err != nil {
		return nil, fmt.Errorf("job get many: %w", err)
	}
	return jobs, nil
}

// JobListSchedulable pages through the jobs that can fire.
func (d *Driver) JobListSchedulable(ctx context.Context, params store.JobListSchedulableParams) ([]*store.Job, error) {
	rows, err := d.pool.Query(ctx, `SELECT `+sqlstore.JobColumns+sqlstore.JobFrom+` WHERE `+schedulableSQL+` AND j.id > $1 AND ($2 = 0 OR j.collection_id = $2) ORDER BY j.id LIMIT $3`,
		params.AfterID, params.CollectionID, limit(params.Limit))
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

// distinctJobRuns splits n items into runs of distinct job IDs, in order: each run is one
// statement.
func distinctJobRuns(n int, jobID func(int) int64) [][2]int {
	var (
		out   [][2]int
		start int
		seen  = map[int64]bool{}
	)
	for i := range n {
		id := jobID(i)
		if seen[id] {
			out = append(out, [2]int{start, i})
			start, seen = i, map[int64]bool{}
		}
		seen[id] = true
	}
	if n > start {
		out = append(out, [2]int{start, n})
	}
	return out
}

// atomically runs fn in one transaction when there is more than one statement to run, else on
// the pool directly (one statement is atomic by itself: one round trip, no BEGIN and COMMIT).
func (d *Driver) atomically(ctx context.Context, statements int, fn func(q querier) error) error {
	if statements <= 1 {
		return fn(d.pool)
	}
	return d.tx(ctx, func(tx pgx.Tx) error { return fn(tx) })
}

// querier is a pool or a transaction.
type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// termFence is true when the claims or the rescue of a statement are fenced by no term ($1 = 0)
// or by the leader's current term; it locks the leader row FOR SHARE, so that no takeover
// commits before the statement does.
const termFence = `$1::bigint = 0 OR EXISTS (SELECT 1 FROM (SELECT term FROM leader WHERE name = '` + leaderName + `' FOR SHARE) l WHERE l.term = $1)`

// claimableSQL is the twin of jobstate.Claimable for a job row j being claimed (storetest's
// Rule/States pins both to the same table).
const claimableSQL = `j.state = '` + jobstate.Enabled + `'
		AND (SELECT c.state FROM collections c WHERE c.id = j.collection_id) = '` + jobstate.CollectionEnabled + `'`

// manualFreeSQL is the twin of !jobstate.ManualRunBlocked for a claim v of job row j: a scheduled
// claim, a claim that is not a manual run, or a manual run of a job with no manual execution
// stored (storetest's ManualRun/InFlight pins the rule).
const manualFreeSQL = `(v.expect > 0 OR NOT v.manual OR NOT EXISTS (SELECT 1 FROM executions x WHERE x.job_id = j.id AND x.manual))`

// schedulableSQL is the twin of jobstate.Schedulable (j the job, c its collection; storetest's
// Rule/States).
const schedulableSQL = `j.state = '` + jobstate.Enabled + `' AND c.state = '` + jobstate.CollectionEnabled + `' AND j.next_execution_time IS NOT NULL`

// claimStatement claims a run of occurrences of distinct jobs in one statement: the jobs are
// updated (a scheduled claim only when the job still has the expected version and it and its
// collection are Enabled), the executions of the claims that won are inserted, and one row per
// claim comes back in claim order. With a term, the leader row is locked FOR SHARE and nothing is
// claimed unless it still holds that term. A manual claim is made only when no manual execution
// of its job is stored; when one is, its tag comes back.
const claimStatement = `WITH fence AS (
	SELECT ` + termFence + ` AS ok
), v AS (
	SELECT * FROM unnest($2::bigint[], $3::bigint[], $4::timestamptz[], $5::timestamptz[], $6::text[], $7::timestamptz[],
		$8::integer[], $9::boolean[], $10::text[], $11::integer[], $12::timestamptz[], $13::timestamptz[])
		WITH ORDINALITY AS v(job_id, expect, next, last, tag, scheduled, missed, manual, phase, attempt, due_at, claimed_at, ord)
), upd AS (
	UPDATE jobs j SET next_execution_time = CASE WHEN v.expect > 0 THEN v.next ELSE j.next_execution_time END,
		execution_count = j.execution_count + 1, last_execution_time = v.last, version = j.version + 1
	FROM v WHERE (SELECT ok FROM fence) AND j.id = v.job_id AND (v.expect = 0 OR (j.version = v.expect AND ` + claimableSQL + `))
		AND ` + manualFreeSQL + `
	RETURNING j.id, j.version, j.execution_count
), ins AS (
	INSERT INTO executions (job_id, tag, scheduled, repeat_count, missed, manual, phase, attempt, due_at, claimed_at)
	SELECT v.job_id, v.tag, v.scheduled, upd.execution_count, v.missed, v.manual, v.phase, v.attempt, v.due_at, v.claimed_at
	FROM v JOIN upd ON upd.id = v.job_id ORDER BY v.ord
	RETURNING id, job_id
)
SELECT (SELECT ok FROM fence), upd.version, upd.execution_count, ins.id,
	CASE WHEN upd.id IS NULL THEN EXISTS (SELECT 1 FROM jobs WHERE id = v.job_id) ELSE true END,
	CASE WHEN upd.id IS NULL AND v.expect = 0 AND v.manual
		THEN (SELECT x.tag FROM executions x WHERE x.job_id = v.job_id AND x.manual ORDER BY x.id LIMIT 1) END
FROM v LEFT JOIN upd ON upd.id = v.job_id LEFT JOIN ins ON ins.job_id = v.job_id ORDER BY v.ord`

// ExecutionClaimMany claims occurrences: one statement (one round trip) per run of distinct
// jobs, in one transaction when there are several runs.
func (d *Driver) ExecutionClaimMany(ctx context.Context, params store.ExecutionClaimManyParams) ([]store.ExecutionClaimResult, error) {
	if specialClaims(params.Claims) {
		return d.claimWithSpecial(ctx, params)
	}
	claims := params.Claims
	out := make([]store.ExecutionClaimResult, len(claims))
	runs := distinctJobRuns(len(claims), func(i int) int64 { return claims[i].Execution.JobID })
	manual := manualJobs(claims)
	statements := len(runs)
	if len(manual) > 0 {
		statements += 2
	}
	err := d.atomically(ctx, statements, func(q querier) error {
		var refused map[int64]error
		if len(manual) > 0 {
			var err error
			if refused, err = lockManual(ctx, q, manual); err != nil {
				return err
			}
		}
		return d.claimUnrefused(ctx, q, params, runs, refused, out)
	})
	if err != nil {
		return nil, fmt.Errorf("execution claim: %w", err)
	}
	return out, nil
}

// claimRuns claims the runs of params.Claims (distinctJobRuns), one statement each.
func (d *Driver) claimRuns(ctx context.Context, q querier, params store.ExecutionClaimManyParams, runs [][2]int, out []store.ExecutionClaimResult) error {
	for _, r := range runs {
		if err := d.claimRun(ctx, q, params, r[0], r[1], out); err != nil {
			return err
		}
	}
	return nil
}

func (d *Driver) claimRun(ctx context.Context, q querier, params store.ExecutionClaimManyParams, from, to int, out []store.ExecutionClaimResult) error {
	if scheduledOnly(params.Claims[from:to]) {
		return claimScheduled(ctx, q, params, params.Claims[from:to], out[from:to])
	}
	n := to - from
	var (
		jobIDs, expect    = make([]int64, n), make([]int64, n)
		next, last, sched = make([]*time.Time, n), make([]*time.Time, n), make([]*time.Time, n)
		due, claimed      = make([]*time.Time, n), make([]*time.Time, n)
		tags, phases      = make([]string, n), make([]string, n)
		missed, attempts  = make([]int32, n), make([]int32, n)
		manual            = make([]bool, n)
		execs             = make([]store.Execution, n)
	)
	for i := range n {
		c := params.Claims[from+i]
		e := c.Execution
		if e.Phase == "" {
			e.Phase = store.ActionMain
		}
		execs[i] = e
		jobIDs[i], expect[i] = e.JobID, max(c.ExpectVersion, 0)
		if c.ExpectVersion > 0 {
			next[i] = ts(c.NextExecutionTime)
		}
		l := jobstate.LastExecutionAt(params.Now, e.DueAt)
		last[i], sched[i], due[i], claimed[i] = ts(l), ts(e.Scheduled), ts(e.DueAt), ts(e.ClaimedAt)
		tags[i], phases[i], missed[i], attempts[i], manual[i] = e.Tag, e.Phase, int32(e.Missed), int32(e.Attempt), e.Manual
	}
	rows, err := q.Query(ctx, claimStatement, params.Term, jobIDs, expect, next, last, tags, sched, missed, manual, phases, attempts, due, claimed)
	if err != nil {
		return err
	}
	defer rows.Close()
	i := 0
	for rows.Next() {
		var (
			ok      bool
			version *int64
			count   *int
			id      *int64
			exists  bool
			running *string
		)
		if err := rows.Scan(&ok, &version, &count, &id, &exists, &running); err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("term %d: %w", params.Term, store.ErrStaleTerm)
		}
		e := &execs[i]
		switch {
		case id != nil:
			e.ID, e.RepeatCount = *id, *count
			out[from+i] = store.ExecutionClaimResult{Execution: e, Version: *version}
		case exists && running != nil:
			out[from+i].Err = fmt.Errorf("job %d: %w", e.JobID, &store.RunInFlightError{Tag: *running})
		case exists:
			out[from+i].Err = fmt.Errorf("job %d changed: %w", e.JobID, store.ErrConflict)
		default:
			out[from+i].Err = fmt.Errorf("job %d: %w", e.JobID, store.ErrNotFound)
		}
		i++
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if i != n {
		return fmt.Errorf("%d rows returned for %d claims", i, n)
	}
	return nil
}

// lastExecutionAtSQL is the twin of jobstate.LastExecutionAt in claimScheduledStatement ($2 the
// claims' now, v.due_at each occurrence's due time; storetest's Claim/Ahead pins it).
const lastExecutionAtSQL = `greatest($2::timestamptz, v.due_at)`

// claimScheduledStatement claims a run of scheduled occurrences of distinct jobs (see
// scheduledOnly): claimStatement without what only a manual claim or a later phase needs, with
// fewer arrays (an occurrence is due when scheduled; last_execution_time is the later of now
// and that) and without a row per claim: only the executions inserted come back (ID, job,
// repeat count; the job's new version is the one expected plus one). A claim that did not win
// is looked into afterwards (claimLost), which is rare: its job changed or went, or the leader
// lost its term. The leader's claim loop makes these, 256 to a statement, and the statement's
// server time is most of what a claim costs: the general statement's joins of every claim with
// its update and insert, its sort and its row per claim took two fifths of it.
const claimScheduledStatement = `WITH upd AS (
	UPDATE jobs j SET next_execution_time = v.next, execution_count = j.execution_count + 1,
		last_execution_time = ` + lastExecutionAtSQL + `, version = j.version + 1
	FROM unnest($3::bigint[], $4::bigint[], $5::timestamptz[], $6::text[], $7::timestamptz[], $8::integer[], $9::timestamptz[])
		WITH ORDINALITY AS v(job_id, expect, next, tag, due_at, missed, claimed_at, ord)
	WHERE (` + termFence + `)
		AND j.id = v.job_id AND j.version = v.expect AND ` + claimableSQL + `
	RETURNING v.ord, j.id, j.execution_count, v.tag, v.due_at, v.missed, v.claimed_at
)
INSERT INTO executions (job_id, tag, scheduled, repeat_count, missed, manual, phase, attempt, due_at, claimed_at)
SELECT id, tag, due_at, execution_count, missed, false, '` + store.ActionMain + `', 0, due_at, claimed_at FROM upd ORDER BY ord
RETURNING id, job_id, repeat_count`

// claimLostStatement tells why claims of claimScheduledStatement did not win: whether the
// leader still holds the term, and which of the jobs exist (the others' versions changed).
const claimLostStatement = `SELECT $1::bigint = 0 OR EXISTS (SELECT 1 FROM leader WHERE name = '` + leaderName + `' AND term = $1),
	ARRAY(SELECT id FROM jobs WHERE id = ANY($2::bigint[]))`

// scheduledOnly reports whether claims are all what claimScheduledStatement makes: scheduled
// (a version expected, not manual), of an occurrence's first attempt, due when scheduled.
func scheduledOnly(claims []store.ExecutionClaim) bool {
	for _, c := range claims {
		e := &c.Execution
		if c.ExpectVersion <= 0 || e.Manual || (e.Phase != "" && e.Phase != store.ActionMain) || e.Attempt != 0 ||
			e.DueAt.IsZero() || !e.DueAt.Equal(e.Scheduled) || e.ClaimedAt.IsZero() {
			return false
		}
	}
	return true
}

// claimScheduled claims a run of claims (scheduledOnly) with claimScheduledStatement and fills
// out, one result per claim.
func claimScheduled(ctx context.Context, q querier, params store.ExecutionClaimManyParams, claims []store.ExecutionClaim,
	out []store.ExecutionClaimResult) error {
	n := len(claims)
	var (
		jobIDs, expect = make([]int64, n), make([]int64, n)
		next           = make([]*time.Time, n)
		due, claimed   = make([]time.Time, n), make([]time.Time, n)
		tags           = make([]string, n)
		missed         = make([]int32, n)
		execs          = make([]store.Execution, n)
		at             = make(map[int64]int, n) // job → index
	)
	for i, c := range claims {
		e := c.Execution
		e.Phase = store.ActionMain
		execs[i], at[e.JobID] = e, i
		jobIDs[i], expect[i], next[i] = e.JobID, c.ExpectVersion, ts(c.NextExecutionTime)
		due[i], claimed[i], tags[i], missed[i] = e.DueAt, e.ClaimedAt, e.Tag, int32(e.Missed)
	}
	rows, err := q.Query(ctx, claimScheduledStatement, params.Term, params.Now, jobIDs, expect, next, tags, due, missed, claimed)
	if err != nil {
		return err
	}
	won := 0
	for rows.Next() {
		var (
			id, jobID int64
			count     int
		)
		if err := rows.Scan(&id, &jobID, &count); err != nil {
			rows.Close()
			return err
		}
		i, ok := at[jobID]
		if !ok || out[i].Execution != nil {
			rows.Close()
			return fmt.Errorf("claim returned job %d, not claimed once", jobID)
		}
		e := &execs[i]
		e.ID, e.RepeatCount = id, count
		out[i] = store.ExecutionClaimResult{Execution: e, Version: expect[i] + 1}
		won++
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	if won == n {
		return nil
	}
	return claimLost(ctx, q, params.Term, won, execs, out)
}

// claimLost fills the results of the claims of execs that did not win (won did): the job is
// gone, or it changed; when none won and the term is no longer the leader's, the run fails
// with store.ErrStaleTerm (as claimStatement's fence). Terms only grow: a term lost when the
// claims were made is lost now. (One lost since, with some claims won, is left to the next
// claim, as when it is lost just after a commit.)
func claimLost(ctx context.Context, q querier, term int64, won int, execs []store.Execution, out []store.ExecutionClaimResult) error {
	var lost []int64
	for i := range execs {
		if out[i].Execution == nil {
			lost = append(lost, execs[i].JobID)
		}
	}
	var (
		holds  bool
		exists []int64
	)
	if err := q.QueryRow(ctx, claimLostStatement, term, lost).Scan(&holds, &exists); err != nil {
		return err
	}
	if !holds && won == 0 {
		return fmt.Errorf("term %d: %w", term, store.ErrStaleTerm)
	}
	for i := range execs {
		switch id := execs[i].JobID; {
		case out[i].Execution != nil:
		case slices.Contains(exists, id):
			out[i].Err = fmt.Errorf("job %d changed: %w", id, store.ErrConflict)
		default:
			out[i].Err = fmt.Errorf("job %d: %w", id, store.ErrNotFound)
		}
	}
	return nil
}

// ExecutionListUnfinished pages through the stored executions.
func (d *Driver) ExecutionListUnfinished(ctx context.Context, params store.ExecutionListUnfinishedParams) ([]*store.Execution, error) {
	q, args := sqlstore.ExecutionListUnfinished, []any{params.AfterID, limit(params.Limit)}
	if params.JobID > 0 {
		q, args = sqlstore.ExecutionListUnfinishedOfJob, append(args, params.JobID)
	}
	rows, err := d.pool.Query(ctx, q, args...)
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
