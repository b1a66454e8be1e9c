package dispatch

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"sync/atomic"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/action"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/clock"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/jobdef"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/jobstate"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"
)

// Scheduler decides when: it holds every schedulable job's next occurrence in an indexed heap,
// claims occurrences as they fall due (up to Lookahead ahead, sized to the free capacity of the
// executor it hands them to), cancels the occurrences claimed ahead that a change of their job
// made obsolete, and purges history. A single process's scheduler (New) hands what it claims to
// its executor in memory; the leader's (NewScheduler) claims executions unowned, fenced by its
// term, for the replicas' executors to take, holds those claimed ahead until due (to cancel them
// while no executor took them), and rescues the executions whose owner's lease ended.
type Scheduler struct {
	cfg   Config
	store store.Driver
	clock clock.Clock
	log   *slog.Logger
	m     *metrics
	to    runner
	ready atomic.Bool
	ran   atomic.Bool
	inbox inbox[schedulerEvent]
	ops   chan op // claims and cancellations, to the writer
	// pendingClaims and pendingCancels count the claims and cancellations sent to the writer
	// and not yet answered.
	pendingClaims  atomic.Int64
	pendingCancels atomic.Int64
	// parked: the loop holds due occurrences it could not claim for want of capacity; the
	// executor's workers wake it when an attempt ends.
	parked  atomic.Int64
	leader  bool
	signals *TestSignals
	quiet   *quietWatch
	// target is the target of an attempt (the executor's, or the leader's own).
	target func(p wire.JobProperties, phase string) string
	// pauses are the jobs paused until a resumeAt (the resumer's).
	pauses *pauses
}

// runner is where a scheduler's claims go: a single process's executor, or the executions the
// leader holds until due for the replicas' executors.
type runner interface {
	// run starts an execution due now; hold keeps one claimed ahead until due (started learns
	// when it starts).
	run(x *store.Execution, job *store.Job, target string)
	hold(x *store.Execution, job *store.Job, target string, started *atomic.Int64)
	// cancelAhead takes out the occurrences of a job claimed ahead that have not started.
	cancelAhead(jobID int64) []*store.Execution
	// aheadJobsOfCollection lists the jobs of a collection with occurrences held ahead.
	aheadJobsOfCollection(collectionID int64) []int64
	// expire starts what is due by now (the leader's: nothing to run, it forgets them); next
	// is when it has something to start ("": its own timer does it).
	expire(now time.Time)
	next() time.Time
	// workerLoad and laneLoad are the attempts queued or under way, in all and for a target;
	// room says whether claims are sized to them at all; decodes whether a claim decodes its
	// job for the attempt.
	workerLoad() int
	laneLoad(target string) int
	room() bool
	decodes() bool
}

// NewScheduler returns the leader's scheduler of cfg.Term among replicas; it does no I/O. It runs
// no attempt: the replicas' executors take what it claims (cfg.OnTakeable wakes them).
func NewScheduler(cfg Config) (*Scheduler, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	m, err := newMetrics(cfg.Registerer, true, false, nil, nil)
	if err != nil {
		return nil, fmt.Errorf("dispatch: metrics: %w", err)
	}
	s := newScheduler(cfg, leaderRunner{held: newHeldSet()}, m)
	s.leader = true
	// The leader runs no attempt: its action executor only tells where storage queues are.
	act := action.New(action.Config{Clock: cfg.Clock, StorageQueueEndpoint: cfg.StorageQueueEndpoint, Logger: cfg.Logger})
	s.target = func(p wire.JobProperties, phase string) string { return targetOf(act, p, phase) }
	return s, nil
}

func newScheduler(cfg Config, to runner, m *metrics) *Scheduler {
	s := &Scheduler{cfg: cfg, store: cfg.Store, clock: cfg.Clock, log: cfg.Logger, m: m, to: to,
		ops: make(chan op, 4*cfg.BatchSize), pauses: newPauses()}
	s.signals = &TestSignals{}
	s.inbox.wake = make(chan struct{}, 1)
	return s
}

// TestSignals returns the scheduler's signals (those of a Dispatcher's are its own): a test
// initialises them before Run (the leader's Skipped and Buffered).
func (s *Scheduler) TestSignals() *TestSignals { return s.signals }

// Ready reports whether the schedule is loaded.
func (s *Scheduler) Ready() bool { return s.ready.Load() }

// JobChanged tells the scheduler a job was created, updated or deleted: it reloads the job.
func (s *Scheduler) JobChanged(jobID int64) {
	s.inbox.post(jobChanged{id: jobID})
}

