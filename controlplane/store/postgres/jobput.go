package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store/sqlstore"
)

// A job write is one statement (jobPutStatement): it reads the collection, locks its row when
// the write may create a job (the job count it keeps is the quota), creates or replaces the job
// under the conditions of store.JobPutParams, and answers what happened, without an error for an
// expected outcome (absent collection, conflict, quota). Concurrent writes that may create are
// committed together (putQueue): one round trip (a pipeline of these statements, one implicit
// transaction) and one commit, so one WAL flush, for the whole group, and the collection row
// stays locked for one commit instead of once per job. Writes conditional on a version
// (ExpectVersion > 0, replacing an existing job) lock no collection and run on their own: one
// statement, one round trip.

// jobPutHead, the lock and jobPutTail make jobPutStatement. Parameters: $1..$3 the collection's
// key, $4 the job's name and $5 its key, $6 properties, $7 state, $8 now, $9..$14 the status,
// $15 ExpectVersion, $16 MaxJobs, $17 whether an existing job is replaced (false in a group: a
// replace there would lock a job row, so it is left to run on its own, in its own transaction),
// $18 the driver's origin, stamped on the change the write records (changes.go), $19 and $20 the
// collection's expected ID and version (0: any), $21 whether the write is a create only.
const jobPutHead = `WITH c AS (
	SELECT id, subscription, resource_group, name, state, job_count, version FROM collections
	WHERE sub_key = $1::text AND rg_key = $2::text AND name_key = $3::text `

const jobPutTail = `
), old AS (
	SELECT j.id, j.version FROM jobs j WHERE j.collection_id = (SELECT id FROM c) AND j.name_key = $5::text
), ins AS (
	INSERT INTO jobs (collection_id, name, name_key, properties, state, created_at, updated_at, version,
		execution_count, failure_count, faulted_count, consecutive_faults, last_execution_time, next_execution_time, final_at)
	SELECT c.id, $4::text, $5::text, $6::text, $7::text, $8::timestamptz, $8::timestamptz, 1,
		$9::integer, $10::integer, $11::integer, $12::integer, $13::timestamptz, $14::timestamptz,
		CASE WHEN $7::text IN ` + sqlstore.FinalStates + ` THEN $8::timestamptz END
	FROM c WHERE $15::bigint = 0 AND NOT EXISTS (SELECT 1 FROM old) AND ($16::integer = 0 OR c.job_count < $16::integer)
		AND ($19::bigint = 0 OR (c.id = $19::bigint AND c.version = $20::bigint))
	ON CONFLICT (collection_id, name_key) DO NOTHING
	RETURNING true AS created, id, name, state, created_at, updated_at, version, execution_count, failure_count,
		faulted_count, consecutive_faults, last_execution_time, next_execution_time
), upd AS (
	UPDATE jobs j SET properties = $6::text, state = $7::text, updated_at = $8::timestamptz, version = j.version + 1,
		execution_count = $9::integer, failure_count = $10::integer, faulted_count = $11::integer,
		consecutive_faults = $12::integer, last_execution_time = $13::timestamptz, next_execution_time = $14::timestamptz,
		final_at = CASE WHEN $7::text IN ` + sqlstore.FinalStates + ` THEN
			CASE WHEN j.state IN ` + sqlstore.FinalStates + ` AND j.final_at IS NOT NULL THEN j.final_at ELSE $8::timestamptz END END
	FROM old WHERE $17::boolean AND NOT $21::boolean AND j.id = old.id AND ($15::bigint = 0 OR j.version = $15::bigint)
		AND ($19::bigint = 0 OR EXISTS (SELECT 1 FROM c WHERE c.id = $19::bigint AND c.version = $20::bigint))
	RETURNING false AS created, j.id, j.name, j.state, j.created_at, j.updated_at, j.version, j.execution_count,
		j.failure_count, j.faulted_count, j.consecutive_faults, j.last_execution_time, j.next_execution_time
), w AS (
	SELECT * FROM ins UNION ALL SELECT * FROM upd
), ch AS (
	INSERT INTO changes (kind, id, origin) SELECT 'job', w.id, $18::text FROM w
)
SELECT c.id, c.subscription, c.resource_group, c.name, c.state, c.job_count, c.version, (SELECT version FROM old),
	w.created, w.id, w.name, w.state, w.created_at, w.updated_at, w.version, w.execution_count, w.failure_count,
	w.faulted_count, w.consecutive_faults, w.last_execution_time, w.next_execution_time
FROM c LEFT JOIN w ON true`

