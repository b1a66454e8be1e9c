// Package sqlstore is what the two SQL drivers (sqlite, postgres) share: the statements both run,
// written once, and the Go around them that does not depend on the database. Statements use $N
// placeholders, which PostgreSQL reads and SQLite (through modernc.org/sqlite) binds to the N-th
// argument as well; times are arguments the driver encodes (Unix nanoseconds on SQLite, 0 for
// the zero time; timestamptz on PostgreSQL, NULL for none).
package sqlstore

import (
	"context"
	"fmt"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/jobstate"
)

// FinalStates is the twin of jobstate.Final: a state is final when it is IN it (storetest's
// Rule/States pins both drivers to the rule's table).
const FinalStates = `('` + jobstate.Completed + `', '` + jobstate.Faulted + `')`

// Settings (store.Maintenance).
const (
	MetaGet         = `SELECT value FROM meta WHERE name = $1`
	MetaPut         = `INSERT INTO meta (name, value) VALUES ($1, $2) ON CONFLICT (name) DO UPDATE SET value = excluded.value`
	MetaPutIfAbsent = `INSERT INTO meta (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING`
)

// Jobs by collection and state (store.Overview.JobStateCount): of every subscription, or of
// the subscription whose key is $1.
const (
	JobStateCount               = `SELECT collection_id, state, count(*) FROM jobs GROUP BY collection_id, state ORDER BY collection_id, state`
	JobStateCountOfSubscription = `SELECT j.collection_id, j.state, count(*) FROM jobs j JOIN collections c ON c.id = j.collection_id
		WHERE c.sub_key = $1 GROUP BY j.collection_id, j.state ORDER BY j.collection_id, j.state`
)

// ExecutionColumns are an execution's columns (of executions e), in the order of each driver's
// executionDest.
const ExecutionColumns = `e.id, e.job_id, e.tag, e.scheduled, e.repeat_count, e.missed, e.manual, e.phase, e.attempt, e.due_at,
	e.claimed_at, e.owner, e.lease_until, e.backfill`

// Prefixed is a row whose first columns are scanned into Prefix, the rest into what Scan is given
// (so that a driver's scanJob reads the job columns that follow an execution's).
type Prefixed struct {
	Row interface {
		Scan(dest ...any) error
	}
	Prefix []any
}

// Scan scans the row into Prefix then dest.
func (p Prefixed) Scan(dest ...any) error { return p.Row.Scan(append(p.Prefix, dest...)...) }

// Purge statements. Each deletes at most its last argument's rows (a chunk), so that no
// transaction holds the writer long. HistoryPurgeBeyond looks at the jobs of one range of IDs
// ($2, $3], so that a purge visits each job once (one statement over every job, cut by its
// LIMIT, started again from the first job for every chunk). jobPurgeFinal's $2 is the driver's
// encoding of the zero time: a job's final_at is above it once set (SQLite stores 0 for none,
// PostgreSQL NULL).
const (
	historyPurgeEnded = `DELETE FROM history WHERE id IN (SELECT id FROM history WHERE end_time < $1 LIMIT $2)`
	// HistoryPurgeBeyond walks the jobs of the range first (SQLite keeps the order of a CROSS
	// JOIN) and searches each one's entries at or below its bound in the (job_id, repeat_count)
	// index: joined the other way round, the statement scanned that index from its start, every
	// kept entry of every job before it, again for every chunk.
	HistoryPurgeBeyond = `DELETE FROM history WHERE id IN (
		SELECT h.id FROM jobs j CROSS JOIN history h
		WHERE j.id > $2 AND j.id <= $3 AND j.execution_count > $1
			AND h.job_id = j.id AND h.repeat_count <= j.execution_count - $1 LIMIT $4)`
	jobLastID = `SELECT coalesce(max(id), 0) FROM jobs`
	// jobFinalBefore picks the jobs final since before $1 ($2: the zero time).
	jobFinalBefore = `state IN ` + FinalStates + ` AND final_at > $2 AND final_at < $1`
	// jobPurgeFinal deletes a chunk ($3) of the jobs final long enough.
	jobPurgeFinal = `DELETE FROM jobs WHERE id IN (SELECT id FROM jobs WHERE ` + jobFinalBefore + ` LIMIT $3)`
	// JobPurgeFinalLocked is jobPurgeFinal for a driver whose writers lock a collection's row
	// before its jobs' (PostgreSQL: the job count's trigger updates the collections of the deleted
	// jobs, after the delete has locked their rows). It locks the rows of the collections of a
	// chunk of those jobs in ID order (c), then deletes a chunk of those jobs of the locked
	// collections only. The collections' IDs are an array of c (an initial plan, run whole before
	// the jobs are searched), so that every collection is locked before the first job.
	JobPurgeFinalLocked = `WITH c AS MATERIALIZED (SELECT id FROM collections
		WHERE id IN (SELECT collection_id FROM jobs WHERE ` + jobFinalBefore + ` LIMIT $3) ORDER BY id FOR NO KEY UPDATE)
	DELETE FROM jobs WHERE id IN (SELECT id FROM jobs WHERE ` + jobFinalBefore + `
		AND collection_id = ANY(ARRAY(SELECT id FROM c)) LIMIT $3)`
)

