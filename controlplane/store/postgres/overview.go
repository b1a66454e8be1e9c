package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store/sqlstore"
)

// JobStateCount counts jobs by collection and state.
func (d *Driver) JobStateCount(ctx context.Context, params store.JobStateCountParams) ([]store.JobStateCount, error) {
	q, args := sqlstore.JobStateCount, []any{}
	if params.Subscription != "" {
		q, args = sqlstore.JobStateCountOfSubscription, []any{key(params.Subscription)}
	}
	rows, err := d.pool.Query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("job state count: %w", err)
	}
	defer rows.Close()
	out := []store.JobStateCount{}
	for rows.Next() {
		var c store.JobStateCount
		if err := rows.Scan(&c.CollectionID, &c.State, &c.N); err != nil {
			return nil, fmt.Errorf("job state count: %w", err)
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("job state count: %w", err)
	}
	return out, nil
}

// JobListNext lists the schedulable jobs, soonest next execution first.
func (d *Driver) JobListNext(ctx context.Context, params store.JobListNextParams) ([]*store.Job, error) {
	q := `SELECT ` + sqlstore.JobColumns + sqlstore.JobFrom + ` WHERE ` + schedulableSQL
	var args []any
	if params.Subscription != "" {
		q += ` AND c.sub_key = $1`
		args = append(args, key(params.Subscription))
	}
	rows, err := d.pool.Query(ctx, q+fmt.Sprintf(` ORDER BY j.next_execution_time, j.id LIMIT $%d`, len(args)+1), append(args, limit(params.Limit))...)
	if err != nil {
		return nil, fmt.Errorf("job list next: %w", err)
	}
	jobs, err := scanJobs(rows)
	if err != nil {
		return nil, fmt.Errorf("job list next: %w", err)
	}
	return jobs, nil
}

// HistoryFailed lists the main action's failed attempts, newest first.
func (d *Driver) HistoryFailed(ctx context.Context, params store.HistoryFailedParams) ([]store.FailedAttempt, error) {
	q, args := sqlstore.HistoryFailed, []any{params.Since, limit(params.Scan), limit(params.Limit)}
	if params.Subscription != "" {
		q, args = sqlstore.HistoryFailedOfSubscription, append(args, key(params.Subscription))
	}
	rows, err := d.pool.Query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("history failed: %w", err)
	}
	defer rows.Close()
	out := []store.FailedAttempt{}
	for rows.Next() {
		var (
			f                    store.FailedAttempt
			h                    = &f.Entry
			expected, start, end *time.Time
		)
		err := rows.Scan(&h.ID, &h.JobID, &h.ExecutionID, &h.ExecutionTag, &h.ActionName, &h.Status, &h.Message,
			&h.RetryCount, &h.RepeatCount, &expected, &start, &end,
			&f.Job.Subscription, &f.Job.ResourceGroup, &f.Job.CollectionKey.Name, &f.Job.Name)
		if err != nil {
			return nil, fmt.Errorf("history failed: %w", err)
		}
		h.ExpectedExecutionTime, h.StartTime, h.EndTime = fromTS(expected), fromTS(start), fromTS(end)
		out = append(out, f)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("history failed: %w", err)
	}
	return out, nil
}
