package postgres

import (
	"context"
	"time"

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
// statement, q: before, the zero time, chunk) with sqlstore.JobPurgeFinalLocked, which locks the
// rows of their collections first, in ID order, as every write of a job does: the shared
// statement's delete locked the jobs and then, in the job count's trigger, their collections, and
// deadlocked with a job's put or a run now (which lock the collection and then the job).
func (d *Driver) jobPurgeChunk(ctx context.Context, _ string, args ...any) (int64, error) {
	tag, err := d.pool.Exec(ctx, sqlstore.JobPurgeFinalLocked, args...)
	return tag.RowsAffected(), err
}