const (
	// purgeChunk is how many history rows one purge statement deletes at most.
	purgeChunk = 500
	// purgeJobSpan is how many job IDs one statement of the purge beyond the bound looks at.
	purgeJobSpan = 1000
	// purgeJobChunk is how many jobs one purge statement deletes at most: each takes its history
	// (up to 1,000 executions' worth) with it.
	purgeJobChunk = 50
)

// Exec runs a statement (committed on its own) and returns how many rows it affected.
type Exec func(ctx context.Context, query string, args ...any) (int64, error)

// Purger is the store.Purger both drivers are: Exec runs a statement, Int reads a query's one
// integer, Time encodes a time as the driver stores it.
type Purger struct {
	Exec Exec
	// JobPurge, when set, runs each chunk of the final jobs' purge in place of Exec: it is given
	// jobPurgeFinal and its arguments, and runs them its own way (PostgreSQL: JobPurgeFinalLocked).
	JobPurge Exec
	Int      func(ctx context.Context, query string) (int64, error)
	Time     func(time.Time) any
}

// HistoryPurge deletes history that ended before params.Before, and history beyond the last
// KeepPerJob executions of each job (executions are numbered by the job's execution count: those
// at or below count - KeepPerJob go), in statements of at most purgeChunk rows, those beyond the
// bound purgeJobSpan job IDs at a time.
func (p Purger) HistoryPurge(ctx context.Context, params store.HistoryPurgeParams) (int64, error) {
	total, err := p.deleteChunks(ctx, p.Exec, params.Pause, purgeChunk, historyPurgeEnded, p.Time(params.Before))
	if err != nil {
		return total, fmt.Errorf("history purge: %w", err)
	}
	if params.KeepPerJob <= 0 {
		return total, nil
	}
	last, err := p.Int(ctx, jobLastID)
	if err != nil {
		return total, fmt.Errorf("history purge: last job: %w", err)
	}
	for from := int64(0); from < last; from += purgeJobSpan {
		n, err := p.deleteChunks(ctx, p.Exec, params.Pause, purgeChunk, HistoryPurgeBeyond, params.KeepPerJob, from, from+purgeJobSpan)
		total += n
		if err != nil {
			return total, fmt.Errorf("history purge: %w", err)
		}
	}
	return total, nil
}

// JobPurgeFinal deletes Completed and Faulted jobs that ended before params.Before, with their
// history, purgeJobChunk jobs per statement.
func (p Purger) JobPurgeFinal(ctx context.Context, params store.JobPurgeFinalParams) (int64, error) {
	exec := p.Exec
	if p.JobPurge != nil {
		exec = p.JobPurge
	}
	n, err := p.deleteChunks(ctx, exec, nil, purgeJobChunk, jobPurgeFinal, p.Time(params.Before), p.Time(time.Time{}))
	if err != nil {
		return n, fmt.Errorf("job purge: %w", err)
	}
	return n, nil
}

// deleteChunks runs a DELETE whose last argument is a LIMIT (chunk) with exec until it deletes
// fewer rows than that, calling pause (when set) after each statement that deleted rows, and
// returns the rows deleted.
func (Purger) deleteChunks(ctx context.Context, exec Exec, pause func(context.Context) error, chunk int, q string, args ...any) (int64, error) {
	var total int64
	for {
		n, err := exec(ctx, q, append(args, chunk)...)
		if err != nil {
			return total, err
		}
		total += n
		if n > 0 && pause != nil {
			if err := pause(ctx); err != nil {
				return total, err
			}
		}
		if n < int64(chunk) {
			return total, nil
		}
	}
}

