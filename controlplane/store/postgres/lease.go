package postgres

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store/sqlstore"
)

// executionDest returns the scan destinations of sqlstore.ExecutionColumns for e; done fills e's times.
func executionDest(e *store.Execution) (dest []any, done func()) {
	var scheduled, due, claimed, lease *time.Time
	return []any{&e.ID, &e.JobID, &e.Tag, &scheduled, &e.RepeatCount, &e.Missed, &e.Manual, &e.Phase, &e.Attempt, &due, &claimed,
			&e.Owner, &lease, &e.Backfill}, func() {
			e.Scheduled, e.DueAt, e.ClaimedAt, e.LeaseUntil = fromTS(scheduled), fromTS(due), fromTS(claimed), fromTS(lease)
		}
}

// takeStatement takes unowned executions in one statement: the rows are picked FOR UPDATE SKIP
// LOCKED (concurrent takers skip each other's instead of waiting), owned, and returned with their
// jobs. takeByIDStatement takes given executions.
const (
	takeStatement = `WITH picked AS (
	SELECT id FROM executions WHERE owner = '' AND due_at <= $1 ORDER BY due_at, id LIMIT $2 FOR UPDATE SKIP LOCKED
), taken AS (
	UPDATE executions e SET owner = $3, lease_until = $4 FROM picked WHERE e.id = picked.id RETURNING e.*
)
SELECT ` + sqlstore.ExecutionColumns + `, ` + sqlstore.JobColumns + ` FROM taken e JOIN jobs j ON j.id = e.job_id JOIN collections c ON c.id = j.collection_id`
	takeByIDStatement = `WITH picked AS (
	SELECT id FROM executions WHERE owner = '' AND id = ANY($1) ORDER BY id LIMIT $2 FOR UPDATE SKIP LOCKED
), taken AS (
	UPDATE executions e SET owner = $3, lease_until = $4 FROM picked WHERE e.id = picked.id RETURNING e.*
)
SELECT ` + sqlstore.ExecutionColumns + `, ` + sqlstore.JobColumns + ` FROM taken e JOIN jobs j ON j.id = e.job_id JOIN collections c ON c.id = j.collection_id`
)

// ExecutionTake takes unowned executions for params.Owner (see store.Leases).
func (d *Driver) ExecutionTake(ctx context.Context, params store.ExecutionTakeParams) ([]store.TakenExecution, error) {
	if params.Owner == "" {
		return nil, fmt.Errorf("execution take: an owner is required")
	}
	now := params.Now
	if now.IsZero() {
		now = time.Now()
	}
	q, first := takeStatement, any(params.DueBefore)
	if params.IDs != nil {
		q, first = takeByIDStatement, params.IDs
	}
	rows, err := d.pool.Query(ctx, q, first, limit(params.Limit), params.Owner, now.Add(params.Lease))
	if err != nil {
		return nil, fmt.Errorf("execution take: %w", err)
	}
	defer rows.Close()
	out := []store.TakenExecution{}
	for rows.Next() {
		e := &store.Execution{}
		dest, done := executionDest(e)
		j, err := scanJob(sqlstore.Prefixed{Row: rows, Prefix: dest})
		if err != nil {
			return nil, fmt.Errorf("execution take: %w", err)
		}
		done()
		out = append(out, store.TakenExecution{Execution: e, Job: j})
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("execution take: %w", err)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i].Execution, out[j].Execution
		if !a.DueAt.Equal(b.DueAt) {
			return a.DueAt.Before(b.DueAt)
		}
		return a.ID < b.ID
	})
	return out, nil
}

// ExecutionLeaseRenew renews (or releases) the owner's leases in one statement and returns the
// IDs that are no longer the owner's.
func (d *Driver) ExecutionLeaseRenew(ctx context.Context, params store.ExecutionLeaseRenewParams) ([]int64, error) {
	if len(params.IDs) == 0 {
		return []int64{}, nil
	}
	now := params.Now
	if now.IsZero() {
		now = time.Now()
	}
	q := `UPDATE executions SET lease_until = $3 WHERE owner = $1 AND id = ANY($2) RETURNING id`
	args := []any{params.Owner, params.IDs, now.Add(params.Lease)}
	if params.Release {
		q = `UPDATE executions SET owner = '', lease_until = NULL WHERE owner = $1 AND id = ANY($2) RETURNING id`
		args = args[:2]
	}
	rows, err := d.pool.Query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("execution lease renew: %w", err)
	}
	kept := make(map[int64]bool, len(params.IDs))
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return nil, fmt.Errorf("execution lease renew: %w", err)
		}
		kept[id] = true
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("execution lease renew: %w", err)
	}
	return lost(params.IDs, kept), nil
}

// lost is the ids not kept, in order.
func lost(ids []int64, kept map[int64]bool) []int64 {
	out := []int64{}
	for _, id := range ids {
		if !kept[id] {
			out = append(out, id)
		}
	}
	return out
}

// rescueStatement clears the owner of the executions whose lease ended, fenced by the term as
// claims are.
const rescueStatement = `WITH fence AS (
	SELECT ` + termFence + ` AS ok
), r AS (
	UPDATE executions SET owner = '', lease_until = NULL
	WHERE (SELECT ok FROM fence) AND owner <> '' AND lease_until < $2 RETURNING id
)
SELECT (SELECT ok FROM fence), (SELECT count(*) FROM r)`

// ExecutionRescue re-queues the executions whose lease ended.
func (d *Driver) ExecutionRescue(ctx context.Context, params store.ExecutionRescueParams) (int64, error) {
	now := params.Now
	if now.IsZero() {
		now = time.Now()
	}
	var (
		ok bool
		n  int64
	)
	if err := d.pool.QueryRow(ctx, rescueStatement, params.Term, now).Scan(&ok, &n); err != nil {
		return 0, fmt.Errorf("execution rescue: %w", err)
	}
	if !ok {
		return 0, fmt.Errorf("execution rescue: term %d: %w", params.Term, store.ErrStaleTerm)
	}
	return n, nil
}
