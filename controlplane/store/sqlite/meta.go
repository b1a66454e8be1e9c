package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store/sqlstore"
)

// MetaGet returns a setting or store.ErrNotFound.
func (d *Driver) MetaGet(ctx context.Context, params store.MetaGetParams) (string, error) {
	var v string
	err := d.w.QueryRowContext(ctx, sqlstore.MetaGet, params.Name).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return "", fmt.Errorf("meta %s: %w", params.Name, store.ErrNotFound)
	}
	if err != nil {
		return "", fmt.Errorf("meta %s: %w", params.Name, err)
	}
	return v, nil
}

// MetaPut writes a setting in its own transaction.
func (d *Driver) MetaPut(ctx context.Context, params store.MetaPutParams) error {
	q := sqlstore.MetaPut
	if params.IfAbsent {
		q = sqlstore.MetaPutIfAbsent
	}
	err := d.tx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, q, params.Name, params.Value)
		return err
	})
	if err != nil {
		return fmt.Errorf("meta %s: %w", params.Name, err)
	}
	return nil
}

// JobListAll pages through every job ordered by ID.
func (d *Driver) JobListAll(ctx context.Context, params store.JobListAllParams) ([]*store.Job, error) {
	rows, err := d.r.QueryContext(ctx, sqlstore.JobListAll,
		params.AfterID, limit(params.Limit), params.Containing)
	if err != nil {
		return nil, fmt.Errorf("job list all: %w", err)
	}
	jobs, err := scanJobs(rows)
	if err != nil {
		return nil, fmt.Errorf("job list all: %w", err)
	}
	return jobs, nil
}

// JobListPaused pages through the Disabled jobs that may have a resumeAt.
func (d *Driver) JobListPaused(ctx context.Context, params store.JobListPausedParams) ([]*store.Job, error) {
	rows, err := d.r.QueryContext(ctx, sqlstore.JobListPaused, params.AfterID, limit(params.Limit))
	if err != nil {
		return nil, fmt.Errorf("job list paused: %w", err)
	}
	jobs, err := scanJobs(rows)
	if err != nil {
		return nil, fmt.Errorf("job list paused: %w", err)
	}
	return jobs, nil
}