// JobWritten tells the scheduler a job was created or updated in this process: j is the job as
// written (store.Driver.JobPut's answer, which neither side changes afterwards), taken as it is
// instead of read back unless a later change of the job reached the scheduler first.
func (s *Scheduler) JobWritten(j *store.Job) {
	s.inbox.post(jobChanged{id: j.ID, job: j})
}

// CollectionChanged tells the scheduler a collection's state changed or it was deleted: it
// reloads the collection's jobs.
func (s *Scheduler) CollectionChanged(collectionID int64) {
	s.inbox.post(collectionChanged{id: collectionID})
}

// wakeIfParked wakes the loop when it holds due occurrences for want of capacity (an attempt
// ended).
func (s *Scheduler) wakeIfParked() {
	if s.parked.Load() > 0 {
		s.inbox.poke()
	}
}

// Run loads the schedule and claims occurrences until ctx is done; it may be called once. On
// return the claims it sent are committed (those not handed over run on the next start, or are
// taken by the executors).
func (s *Scheduler) Run(ctx context.Context) error {
	if !s.ran.CompareAndSwap(false, true) {
		return errors.New("dispatch: Run was already called on this scheduler")
	}
	l := newLoop(s)
	if err := l.load(ctx); err != nil {
		return fmt.Errorf("dispatch: load: %w", err)
	}
	s.ready.Store(true)
	defer s.ready.Store(false)
	s.log.Info("scheduler ready", "jobs", len(l.entries))

	// The leader's scheduler commits up to schedulerClaimsInFlight claim batches at once (each
	// its own transaction, on its own connection): its store is a server that commits
	// concurrent transactions together and runs them on several cores.
	depth := 1
	if s.leader {
		depth = schedulerClaimsInFlight
	}
	w := &batchWriter{ops: s.ops, clock: s.clock, batchSize: s.cfg.BatchSize, depth: depth,
		commitClaims: s.commitClaims, commitRecords: s.commitCancels}
	writerDone := make(chan struct{})
	go func() {
		defer close(writerDone)
		w.run(ctx)
	}()
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.purger(ctx)
	}()
	resumed := make(chan struct{})
	go func() {
		defer close(resumed)
		s.resumer(ctx)
	}()
	defer func() { <-resumed }()
	if s.leader {
		rescued := make(chan struct{})
		go func() {
			defer close(rescued)
			s.rescuer(ctx)
		}()
		defer func() { <-rescued }()
	}
	l.run(ctx)
	<-done
	close(s.ops)
	<-writerDone
	s.log.Info("scheduler stopped")
	return nil
}

// cancel has the writer delete an execution whose attempt has not started, with no history
// (before the claims that follow it).
func (s *Scheduler) cancel(ctx context.Context, x *store.Execution) {
	s.log.Info("claimed occurrence cancelled: its job changed", "job_id", x.JobID, "execution_tag", x.Tag,
		"expected_execution_time", x.Scheduled)
	s.signals.Cancelled.Signal(Cancelled{JobID: x.JobID, Tag: x.Tag})
	s.pendingCancels.Add(1)
	select {
	case s.ops <- op{record: cancelRecord(x, "")}:
	case <-ctx.Done():
		s.pendingCancels.Add(-1)
	}
}

func (s *Scheduler) commitClaims(ctx context.Context, batch []*claimOp) {
	params := store.ExecutionClaimManyParams{Claims: make([]store.ExecutionClaim, len(batch)), Now: s.clock.Now(), Term: s.cfg.Term}
	for i, c := range batch {
		params.Claims[i] = c.claim
	}
	res, err := s.store.ExecutionClaimMany(ctx, params)
	if err != nil {
		s.log.Error("committing claims: they will be tried again", "claims", len(batch), "error", err.Error())
	}
	if errors.Is(err, store.ErrStaleTerm) && s.cfg.OnStaleTerm != nil {
		s.cfg.OnStaleTerm()
	}
	if err == nil && s.cfg.OnTakeable != nil {
		for _, r := range res {
			if r.Err == nil {
				s.cfg.OnTakeable() // the executors take them
				break
			}
		}
	}
	s.inbox.post(claimsCommitted{claims: batch, results: res, err: err})
}

