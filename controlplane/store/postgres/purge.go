package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store/sqlstore"
)

// HistoryPurge deletes old history (sqlstore.Purger).
func (d *Driver) HistoryPurge(ctx context.Context, params store.HistoryPurgeParams) (int64, error) {
	return d.purger().HistoryPurge(ctx, params)
}

// JobPurgeFinal deletes the jobs final long enough (sqlstore.Purger).
func (d *Driver) JobPurgeFinal(ctx context.Context, params store.JobPurgeFinalParams) (int64, error) {
	return d.purger().JobPurgeFinal(ctx, params)
}

func (d *Driver) purger() sqlstore.Purger {
	return sqlstore.Purger{
		Exec: func(ctx context.Context, q string, args ...any) (int64, error) {
			tag, err := d.pool.Exec(ctx, q, args...)
			return tag.RowsAffected(), err
		},
		JobPurge: d.jobPurgeChunk,
		Int: func(ctx context.Context, q string) (int64, error) {
			var n int64
			err := d.pool.QueryRow(ctx, q).Scan(&n)
			return n, err
		},
		Time: func(t time.Time) any { return t },
	}
}

// jobPurgeChunk deletes a chunk of the jobs final long enough (the arguments of the shared
// statement, q: before, the zero time, chunk), locking the rows of their collections first, in ID
// order, as every write of a job does: the delete locked the jobs and then, in the job count's
// trigger, their collections, and deadlocked with a job's put or a run now (which lock the
// collection and then the job) or a collection's write.
func (d *Driver) jobPurgeChunk(ctx context.Context, _ string, args ...any) (int64, error) {
	var n int64
	err := d.tx(ctx, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, sqlstore.JobPurgeFinalLock, args...)
		if err != nil {
			return fmt.Errorf("lock collections: %w", err)
		}
		ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
		if err != nil {
			return fmt.Errorf("lock collections: %w", err)
		}
		if len(ids) == 0 {
			return nil
		}
		tag, err := tx.Exec(ctx, sqlstore.JobPurgeFinalOf, append(args, ids)...)
		if err != nil {
			return fmt.Errorf("delete: %w", err)
		}
		n = tag.RowsAffected()
		return nil
	})
	return n, err
}
