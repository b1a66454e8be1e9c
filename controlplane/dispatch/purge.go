package dispatch

import (
	"context"
	"time"

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
	p := &pacer{clock: s.clock, last: start}
	h, err := s.store.HistoryPurge(ctx, store.HistoryPurgeParams{Before: before, KeepPerJob: s.cfg.HistoryKeep, Pause: p.pause})
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

// pacer keeps a purge to half the store's writer: after each of its statements it waits as long
// as the statement took (from the end of the previous wait, so a statement that queued behind the
// fires' writes waits longer). At the retention bound every fire pushes an entry out; the hourly
// purge that deletes them (3.6 million with 60,000 jobs firing every minute) took the writer
// statement after statement, and the fires' claims and records waited behind it for minutes.
type pacer struct {
	clock clock.Clock
	last  time.Time
}

func (p *pacer) pause(ctx context.Context) error {
	took := p.clock.Now().Sub(p.last)
	if took > 0 {
		t := p.clock.NewTimer(took)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C():
		}
	}
	p.last = p.clock.Now()
	return nil
}
