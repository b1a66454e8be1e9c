package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store/sqlstore"
)

// executionDest returns the scan destinations of sqlstore.ExecutionColumns for e; done fills e's times.
func executionDest(e *store.Execution) (dest []any, done func()) {
	var (
		scheduled, due, claimed, lease int64
		manual, backfill               int
	)
	return []any{&e.ID, &e.JobID, &e.Tag, &scheduled, &e.RepeatCount, &e.Missed, &manual, &e.Phase, &e.Attempt, &due, &claimed,
			&e.Owner, &lease, &backfill}, func() {
			e.Scheduled, e.DueAt, e.ClaimedAt, e.LeaseUntil = fromNanos(scheduled), fromNanos(due), fromNanos(claimed), fromNanos(lease)
			e.Manual, e.Backfill = manual != 0, backfill != 0
		}
}

// inList is "(?, ?, ...)" for n values.
func inList(n int) string {
	return "(" + strings.TrimSuffix(strings.Repeat("?, ", n), ", ") + ")"
}

func int64Args(ids []int64) []any {
	out := make([]any, len(ids))
	for i, id := range ids {
		out[i] = id
	}
	return out
}

// ExecutionTake takes unowned executions for params.Owner in one transaction (SQLite has one
// writer: takers cannot overlap).
func (d *Driver) ExecutionTake(ctx context.Context, params store.ExecutionTakeParams) ([]store.TakenExecution, error) {
	if params.Owner == "" {
		return nil, fmt.Errorf("execution take: an owner is required")
	}
	now := params.Now
	if now.IsZero() {
		now = time.Now()
	}
	out := []store.TakenExecution{}
	err := d.tx(ctx, func(tx *sql.Tx) error {
		q, args := `SELECT id FROM executions WHERE owner = '' AND due_at <= ? ORDER BY due_at, id LIMIT ?`,
			[]any{nanos(params.DueBefore), limit(params.Limit)}
		if params.IDs != nil {
			if len(params.IDs) == 0 {
				return nil
			}
			q = `SELECT id FROM executions WHERE owner = '' AND id IN ` + inList(len(params.IDs)) + ` ORDER BY due_at, id LIMIT ?`
			args = append(int64Args(params.IDs), limit(params.Limit))
		}
		rows, err := tx.QueryContext(ctx, q, args...)
		if err != nil {
			return err
		}
		var ids []int64
		for rows.Next() {
			var id int64
			if err := rows.Scan(&id); err != nil {
				_ = rows.Close()
				return err
			}
			ids = append(ids, id)
		}
		if err := rows.Close(); err != nil {
			return err
		}
		if err := rows.Err(); err != nil {
			return err
		}
		upd, err := tx.PrepareContext(ctx, `UPDATE executions SET owner = ?, lease_until = ? WHERE id = ?`)
		if err != nil {
			return err
		}
		defer upd.Close()
		sel, err := tx.PrepareContext(ctx, `SELECT `+sqlstore.ExecutionColumns+`, `+sqlstore.JobColumns+` FROM executions e
			JOIN jobs j ON j.id = e.job_id JOIN collections c ON c.id = j.collection_id WHERE e.id = ?`)
		if err != nil {
			return err
		}
		defer sel.Close()
		for _, id := range ids {
			if _, err := upd.ExecContext(ctx, params.Owner, nanos(now.Add(params.Lease)), id); err != nil {
				return err
			}
			e := &store.Execution{}
			dest, done := executionDest(e)
			j, err := scanJob(sqlstore.Prefixed{Row: sel.QueryRowContext(ctx, id), Prefix: dest})
			if err != nil {
				return err
			}
			done()
			out = append(out, store.TakenExecution{Execution: e, Job: j})
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("execution take: %w", err)
	}
	return out, nil
}

// ExecutionLeaseRenew renews (or releases) the owner's leases in one transaction and returns the
// IDs that are no longer the owner's.
func (d *Driver) ExecutionLeaseRenew(ctx context.Context, params store.ExecutionLeaseRenewParams) ([]int64, error) {
	now := params.Now
	if now.IsZero() {
		now = time.Now()
	}
	out := []int64{}
	err := d.tx(ctx, func(tx *sql.Tx) error {
		q, first := `UPDATE executions SET lease_until = ? WHERE owner = ? AND id = ?`, any(nanos(now.Add(params.Lease)))
		if params.Release {
			q, first = `UPDATE executions SET lease_until = 0, owner = ? WHERE owner = ? AND id = ?`, ""
		}
		st, err := tx.PrepareContext(ctx, q)
		if err != nil {
			return err
		}
		defer st.Close()
		for _, id := range params.IDs {
			res, err := st.ExecContext(ctx, first, params.Owner, id)
			if err != nil {
				return err
			}
			n, err := res.RowsAffected()
			if err != nil {
				return err
			}
			if n == 0 {
				out = append(out, id)
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("execution lease renew: %w", err)
	}
	return out, nil
}

// ExecutionRescue re-queues the executions whose lease ended, fenced by the term.
func (d *Driver) ExecutionRescue(ctx context.Context, params store.ExecutionRescueParams) (int64, error) {
	now := params.Now
	if now.IsZero() {
		now = time.Now()
	}
	var n int64
	err := d.tx(ctx, func(tx *sql.Tx) error {
		if err := checkTerm(ctx, tx, params.Term); err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, `UPDATE executions SET owner = '', lease_until = 0 WHERE owner != '' AND lease_until < ?`, nanos(now))
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("execution rescue: %w", err)
	}
	return n, nil
}
