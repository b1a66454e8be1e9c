package postgres

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store/sqlstore"
)

// maxPutGroup bounds the requests of one transaction.
const maxPutGroup = 256

// jobPutGroupStatement writes a group of job creates in one statement: the requests are arrays
// unnested server-side, so the server starts one statement for the group, not one per job (the
// start of jobPutStatement, with its CTEs, was the largest part of a job write's server CPU).
// It locks the group's collections in the order of their keys (so that groups of several replicas
// never deadlock), finds each request's job, and inserts the jobs of the requests that create
// under the conditions of jobPutStatement; it answers one row per request whose collection
// exists, in the order of the requests, with jobPutStatement's columns after the request's
// position. The statement sees each collection's job count as it was before it: within a
// collection, a create is written only when that count plus its rank among the group's creates
// there stays within MaxJobs. The count answered is the one after the statement (the row is
// locked: no one else changes it), so a create left out fails with ErrQuota when the collection
// is full after the group's creates; one left out otherwise (a create that lost to another
// transaction's took a rank) runs again on its own, as does the second request of the group
// for the same job.
// Parameters: $1..$17 arrays, one element per request (the collection's key, the job's name
// and key, properties, state, now, the status, MaxJobs, the collection's expected ID and
// version), $18 the driver's origin.
const jobPutGroupStatement = `WITH r AS (
	SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::timestamptz[],
		$9::integer[], $10::integer[], $11::integer[], $12::integer[], $13::timestamptz[], $14::timestamptz[], $15::integer[],
		$16::bigint[], $17::bigint[])
		WITH ORDINALITY AS r(sub_key, rg_key, coll_key, name, name_key, properties, state, at, execs, fails, faults, cons,
			last_at, next_at, max_jobs, expect_id, expect_version, i)
), c AS (
	SELECT id, subscription, resource_group, name, state, job_count, version, sub_key, rg_key, name_key FROM collections
	WHERE (sub_key, rg_key, name_key) IN (SELECT sub_key, rg_key, coll_key FROM r)
	ORDER BY sub_key, rg_key, name_key
	FOR NO KEY UPDATE
), rc AS (
	SELECT r.*, c.id AS cid, c.job_count, c.version AS cver,
		(SELECT j.version FROM jobs j WHERE j.collection_id = c.id AND j.name_key = r.name_key) AS old_version,
		row_number() OVER (PARTITION BY c.id, r.name_key ORDER BY r.i) AS nth
	FROM r JOIN c ON c.sub_key = r.sub_key AND c.rg_key = r.rg_key AND c.name_key = r.coll_key
), cand AS (
	SELECT rc.*, row_number() OVER (PARTITION BY rc.cid ORDER BY rc.i) AS creates FROM rc
	WHERE rc.old_version IS NULL AND rc.nth = 1 AND (rc.expect_id = 0 OR (rc.cid = rc.expect_id AND rc.cver = rc.expect_version))
), ins AS (
	INSERT INTO jobs (collection_id, name, name_key, properties, state, created_at, updated_at, version,
		execution_count, failure_count, faulted_count, consecutive_faults, last_execution_time, next_execution_time, final_at)
	SELECT cid, name, name_key, properties, state, at, at, 1, execs, fails, faults, cons, last_at, next_at,
		CASE WHEN state IN ` + sqlstore.FinalStates + ` THEN at END
	FROM cand WHERE max_jobs = 0 OR job_count + creates <= max_jobs
	ORDER BY i
	ON CONFLICT (collection_id, name_key) DO NOTHING
	RETURNING collection_id, name_key, id, name, state, created_at, updated_at, version, execution_count, failure_count,
		faulted_count, consecutive_faults, last_execution_time, next_execution_time
), ch AS (
	INSERT INTO changes (kind, id, origin) SELECT 'job', ins.id, $18::text FROM ins ORDER BY ins.id
)
SELECT rc.i, c.id, c.subscription, c.resource_group, c.name, c.state,
	c.job_count + (SELECT count(*) FROM ins WHERE ins.collection_id = c.id)::integer, c.version, rc.old_version,
	CASE WHEN ins.id IS NOT NULL THEN true END, ins.id, ins.name, ins.state, ins.created_at, ins.updated_at, ins.version,
	ins.execution_count, ins.failure_count, ins.faulted_count, ins.consecutive_faults, ins.last_execution_time, ins.next_execution_time
FROM rc JOIN c ON c.id = rc.cid
	LEFT JOIN ins ON rc.nth = 1 AND ins.collection_id = rc.cid AND ins.name_key = rc.name_key
ORDER BY rc.i`

