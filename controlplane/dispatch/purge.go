package dispatch

import (
	"context"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/clock"
)

// purger deletes history older than Retention or beyond the last HistoryKeep executions of each
// job, and jobs Completed or Faulted more than Retention ago: once at start, then every
// PurgeInterval.
func (s *Scheduler) purger(ctx context.Context) {
	s.purge(ctx)
	clock.Every(ctx, s.clock, s.cfg.PurgeInterval, nil, s.purge)
}

func (s *Scheduler) purge(ctx context.Context) {
	start := s.clock.Now()
	before := start.Add(-s.cfg.Retention)
	h, err := s.store.HistoryPurge(ctx, store.HistoryPurgeParams{Before: before, KeepPerJob: s.cfg.HistoryKeep})
	if err != nil {
		if ctx.Err() == nil {
			s.log.Error("purging history", "error", err.Error())
		}
		return
	}
	j, err := s.store.JobPurgeFinal(ctx, store.JobPurgeFinalParams{Before: before})
	if err != nil {
		if ctx.Err() == nil {
			s.log.Error("purging final jobs", "error", err.Error())
		}
		return
	}
	if s.cfg.OnPurge != nil {
		s.cfg.OnPurge(h, j)
	}
	if h > 0 || j > 0 {
		s.log.Info("purged", "history_entries", h, "jobs", j, "took", s.clock.Now().Sub(start).String())
	}
}