// cancelWaitingCount and cancelWaitingCTE make a replace that cancels the job's occurrence
// waiting (store.JobPutParams.CancelWaiting, jobstate.WaitingOnChange): its execution (due at
// $22, store.BufferedDueAt, not a backfill's) is deleted in the statement and the count written
// is one less. Only such writes (the API's change of a BufferOne job) run it; every other write
// runs the statements above unchanged.
// With $23 (store.JobPutParams.CancelBackfill, jobstate.BackfillOnChange) the executions of the
// job's backfill that wait (due at $22 as well) are cancelled with it.
const (
	cancelWaitingCount = `execution_count = $9::integer - (SELECT count(*)::integer FROM executions x
			WHERE x.job_id = j.id AND x.due_at = $22::timestamptz AND (NOT x.backfill OR $23::boolean)), failure_count`
	cancelWaitingCTE = `), cw AS (
	DELETE FROM executions e USING upd WHERE e.job_id = upd.id AND e.due_at = $22::timestamptz AND (NOT e.backfill OR $23::boolean)
	RETURNING e.id, e.tag, e.scheduled, e.backfill
), w AS (`
	// cancelledColumns are the cancelled executions (store.Job.Cancelled), oldest first, after
	// the columns of jobPutTail.
	cancelledColumns = `,
	(SELECT coalesce(array_agg(cw.id ORDER BY cw.id), '{}') FROM cw), (SELECT coalesce(array_agg(cw.tag ORDER BY cw.id), '{}') FROM cw),
	(SELECT coalesce(array_agg(cw.scheduled ORDER BY cw.id), '{}') FROM cw), (SELECT coalesce(array_agg(cw.backfill ORDER BY cw.id), '{}') FROM cw)
FROM c LEFT JOIN w ON true`
)

// jobPutCancelTail is jobPutTail with the cancel of the waiting occurrence.
var jobPutCancelTail = strings.Replace(strings.Replace(strings.Replace(jobPutTail,
	"execution_count = $9::integer, failure_count", cancelWaitingCount, 1),
	"), w AS (", cancelWaitingCTE, 1),
	"\nFROM c LEFT JOIN w ON true", cancelledColumns, 1)

// The job is looked up with its collection's ID as a parameter (a subquery's), not as a join
// with c: the plan of a join is chosen once per connection (force_generic_plan) from the
// statistics of the moment, and with those of a small jobs table the planner scanned the
// unique index on name_key alone and filtered on the collection, a walk through the whole
// index at every write that stayed for as long as the plan (auto_explain showed it in 85 of
// 2,000 writes of one run, perf 27 % of the server's CPU in such scans in another). A
// parameter is a condition of the index scan itself, whatever the plan.

// jobPutStatement may create: the collection's row is locked (FOR NO KEY UPDATE, as the job
// count's trigger locks it; foreign key checks, KEY SHARE, do not wait for it).
// jobReplaceStatement only replaces (ExpectVersion > 0): it locks no collection.
const (
	jobPutStatement     = jobPutHead + `FOR NO KEY UPDATE` + jobPutTail
	jobReplaceStatement = jobPutHead + jobPutTail
)

// The statements of a write that cancels the waiting occurrence (CancelWaiting).
var (
	jobPutCancelStatement     = jobPutHead + `FOR NO KEY UPDATE` + jobPutCancelTail
	jobReplaceCancelStatement = jobPutHead + jobPutCancelTail
)

// cancels reports whether a write runs a cancel statement: it cancels the job's waiting
// occurrence, or its backfill's waiting executions.
func cancels(p store.JobPutParams) bool { return p.CancelWaiting || p.CancelBackfill }

