package dispatch

import (
	"context"
	"errors"
	"sync"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
)

// ownedSet is the executions an executor owns: taken and not finished (held until due, queued,
// under way, or waiting for a retry).
type ownedSet struct {
	mu  sync.Mutex
	ids map[int64]struct{}
}

func (s *ownedSet) add(ids ...int64) {
	s.mu.Lock()
	for _, id := range ids {
		s.ids[id] = struct{}{}
	}
	s.mu.Unlock()
}

// remove forgets ids and returns those it held.
func (s *ownedSet) remove(ids ...int64) []int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []int64
	for _, id := range ids {
		if _, ok := s.ids[id]; ok {
			delete(s.ids, id)
			out = append(out, id)
		}
	}
	return out
}

func (s *ownedSet) list() []int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]int64, 0, len(s.ids))
	for id := range s.ids {
		out = append(out, id)
	}
	return out
}

func (s *ownedSet) len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.ids)
}

// room is how many executions the executor may take now: its free workers, less those it took
// and has not started (as river's producer fetches at most its free workers). What it owns in all
// is bounded too (4 × Workers), so that a target that hangs (its attempts wait for the per-target
// limit without holding a worker) does not make it take without end.
func (d *Dispatcher) room() int {
	free := d.cfg.Workers - d.tasks.workerLoad() - int(d.waiting.Load())
	return min(free, 4*d.cfg.Workers-d.owned.len())
}

// take takes executions for this executor (p's Owner, Lease and Now are filled in) and hands
// them to the loop.
func (d *Dispatcher) take(ctx context.Context, p store.ExecutionTakeParams) ([]store.TakenExecution, error) {
	p.Owner, p.Lease, p.Now = d.cfg.Owner, d.cfg.Lease, d.clock.Now()
	taken, err := d.store.ExecutionTake(ctx, p)
	if err != nil || len(taken) == 0 {
		return taken, err
	}
	ids := make([]int64, len(taken))
	for i, x := range taken {
		ids[i] = x.Execution.ID
	}
	d.owned.add(ids...)
	d.waiting.Add(int64(len(taken)))
	d.m.taken.Add(float64(len(taken)))
	d.inbox.post(event{kind: evTaken, taken: taken})
	return taken, nil
}

// taker takes executions when woken (the leader claimed or rescued some, a worker freed up after
// a take was cut short) and every Poll, until ctx is done.
func (d *Dispatcher) taker(ctx context.Context) {
	for {
		d.takeAll(ctx)
		t := d.clock.NewTimer(d.cfg.Poll)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C():
		case <-d.takeWake:
			t.Stop()
		}
	}
}

// takeAll takes batches while there is room and the store has executions due before the next
// poll (plus Lookahead: they are held until due).
func (d *Dispatcher) takeAll(ctx context.Context) {
	for ctx.Err() == nil {
		// Starved first, then the room: a worker freed in between wakes the taker again.
		d.starved.Store(true)
		room := d.room()
		if room <= 0 {
			return
		}
		d.starved.Store(false)
		n := min(room, d.cfg.BatchSize)
		horizon := d.clock.Now().Add(max(d.cfg.Lookahead, 0) + d.cfg.Poll)
		taken, err := d.take(ctx, store.ExecutionTakeParams{Limit: n, DueBefore: horizon})
		if err != nil {
			if ctx.Err() == nil {
				d.log.Error("taking executions", "error", err.Error())
			}
			return
		}
		if len(taken) < n {
			return
		}
	}
}

// renewer renews the leases of the executions this executor owns, in one batch every Lease/3;
// the ones it no longer owns (rescued after a lease ran out: they run elsewhere) are dropped.
func (d *Dispatcher) renewer(ctx context.Context) {
	for {
		t := d.clock.NewTimer(d.cfg.Lease / 3)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C():
		}
		ids := d.owned.list()
		if len(ids) == 0 {
			continue
		}
		lost, err := d.store.ExecutionLeaseRenew(ctx, store.ExecutionLeaseRenewParams{Owner: d.cfg.Owner, IDs: ids, Lease: d.cfg.Lease,
			Now: d.clock.Now()})
		if err != nil {
			if ctx.Err() == nil {
				d.log.Error("renewing execution leases", "executions", len(ids), "error", err.Error())
			}
			continue
		}
		if lost = d.owned.remove(lost...); len(lost) > 0 {
			d.log.Warn("executions no longer this replica's (their lease ran out and they were rescued): not run or recorded here",
				"executions", len(lost))
			d.inbox.post(event{kind: evLost, ids: lost})
		}
	}
}

// release gives up what the executor still owns when it stops (held, queued, cut short), so that
// other replicas take it at once instead of after the lease.
func (d *Dispatcher) release(ctx context.Context) {
	ids := d.owned.list()
	if len(ids) == 0 {
		return
	}
	if _, err := d.store.ExecutionLeaseRenew(ctx, store.ExecutionLeaseRenewParams{Owner: d.cfg.Owner, IDs: ids, Release: true,
		Now: d.clock.Now()}); err != nil {
		d.log.Warn("releasing executions on shutdown: they are rescued once their lease ends", "executions", len(ids), "error", err.Error())
		return
	}
	d.log.Info("released the executions not finished: other replicas take them", "executions", len(ids))
}

// rescuer (the leader's) re-queues, every Poll, the executions whose owner's lease ended.
func (d *Dispatcher) rescuer(ctx context.Context) {
	for {
		t := d.clock.NewTimer(d.cfg.Poll)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C():
		}
		n, err := d.store.ExecutionRescue(ctx, store.ExecutionRescueParams{Now: d.clock.Now(), Term: d.cfg.Term})
		switch {
		case errors.Is(err, store.ErrStaleTerm):
			if d.cfg.OnStaleTerm != nil {
				d.cfg.OnStaleTerm()
			}
			continue
		case err != nil:
			if ctx.Err() == nil {
				d.log.Error("rescuing executions", "error", err.Error())
			}
			continue
		case n == 0:
			continue
		}
		d.m.rescued.Add(float64(n))
		d.log.Warn("rescued executions whose owner's lease ran out: they run again, with their execution tags", "executions", n)
		if d.cfg.OnTakeable != nil {
			d.cfg.OnTakeable()
		}
	}
}