// jobPutGroupArgs are jobPutGroupStatement's arguments for the requests rs.
func (d *Driver) jobPutGroupArgs(rs []*sqlstore.PutRequest) []any {
	n := len(rs)
	var (
		subs, rgs, colls, names, nameKeys, bodies, states = make([]string, n), make([]string, n), make([]string, n),
			make([]string, n), make([]string, n), make([]string, n), make([]string, n)
		nows, lasts, nexts         = make([]*time.Time, n), make([]*time.Time, n), make([]*time.Time, n)
		execs, fails, faults, cons = make([]int32, n), make([]int32, n), make([]int32, n), make([]int32, n)
		maxJobs                    = make([]int32, n)
		expectIDs, expectVersions  = make([]int64, n), make([]int64, n)
	)
	for i, r := range rs {
		p := r.Params
		j, st, c := p.Job, p.Job.Status, p.Job.Key.CollectionKey
		subs[i], rgs[i], colls[i], names[i], nameKeys[i] = key(c.Subscription), key(c.ResourceGroup), key(c.Name), j.Key.Name, key(j.Key.Name)
		bodies[i], states[i], nows[i] = r.Body, j.State, &p.Now
		execs[i], fails[i], faults[i], cons[i] = int32(st.ExecutionCount), int32(st.FailureCount), int32(st.FaultedCount), int32(st.ConsecutiveFaults)
		lasts[i], nexts[i] = ts(st.LastExecutionTime), ts(st.NextExecutionTime)
		maxJobs[i] = int32(min(max(p.MaxJobs, 0), 1<<31-1))
		expectIDs[i], expectVersions[i] = p.ExpectCollection.ID, p.ExpectCollection.Version
	}
	return []any{subs, rgs, colls, names, nameKeys, bodies, states, nows, execs, fails, faults, cons, lasts, nexts, maxJobs,
		expectIDs, expectVersions, d.origin}
}

// jobPutGroup runs a group. A request whose context is done is skipped. A group of one is a
// statement on its own. A larger group is one statement (jobPutGroupStatement), its requests in
// the order of the collections' keys and, within a collection, in the order they came. A
// request whose job exists, or that the statement left to run alone, runs again on its own
// after the group. An error of the statement writes nothing: each request then runs on its own,
// so that only the one at fault fails.
func (d *Driver) jobPutGroup(group []*sqlstore.PutRequest) {
	live := make([]*sqlstore.PutRequest, 0, len(group))
	for _, r := range group {
		r.Out, r.Created, r.Err = nil, false, r.Ctx.Err()
		if r.Err == nil {
			live = append(live, r)
		}
	}
	// The transaction serves every request: no single caller's cancellation may stop it.
	ctx := context.WithoutCancel(group[0].Ctx)
	if len(live) <= 1 {
		for _, r := range live {
			d.jobPutAlone(ctx, r)
		}
		return
	}
	slices.SortStableFunc(live, func(a, b *sqlstore.PutRequest) int {
		x, y := a.Params.Job.Key.CollectionKey, b.Params.Job.Key.CollectionKey
		return cmp.Or(cmp.Compare(key(x.Subscription), key(y.Subscription)), cmp.Compare(key(x.ResourceGroup), key(y.ResourceGroup)),
			cmp.Compare(key(x.Name), key(y.Name)))
	})
	var again []*sqlstore.PutRequest
	if err := d.runPutGroup(ctx, live, &again); err != nil {
		again = live
	}
	for _, r := range again {
		d.jobPutAlone(ctx, r)
	}
}

// runPutGroup runs jobPutGroupStatement for live and leaves each request's result in it, or
// adds it to again when it is to run on its own.
func (d *Driver) runPutGroup(ctx context.Context, live []*sqlstore.PutRequest, again *[]*sqlstore.PutRequest) error {
	rows, err := d.pool.Query(ctx, jobPutGroupStatement, d.jobPutGroupArgs(live)...)
	if err != nil {
		return fmt.Errorf("job put group: %w", err)
	}
	defer rows.Close()
	answered := make([]bool, len(live))
	for rows.Next() {
		var (
			i  int64
			pr putRow
		)
		if err := rows.Scan(append([]any{&i}, pr.dest(false)...)...); err != nil {
			return fmt.Errorf("job put group: %w", err)
		}
		if i < 1 || int(i) > len(live) {
			return fmt.Errorf("job put group: an answer for request %d of %d", i, len(live))
		}
		r := live[i-1]
		answered[i-1] = true
		var outcome putOutcome
		r.Out, r.Created, outcome, r.Err = pr.outcome(r.Params, false)
		if outcome != putDone {
			*again = append(*again, r)
		}
	}
	if err := rows.Err(); err != nil { // the commit's error, if any
		*again = (*again)[:0]
		return fmt.Errorf("job put group: %w", err)
	}
	for i, r := range live {
		if !answered[i] {
			r.Out, r.Err = nil, fmt.Errorf("collection %s: %w", r.Params.Job.Key.CollectionKey.Name, store.ErrNotFound)
		}
	}
	return nil
}
