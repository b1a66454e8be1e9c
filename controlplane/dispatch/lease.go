package dispatch

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/clock"
)

// ownedSet is the executions an executor owns: taken and not finished (held until due, queued,
// under way, or waiting for a retry), each with the end of the lease this executor last set.
type ownedSet struct {
	mu  sync.Mutex
	ids map[int64]time.Time // id -> lease until
}

// add records ids as owned under a lease until until.
func (s *ownedSet) add(until time.Time, ids ...int64) {
	s.mu.Lock()
	for _, id := range ids {
		s.ids[id] = until
	}
	s.mu.Unlock()
}

// renewed moves the lease of those of ids still owned to until.
func (s *ownedSet) renewed(until time.Time, ids []int64) {
	s.mu.Lock()
	for _, id := range ids {
		if _, ok := s.ids[id]; ok {
			s.ids[id] = until
		}
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

// list returns every id owned.
func (s *ownedSet) list() []int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]int64, 0, len(s.ids))
	for id := range s.ids {
		out = append(out, id)
	}
	return out
}

// ending returns the ids whose lease ends by by, and whether anything is owned at all.
func (s *ownedSet) ending(by time.Time) (ids []int64, owns bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for id, until := range s.ids {
		if !until.After(by) {
			ids = append(ids, id)
		}
	}
	return ids, len(s.ids) > 0
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
func (ex *Executor) room() int {
	free := ex.cfg.Workers - ex.tasks.workerLoad() - int(ex.waiting.Load())
	return min(free, 4*ex.cfg.Workers-ex.owned.len())
}

// ownedNearBound reports whether what a replica's executor owns is within a batch of its bound
// (4 × Workers, room): the executions whose records wait are among them.
func (ex *Executor) ownedNearBound() bool {
	return ex.replica() && ex.owned.len() >= 4*ex.cfg.Workers-ex.cfg.BatchSize
}

// recordsMayWait is the record writer's busy: records wait while attempts wait to start or are
// under way, unless they are what keeps a replica's executor from taking more (ownedNearBound:
// a burst larger than the bound would otherwise stop at it until maxRecordWait).
func (ex *Executor) recordsMayWait() bool {
	return ex.tasks.busy() && !ex.ownedNearBound()
}

// recordsMayPile is the record writer's starting: attempts wait to start, for a worker or for
// their target's turn (a burst to one target waits for its lane's limit), and the records held
// back are not what keeps a replica's executor from taking more.
func (ex *Executor) recordsMayPile() bool {
	return ex.tasks.len() > 0 && !ex.ownedNearBound()
}

// take takes executions for this executor (p's Owner, Lease and Now are filled in) and hands
// them to its loop.
func (ex *Executor) take(ctx context.Context, p store.ExecutionTakeParams) ([]store.TakenExecution, error) {
	p.Owner, p.Lease, p.Now = ex.cfg.Owner, ex.cfg.Lease, ex.clock.Now()
	taken, err := ex.store.ExecutionTake(ctx, p)
	if err != nil || len(taken) == 0 {
		return taken, err
	}
	ids := make([]int64, len(taken))
	for i, x := range taken {
		ids[i] = x.Execution.ID
	}
	ex.owned.add(p.Now.Add(p.Lease), ids...)
	ex.waiting.Add(int64(len(taken)))
	ex.m.taken.Add(float64(len(taken)))
	ex.inbox.post(executionsTaken{executions: taken})
	return taken, nil
}

// taker takes executions when woken (the leader claimed or rescued some, a worker freed up after
// a take was cut short) and every Poll, until ctx is done.
func (ex *Executor) taker(ctx context.Context) {
	ex.takeAll(ctx)
	clock.Every(ctx, ex.clock, ex.cfg.Poll, ex.takeWake, ex.takeAll)
}

// takeAll takes batches while there is room and the store has executions due before the next
// poll (plus Lookahead: they are held until due).
func (ex *Executor) takeAll(ctx context.Context) {
	for ctx.Err() == nil {
		// Starved first, then the room: a worker freed in between wakes the taker again.
		ex.starved.Store(true)
		room := ex.room()
		if room <= 0 {
			return
		}
		ex.starved.Store(false)
		n := min(room, ex.cfg.BatchSize)
		horizon := ex.clock.Now().Add(max(ex.cfg.Lookahead, 0) + ex.cfg.Poll)
		taken, err := ex.take(ctx, store.ExecutionTakeParams{Limit: n, DueBefore: horizon})
		if err != nil {
			if ctx.Err() == nil {
				ex.log.Error("taking executions", "error", err.Error())
			}
			return
		}
		if len(taken) < n {
			return
		}
	}
}

// renewer renews the leases of the executions this executor owns that come near their end, in
// one batch every Lease/6; the ones it no longer owns (rescued after a lease ran out: they run
// elsewhere) are dropped.
func (ex *Executor) renewer(ctx context.Context) {
	clock.Every(ctx, ex.clock, ex.cfg.Lease/renewTicks, nil, ex.renew)
}

// A lease is renewed by the first renewal tick (every Lease/renewTicks) that finds it ending
// within renewWithin × Lease: at least Lease/2 before it ends (2/3 - 1/6), which is the margin
// left for a tick that comes late and for the renewal's own round trip. An execution that
// finishes within Lease/3 of being taken (most: they are taken at most Lookahead + Poll ahead)
// is never renewed; renewing everything owned at every tick wrote every execution held across
// a tick once more.
const (
	renewTicks  = 6
	renewWithin = 2.0 / 3
)

// renew renews, in one batch, the leases of the executions this executor owns that end within
// renewWithin × Lease.
func (ex *Executor) renew(ctx context.Context) {
	now := ex.clock.Now()
	ids, owns := ex.owned.ending(now.Add(time.Duration(renewWithin * float64(ex.cfg.Lease))))
	if len(ids) == 0 {
		if owns {
			ex.TestSignals.Renewed.Signal([]int64{})
		}
		return
	}
	slices.Sort(ids)
	lost, err := ex.store.ExecutionLeaseRenew(ctx, store.ExecutionLeaseRenewParams{Owner: ex.cfg.Owner, IDs: ids, Lease: ex.cfg.Lease,
		Now: now})
	if err != nil {
		if ctx.Err() == nil {
			ex.log.Error("renewing execution leases", "executions", len(ids), "error", err.Error())
		}
		return
	}
	ex.owned.renewed(now.Add(ex.cfg.Lease), ids)
	if lost = ex.owned.remove(lost...); len(lost) > 0 {
		ex.log.Warn("executions no longer this replica's (their lease ran out and they were rescued): not run or recorded here",
			"executions", len(lost))
		ex.inbox.post(executionsLost{ids: lost})
	}
	if ex.TestSignals.Renewed.Enabled() {
		gone := map[int64]bool{}
		for _, id := range lost {
			gone[id] = true
		}
		renewed := []int64{}
		for _, id := range ids {
			if !gone[id] {
				renewed = append(renewed, id)
			}
		}
		ex.TestSignals.Renewed.Signal(renewed)
	}
}

// release gives up what the executor still owns when it stops (held, queued, cut short), so that
// other replicas take it at once instead of after the lease.
func (ex *Executor) release(ctx context.Context) {
	ids := ex.owned.list()
	if len(ids) == 0 {
		return
	}
	if _, err := ex.store.ExecutionLeaseRenew(ctx, store.ExecutionLeaseRenewParams{Owner: ex.cfg.Owner, IDs: ids, Release: true,
		Now: ex.clock.Now()}); err != nil {
		ex.log.Warn("releasing executions on shutdown: they are rescued once their lease ends", "executions", len(ids), "error", err.Error())
		return
	}
	ex.log.Info("released the executions not finished: other replicas take them", "executions", len(ids))
	ex.TestSignals.Released.Signal(ids)
}