// commitCancels commits one batch of cancellations and returns those to try again.
func (s *Scheduler) commitCancels(ctx context.Context, batch []*recordOp) []*recordOp {
	retry, _, err := commitRecordBatch(ctx, s.store, s.clock, batch, func(r *recordOp, err error) {
		s.pendingCancels.Add(-1)
		s.log.Error("giving up cancelling an execution: it runs when due", "job_id", r.rec.JobID,
			"execution_tag", r.exec.Tag, "error", err.Error())
	})
	if err != nil {
		s.log.Error("committing cancellations", "cancellations", len(batch), "retrying", len(retry), "error", err.Error())
		return retry
	}
	s.pendingCancels.Add(-int64(len(batch)))
	s.inbox.poke()
	return nil
}

// rescuer (the leader's) re-queues, every Poll, the executions whose owner's lease ended.
func (s *Scheduler) rescuer(ctx context.Context) {
	clock.Every(ctx, s.clock, s.cfg.Poll, nil, s.rescue)
}

// rescue re-queues the executions whose owner's lease ended.
func (s *Scheduler) rescue(ctx context.Context) {
	n, err := s.store.ExecutionRescue(ctx, store.ExecutionRescueParams{Now: s.clock.Now(), Term: s.cfg.Term})
	switch {
	case errors.Is(err, store.ErrStaleTerm):
		if s.cfg.OnStaleTerm != nil {
			s.cfg.OnStaleTerm()
		}
		return
	case err != nil:
		if ctx.Err() == nil {
			s.log.Error("rescuing executions", "error", err.Error())
		}
		return
	case n == 0:
		return
	}
	s.m.rescued.Add(float64(n))
	s.log.Warn("rescued executions whose owner's lease ran out: they run again, with their execution tags", "executions", n)
	if s.cfg.OnTakeable != nil {
		s.cfg.OnTakeable()
	}
}

// leaderRunner is where the leader's claims go: the replicas' executors take them from the
// store; those claimed ahead are held until due, so that a change of their job cancels them.
type leaderRunner struct{ held *heldSet }

func (r leaderRunner) run(*store.Execution, *store.Job, string) {}
func (r leaderRunner) hold(x *store.Execution, job *store.Job, target string, started *atomic.Int64) {
	r.held.push(x, job, target, true, false, started)
}
func (r leaderRunner) cancelAhead(jobID int64) []*store.Execution {
	return executions(r.held.cancelAhead(jobID))
}
func (r leaderRunner) aheadJobsOfCollection(id int64) []int64 {
	return r.held.aheadJobsOfCollection(id)
}
func (r leaderRunner) expire(now time.Time) { r.held.due(now) }
func (r leaderRunner) next() time.Time      { return r.held.next() }
func (r leaderRunner) workerLoad() int      { return 0 }
func (r leaderRunner) laneLoad(string) int  { return 0 }

// room: the executors size what they take to their workers; the leader claims what falls due
// (a target's claims in the writer bounded as for a single process).
func (r leaderRunner) room() bool { return false }

// decodes: the leader runs no attempt (an executor takes the execution and loads its job): it
// keeps only the job's collection, which its cancellations need, and decodes nothing in a burst
// of claims.
func (r leaderRunner) decodes() bool { return false }

// executorRunner is where a single process's claims go: its executor, in memory.
type executorRunner struct{ ex *Executor }

func (r executorRunner) run(x *store.Execution, job *store.Job, target string) {
	r.ex.run(x, job, target)
}
func (r executorRunner) hold(x *store.Execution, job *store.Job, target string, started *atomic.Int64) {
	r.ex.hold(x, job, target, started)
}
func (r executorRunner) cancelAhead(jobID int64) []*store.Execution {
	return executions(r.ex.held.cancelAhead(jobID))
}
func (r executorRunner) aheadJobsOfCollection(id int64) []int64 {
	return r.ex.held.aheadJobsOfCollection(id)
}
func (r executorRunner) expire(time.Time)           {}
func (r executorRunner) next() time.Time            { return time.Time{} }
func (r executorRunner) workerLoad() int            { return r.ex.tasks.workerLoad() }
func (r executorRunner) laneLoad(target string) int { return r.ex.tasks.laneLoad(target) }
func (r executorRunner) room() bool                 { return true }
func (r executorRunner) decodes() bool              { return true }

func executions(hs []*held) []*store.Execution {
	out := make([]*store.Execution, len(hs))
	for i, h := range hs {
		out[i] = h.exec
	}
	return out
}

// capacityUnbounded is the room of a scheduler whose runner does not size its claims.
const capacityUnbounded = math.MaxInt32

// misfire is a job's misfire rule: its own policy and threshold, else RunOnce and the daemon's
// threshold.
func (s *Scheduler) misfire(p *wire.JobProperties) jobstate.Misfire {
	return jobdef.MisfireOf(p, s.cfg.MisfireThreshold)
}
