package dispatch

import (
	"context"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
)

// purger deletes history older than Retention or beyond the last HistoryKeep executions of each
// job, and jobs Completed or Faulted more than Retention ago: once at start, then every
// PurgeInterval.
func (d *Dispatcher) purger(ctx context.Context) {
	for {
		d.purge(ctx)
		t := d.clock.NewTimer(d.cfg.PurgeInterval)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C():
		}
	}
}

func (d *Dispatcher) purge(ctx context.Context) {
	before := d.clock.Now().Add(-d.cfg.Retention)
	h, err := d.store.HistoryPurge(ctx, store.HistoryPurgeParams{Before: before, KeepPerJob: d.cfg.HistoryKeep})
	if err != nil {
		if ctx.Err() == nil {
			d.log.Error("purging history", "error", err.Error())
		}
		return
	}
	j, err := d.store.JobPurgeFinal(ctx, store.JobPurgeFinalParams{Before: before})
	if err != nil {
		if ctx.Err() == nil {
			d.log.Error("purging final jobs", "error", err.Error())
		}
		return
	}
	if d.cfg.OnPurge != nil {
		d.cfg.OnPurge(h, j)
	}
	if h > 0 || j > 0 {
		d.log.Info("purged", "history_entries", h, "jobs", j)
	}
}