// putOutcome is what one statement did, when it wrote nothing: the request fails with its
// error, or runs again on its own.
type putOutcome int

const (
	putDone  putOutcome = iota // written, or failed with an error of store's
	putAlone                   // the job exists and the statement left it alone: replace it on its own
	putRaced                   // a concurrent write changed what the statement saw: run it again
)

// maxPutRaces bounds how often a write runs again after racing others.
const maxPutRaces = 3

// jobPutArgs are jobPutStatement's arguments (and the cancel statements' when replace and
// cancels(p)).
func (d *Driver) jobPutArgs(p store.JobPutParams, body string, replace bool) []any {
	j, st := p.Job, p.Job.Status
	c := j.Key.CollectionKey
	args := []any{key(c.Subscription), key(c.ResourceGroup), key(c.Name), j.Key.Name, key(j.Key.Name), body, j.State, p.Now,
		st.ExecutionCount, st.FailureCount, st.FaultedCount, st.ConsecutiveFaults, ts(st.LastExecutionTime), ts(st.NextExecutionTime),
		max(p.ExpectVersion, 0), int32(min(max(p.MaxJobs, 0), 1<<31-1)), replace, d.origin,
		p.ExpectCollection.ID, p.ExpectCollection.Version, p.CreateOnly}
	if replace && cancels(p) {
		args = append(args, store.BufferedDueAt, p.CancelBackfill) // $22 and $23 of the cancel statements
	}
	return args
}

// putRow is one row of a job write's answer (jobPutStatement's, or a request's in
// jobPutGroupStatement's): the collection, the job's version before the write, and the job
// written (nil columns: nothing written).
type putRow struct {
	j                          store.Job
	jobs, cver                 int64
	oldVersion, id, version    *int64
	created                    *bool
	name, state                *string
	createdAt, updatedAt       *time.Time
	last, next                 *time.Time
	execs, fails, faults, cons *int

	cancelledIDs       []int64
	cancelledTags      []string
	cancelledScheduled []time.Time
	cancelledBackfill  []bool
}

// dest are the scan destinations of the row's columns (with the cancelled executions' when
// cancel).
func (pr *putRow) dest(cancel bool) []any {
	j := &pr.j
	dest := []any{&j.CollectionID, &j.Key.Subscription, &j.Key.ResourceGroup, &j.Key.CollectionKey.Name, &j.CollectionState, &pr.jobs, &pr.cver,
		&pr.oldVersion, &pr.created, &pr.id, &pr.name, &pr.state, &pr.createdAt, &pr.updatedAt, &pr.version, &pr.execs, &pr.fails,
		&pr.faults, &pr.cons, &pr.last, &pr.next}
	if cancel {
		dest = append(dest, &pr.cancelledIDs, &pr.cancelledTags, &pr.cancelledScheduled, &pr.cancelledBackfill)
	}
	return dest
}

// scanPut reads jobPutStatement's answer: the job written and whether it was created, or the
// outcome and error of a statement that wrote nothing. The job's properties are left to the
// caller (they are what it wrote).
func scanPut(row pgx.Row, p store.JobPutParams, replace bool) (*store.Job, bool, putOutcome, error) {
	var pr putRow
	err := row.Scan(pr.dest(replace && cancels(p))...)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return nil, false, putDone, fmt.Errorf("collection %s: %w", p.Job.Key.CollectionKey.Name, store.ErrNotFound)
	case err != nil:
		return nil, false, putDone, err
	}
	return pr.outcome(p, replace)
}