// Columns and clauses of the CRUD statements. The Where clauses' placeholders are $1..$n: a
// statement that adds one of them adds no other placeholder (SQLite would number a '?' after them
// from 1 again).
const (
	CollectionColumns = `id, subscription, resource_group, name, location, tags, properties, created_at, updated_at, version`
	// JobColumns are a job's columns (of jobs j and its collection c), in the drivers' scanJob order.
	JobColumns = `j.id, j.collection_id, c.subscription, c.resource_group, c.name, c.state, j.name, j.properties, j.state,
	j.created_at, j.updated_at, j.version, j.execution_count, j.failure_count, j.faulted_count, j.consecutive_faults,
	j.last_execution_time, j.next_execution_time`
	JobFrom        = ` FROM jobs j JOIN collections c ON c.id = j.collection_id`
	HistoryColumns = `id, job_id, execution_id, execution_tag, action_name, status, message, retry_count, repeat_count,
	expected_execution_time, start_time, end_time`
	// WhereCollectionKey selects a collection by its keys (store.NameKey of each name).
	WhereCollectionKey = ` WHERE sub_key = $1 AND rg_key = $2 AND name_key = $3`
	// WhereJobKey selects a job (of JobFrom) by its keys.
	WhereJobKey = ` WHERE c.sub_key = $1 AND c.rg_key = $2 AND c.name_key = $3 AND j.name_key = $4`
	JobCount    = `SELECT count(*) FROM jobs WHERE collection_id = $1`
	// JobWithCollection reads the collection of keys $1..$3 and its job of name key $4, when it
	// has one, in one lookup (store.Driver.JobGetWithCollection): the collection's columns
	// (CollectionColumns), then the job's (JobColumns) with zeros for a job that does not exist
	// (ID 0, times $5: the driver's encoding of the zero time).
	JobWithCollection = `SELECT c.id, c.subscription, c.resource_group, c.name, c.location, c.tags, c.properties, c.created_at,
	c.updated_at, c.version,
	COALESCE(j.id, 0), c.id, c.subscription, c.resource_group, c.name, c.state, COALESCE(j.name, ''), COALESCE(j.properties, '{}'),
	COALESCE(j.state, ''), COALESCE(j.created_at, $5), COALESCE(j.updated_at, $5), COALESCE(j.version, 0),
	COALESCE(j.execution_count, 0), COALESCE(j.failure_count, 0), COALESCE(j.faulted_count, 0), COALESCE(j.consecutive_faults, 0),
	COALESCE(j.last_execution_time, $5), COALESCE(j.next_execution_time, $5)
	FROM collections c LEFT JOIN jobs j ON j.collection_id = c.id AND j.name_key = $4
	WHERE c.sub_key = $1 AND c.rg_key = $2 AND c.name_key = $3`
	// JobListAll pages through every job: after ID $1, at most $2, whose properties text
	// contains $3 ('': every job; SQLite's LIKE also matches it in another ASCII case).
	JobListAll = `SELECT ` + JobColumns + JobFrom + ` WHERE j.id > $1
		AND ($3 = '' OR CAST(j.properties AS TEXT) LIKE '%' || $3 || '%') ORDER BY j.id LIMIT $2`
	// JobListPaused pages through the Disabled jobs whose definition mentions resumeAt (the
	// caller reads the definition: a note may mention it too): after ID $1, at most $2.
	JobListPaused = `SELECT ` + JobColumns + JobFrom + ` WHERE j.state = 'Disabled' AND CAST(j.properties AS TEXT) LIKE '%"resumeAt"%'
		AND j.id > $1 ORDER BY j.id LIMIT $2`
	// ExecutionListUnfinished pages through the stored executions: after ID $1, at most $2.
	ExecutionListUnfinished = `SELECT ` + ExecutionColumns + ` FROM executions e WHERE e.id > $1 ORDER BY e.id LIMIT $2`
	// ExecutionListUnfinishedOfJob is ExecutionListUnfinished for job $3's executions alone.
	ExecutionListUnfinishedOfJob = `SELECT ` + ExecutionColumns + ` FROM executions e WHERE e.job_id = $3 AND e.id > $1 ORDER BY e.id LIMIT $2`
)

// The schema version's statements (each driver's migrate).
const (
	SchemaVersionCreate = `CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)`
	SchemaVersionGet    = `SELECT version FROM schema_version`
	SchemaVersionInit   = `INSERT INTO schema_version (version) VALUES (0)`
	SchemaVersionSet    = `UPDATE schema_version SET version = $1`
)

// HistoryFailed is the query of store.Overview.HistoryFailed: $1 the oldest end time, $2 the
// newest attempts looked at, $3 the limit; with a subscription, HistoryFailedOfSubscription and
// its key in $4.
const (
	historyFailed = `SELECT h.id, h.job_id, h.execution_id, h.execution_tag, h.action_name, h.status, h.message,
		h.retry_count, h.repeat_count, h.expected_execution_time, h.start_time, h.end_time,
		c.subscription, c.resource_group, c.name, j.name
	FROM (SELECT * FROM history WHERE end_time >= $1 ORDER BY end_time DESC LIMIT $2) h
	JOIN jobs j ON j.id = h.job_id JOIN collections c ON c.id = j.collection_id
	WHERE h.action_name = 'MainAction' AND h.status = 'Failed'`
	historyFailedOrder          = ` ORDER BY h.end_time DESC, h.id DESC LIMIT $3`
	HistoryFailed               = historyFailed + historyFailedOrder
	HistoryFailedOfSubscription = historyFailed + ` AND c.sub_key = $4` + historyFailedOrder
)