// outcome is what a write did, from its row: the job written and whether it was created, or
// the outcome and error of a write that wrote nothing.
func (pr *putRow) outcome(p store.JobPutParams, replace bool) (*store.Job, bool, putOutcome, error) {
	j, k := pr.j, p.Job.Key
	switch {
	case pr.created != nil:
		j.ID, j.Key.Name, j.State, j.Version = *pr.id, *pr.name, *pr.state, *pr.version
		j.CreatedAt, j.UpdatedAt = fromTS(pr.createdAt), fromTS(pr.updatedAt)
		j.Status = store.JobStatus{ExecutionCount: *pr.execs, FailureCount: *pr.fails, FaultedCount: *pr.faults, ConsecutiveFaults: *pr.cons,
			LastExecutionTime: fromTS(pr.last), NextExecutionTime: fromTS(pr.next)}
		for i, xid := range pr.cancelledIDs {
			j.Cancelled = append(j.Cancelled, store.Execution{ID: xid, JobID: j.ID, Tag: pr.cancelledTags[i],
				Scheduled: pr.cancelledScheduled[i].UTC(), Backfill: pr.cancelledBackfill[i]})
		}
		return &j, *pr.created, putDone, nil
	case p.ExpectCollection.ID > 0 && (p.ExpectCollection.ID != j.CollectionID || p.ExpectCollection.Version != pr.cver):
		return nil, false, putDone, fmt.Errorf("collection %s: expected %d version %d, found %d version %d: %w",
			k.CollectionKey.Name, p.ExpectCollection.ID, p.ExpectCollection.Version, j.CollectionID, pr.cver, store.ErrConflict)
	case pr.oldVersion != nil && p.CreateOnly:
		return nil, false, putDone, fmt.Errorf("job %s: a create, and the job exists: %w", k.Name, store.ErrConflict)
	case pr.oldVersion == nil && p.ExpectVersion > 0:
		return nil, false, putDone, fmt.Errorf("job %s: expected version %d, found none: %w", k.Name, p.ExpectVersion, store.ErrConflict)
	case pr.oldVersion == nil && p.MaxJobs > 0 && pr.jobs >= int64(p.MaxJobs):
		return nil, false, putDone, fmt.Errorf("collection %s holds %d jobs, the maximum is %d: %w", k.CollectionKey.Name, pr.jobs, p.MaxJobs, store.ErrQuota)
	case pr.oldVersion == nil:
		return nil, false, putRaced, nil // created meanwhile by another transaction (ON CONFLICT), or left to run alone by a group
	case !replace:
		return nil, false, putAlone, nil
	case p.ExpectVersion > 0 && p.ExpectVersion != *pr.oldVersion:
		return nil, false, putDone, fmt.Errorf("job %s: expected version %d, found %d: %w", k.Name, p.ExpectVersion, *pr.oldVersion, store.ErrConflict)
	case p.ExpectVersion > 0:
		return nil, false, putDone, fmt.Errorf("job %s: expected version %d, changed meanwhile: %w", k.Name, p.ExpectVersion, store.ErrConflict)
	default:
		return nil, false, putRaced, nil // deleted meanwhile
	}
}

// JobPut creates or replaces a job (see the comment at the top of this file).
func (d *Driver) JobPut(ctx context.Context, params store.JobPutParams) (*store.Job, bool, error) {
	return sqlstore.JobPut(ctx, params, func(r *sqlstore.PutRequest) {
		if params.ExpectVersion > 0 {
			d.jobPutAlone(ctx, r)
		} else {
			d.puts.Do(r, d.jobPutGroup)
		}
	})
}

// jobPutAlone runs one write as a statement of its own (one round trip, committed by itself),
// again when a concurrent write raced it.
func (d *Driver) jobPutAlone(ctx context.Context, r *sqlstore.PutRequest) {
	sql := jobPutStatement
	switch {
	case r.Params.ExpectVersion > 0 && cancels(r.Params):
		sql = jobReplaceCancelStatement
	case r.Params.ExpectVersion > 0:
		sql = jobReplaceStatement
	case cancels(r.Params):
		sql = jobPutCancelStatement
	}
	for range maxPutRaces {
		var outcome putOutcome
		r.Out, r.Created, outcome, r.Err = scanPut(d.pool.QueryRow(ctx, sql, d.jobPutArgs(r.Params, r.Body, true)...), r.Params, true)
		if outcome != putRaced {
			return
		}
	}
	r.Out, r.Err = nil, fmt.Errorf("job %s: changed concurrently %d times: %w", r.Params.Job.Key.Name, maxPutRaces, store.ErrConflict)
}
