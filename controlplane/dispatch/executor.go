package dispatch

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/action"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/secret"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/clock"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/testsignal"
)

// Executor runs executions: it holds each until due, runs its attempts in lanes per target on a
// bounded pool of workers, and records them in batches. A single process's executor gets its
// executions from the scheduler in memory (and, when it starts, every unfinished one from the
// store); a replica's (Config.Owner set) takes them from the store under leases, sized to its
// free workers, renews the leases and releases what it still owns when it stops. Create it with
// NewExecutor (a replica's) or New (a single process's), start it with Run.
type Executor struct {
	cfg   Config
	store store.Driver
	clock clock.Clock
	box   *secret.Box
	log   *slog.Logger
	act   *action.Executor
	m     *metrics
	ready atomic.Bool
	ran   atomic.Bool
	// loaded is closed once the unfinished executions are loaded (a single process's scheduler
	// claims only then: an execution it claimed would be loaded and run a second time).
	loaded chan struct{}
	tasks  *taskQueue
	held   *heldSet
	inbox  inbox[executorEvent]
	// records goes to the record writer; pendingRecords counts the records sent and not yet
	// answered.
	records        chan op
	pendingRecords atomic.Int64
	// manual holds the execution tag of each job's manual run in flight.
	manualMu sync.Mutex
	manual   map[int64]string
	// backfills holds a single process's backfill executions waiting for the previous one.
	backfills backfillQueue
	// A replica's: owned holds the executions this executor owns (taken, not finished); waiting
	// counts those taken and not started yet; takeWake wakes the taker, starved says the last
	// take was cut short by capacity (a freed worker wakes it).
	owned    ownedSet
	waiting  atomic.Int64
	takeWake chan struct{}
	starved  atomic.Bool
	hooks    executorHooks
	// gc collects garbage before a burst held ahead rather than in it (see gcPacer).
	gc *gcPacer

	// TestSignals are a replica's executor's decision points, for tests (inert unless
	// initialised).
	TestSignals ExecutorTestSignals
}

// ExecutorTestSignals are the signals a replica's executor sends to tests that initialise them
// (Init) before Run. Each carries the IDs of the executions concerned.
type ExecutorTestSignals struct {
	// Taken is sent when the executor took executions (they are its own, under lease).
	Taken testsignal.Signal[[]int64]
	// Renewed is sent at each renewal tick while the executor owns executions, with those whose
	// leases it renewed (the ones ending soon that it still owns; the others are Lost); empty
	// when none was ending.
	Renewed testsignal.Signal[[]int64]
	// Lost is sent when the executor dropped executions that are no longer its own (rescued
	// after their lease ran out): it does not run them.
	Lost testsignal.Signal[[]int64]
	// Released is sent when the executor, stopping, released what it still owned.
	Released testsignal.Signal[[]int64]
}

// Init enables every signal.
func (s *ExecutorTestSignals) Init() {
	s.Taken.Init()
	s.Renewed.Init()
	s.Lost.Init()
	s.Released.Init()
}

// executorHooks tie a single process's executor to its scheduler.
type executorHooks struct {
	// backlog is the scheduler's part of scheduler_due_backlog.
	backlog func() int64
	// freed is called when an attempt ends (the scheduler waits for capacity).
	freed func()
	// recorded receives each batch of committed records, after the executor took its retries.
	recorded func([]*recordOp, []store.AttemptRecordResult)
	// manualClaimed says a manual run claimed a job (its new version and count).
	manualClaimed func(jobID, prev, version int64, count int)
	// awaitsLoad says a run now or a backfill of the job waits for the load (awaitLoaded).
	awaitsLoad func(jobID int64)
	// quiet is the test signals' watch (nil: not under test).
	quiet *quietWatch
}

// NewExecutor returns a replica's executor (cfg.Owner names the replica); it does no I/O.
func NewExecutor(cfg Config) (*Executor, error) {
	if cfg.Owner == "" {
		return nil, errors.New("dispatch: an executor among replicas needs an Owner")
	}
	return newExecutor(cfg, executorHooks{})
}

func newExecutor(cfg Config, hooks executorHooks) (*Executor, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	ex := &Executor{
		cfg:   cfg,
		store: cfg.Store,
		clock: cfg.Clock,
		box:   cfg.Secrets,
		log:   cfg.Logger,
		act: action.New(action.Config{
			Clock: cfg.Clock, Transport: cfg.Transport, RootCAs: cfg.RootCAs, Timeout: cfg.AttemptTimeout,
			OAuthAuthority: cfg.OAuthAuthority, StorageQueueEndpoint: cfg.StorageQueueEndpoint, ServiceBus: cfg.ServiceBus,
			Logger: cfg.Logger, Tracer: cfg.Tracer,
		}),
		tasks:    newTaskQueue(cfg.TargetConcurrency),
		held:     newHeldSet(),
		manual:   map[int64]string{},
		records:  make(chan op, 4*cfg.BatchSize),
		owned:    ownedSet{ids: map[int64]time.Time{}},
		takeWake: make(chan struct{}, 1),
		hooks:    hooks,
		loaded:   make(chan struct{}),
		gc:       newGCPacer(),
	}
	ex.inbox.wake = make(chan struct{}, 1)
	ex.gc.done = ex.inbox.poke
	ex.tasks.freed = func(idle bool) {
		if ex.hooks.freed != nil {
			ex.hooks.freed()
		}
		if ex.starved.Load() { // the taker waits for capacity
			ex.Wake()
		}
		if idle {
			// The loop sees the executor idle (its records may have come before the last
			// attempt ended): the garbage pacer measures the burst and looks before the next.
			ex.inbox.poke()
		}
	}
	backlog := func() float64 {
		n := int64(ex.tasks.len())
		if ex.hooks.backlog != nil {
			n += ex.hooks.backlog()
		}
		return float64(n)
	}
	m, err := newExecutorMetrics(cfg.Registerer, cfg.Owner != "", backlog, func() float64 { return float64(ex.tasks.runningNow()) })
	if err != nil {
		return nil, fmt.Errorf("dispatch: metrics: %w", err)
	}
	ex.m = m
	return ex, nil
}

// replica reports whether the executor takes its executions from the store (Owner set).
func (ex *Executor) replica() bool { return ex.cfg.Owner != "" }

// Ready reports whether the executor runs (a single process's: its unfinished executions are
// loaded).
func (ex *Executor) Ready() bool { return ex.ready.Load() }

// Wake tells a replica's executor that executions wait to be taken (claimed or rescued by the
// leader).
func (ex *Executor) Wake() {
	select {
	case ex.takeWake <- struct{}{}:
	default:
	}
}

// JobChanged tells a replica's executor that a job changed: the occurrences of it that it took
// ahead and has not started are cancelled (a single process's scheduler does this itself).
func (ex *Executor) JobChanged(jobID int64) {
	ex.inbox.post(jobChanged{id: jobID})
}

// CollectionChanged tells a replica's executor that a collection changed: the occurrences it
// took ahead of jobs that can no longer fire are cancelled.
func (ex *Executor) CollectionChanged(collectionID int64) {
	ex.inbox.post(collectionChanged{id: collectionID})
}

// run hands an execution due now to the workers (a single process's scheduler), after the
// executions held that are due by then.
func (ex *Executor) run(x *store.Execution, job *store.Job, target string) {
	ex.held.start(ex.clock.Now(), ex.startHeld, func() { ex.tasks.push(task{exec: *x, job: job, target: target}) })
}

// startHeld hands an execution held until due to the workers.
func (ex *Executor) startHeld(it *held) {
	if it.taken {
		ex.waiting.Add(-1)
	}
	ex.tasks.push(task{exec: *it.exec, job: it.job, target: it.target})
}

// hold keeps an occurrence claimed ahead until due (a single process's scheduler).
func (ex *Executor) hold(x *store.Execution, job *store.Job, target string, started *atomic.Int64) {
	ex.held.push(x, job, target, true, false, started)
	ex.inbox.poke()
}

// RunNow runs one execution of the job now, whatever its schedule ("run now"), j as the caller
// read it (its definition is what the attempt runs; the job is not read again). The execution is
// claimed durably before RunNow returns; it counts as an execution of the job. It returns
// store.ErrNotFound (wrapped) when the job does not exist (any more), and a
// *store.RunRefusedError when the store, claiming it, finds that the job may not run on request
// (its collection disabled since the caller read it). A replica's executor claims it
// unowned and takes it at once: it runs here (another replica's taker may take it first: it
// then runs there, and the one-run-in-flight rule does not follow it).
func (ex *Executor) RunNow(ctx context.Context, j *store.Job) error {
	jobID := j.ID
	if err := ex.awaitLoaded(ctx, jobID); err != nil {
		return fmt.Errorf("run now: %w", err)
	}
	tag := uuid.NewString()
	ex.manualMu.Lock()
	if inFlight, ok := ex.manual[jobID]; ok {
		ex.manualMu.Unlock()
		return fmt.Errorf("run now: %w", &store.RunInFlightError{Tag: inFlight})
	}
	ex.manual[jobID] = tag
	ex.manualMu.Unlock()
	claimed := false
	defer func() {
		if !claimed {
			ex.manualDone(jobID, tag)
		}
	}()
	now := ex.clock.Now()
	res, err := ex.store.ExecutionClaimMany(ctx, store.ExecutionClaimManyParams{Now: now, Claims: []store.ExecutionClaim{{
		Execution: store.Execution{
			JobID: jobID, Tag: tag, Scheduled: now, Manual: true, Phase: store.ActionMain, DueAt: now, ClaimedAt: now,
		},
	}}})
	if err != nil {
		return fmt.Errorf("run now: %w", err)
	}
	if res[0].Err != nil {
		return fmt.Errorf("run now: %w", res[0].Err)
	}
	claimed = true
	x := res[0].Execution
	if ex.hooks.manualClaimed != nil {
		ex.hooks.manualClaimed(jobID, j.Version, res[0].Version, x.RepeatCount)
	}
	ex.log.Info("manual run claimed", "job_id", jobID, "execution_tag", x.Tag)
	if ex.replica() {
		taken, err := ex.take(ctx, store.ExecutionTakeParams{IDs: []int64{x.ID}})
		if err != nil || len(taken) == 0 {
			ex.manualDone(jobID, x.Tag) // it runs where it was taken (or when rescued)
			if err != nil {
				ex.log.Warn("manual run claimed but not taken here: an executor takes it", "job_id", jobID, "error", err.Error())
			}
		}
		return nil
	}
	ex.tasks.push(task{exec: *x, job: j, target: ex.target(j.Properties, store.ActionMain)})
	return nil
}

// recordOwner is the owner an attempt is recorded as.
func (ex *Executor) recordOwner() string { return ex.cfg.Owner }

// manualDone says a job's manual run (tag) has ended.
func (ex *Executor) manualDone(jobID int64, tag string) {
	ex.manualMu.Lock()
	if ex.manual[jobID] == tag {
		delete(ex.manual, jobID)
	}
	ex.manualMu.Unlock()
}

// awaitLoaded holds a single process's run now or backfill of the job, before it stores
// anything, until the executor has loaded the unfinished executions (Run): an execution stored
// while the load reads the store would be both loaded and handed over in memory, and run twice.
// A replica's executor loads nothing and does not wait.
func (ex *Executor) awaitLoaded(ctx context.Context, jobID int64) error {
	if ex.replica() {
		return nil
	}
	select {
	case <-ex.loaded:
		return nil
	default:
	}
	if ex.hooks.awaitsLoad != nil {
		ex.hooks.awaitsLoad(jobID)
	}
	select {
	case <-ex.loaded:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("waiting for the unfinished executions to be loaded: %w", ctx.Err())
	}
}

// load reads a single process's unfinished executions, page by page: they run again with their
// tags (a crash can repeat an attempt but never drop an occurrence).
func (ex *Executor) load(ctx context.Context) (int, error) {
	if ex.replica() {
		return 0, nil
	}
	var after int64
	n := 0
	for {
		xs, err := ex.store.ExecutionListUnfinished(ctx, store.ExecutionListUnfinishedParams{AfterID: after, Limit: DefaultLoadPage})
		if err != nil {
			return n, err
		}
		for _, x := range xs {
			after = x.ID
			if waiting(x) {
				ex.backfills.add(x)
				n++
				continue
			}
			if x.DueAt.Equal(store.BufferedDueAt) {
				continue // buffered: the record that ends its job's unfinished execution releases it
			}
			ex.held.push(x, nil, "", false, false, nil)
			n++
		}
		if len(xs) < DefaultLoadPage {
			return n, nil
		}
	}
}

// Run runs executions until ctx is done; it may be called once. On return no attempt is running
// and every finished attempt is recorded: on shutdown it starts no new attempt and waits up to
// ShutdownGrace for running ones (an attempt cut short is not recorded; its execution stays
// claimed and runs again, with the same tag, on the next start; a replica's executor releases
// what it still owns, so that another replica runs it at once).
func (ex *Executor) Run(ctx context.Context) error {
	if !ex.ran.CompareAndSwap(false, true) {
		return errors.New("dispatch: Run was already called on this executor")
	}
	resumed, err := ex.load(ctx)
	if err != nil {
		return fmt.Errorf("dispatch: load: %w", err)
	}
	close(ex.loaded)
	ex.ready.Store(true)
	defer ex.ready.Store(false)
	if ex.replica() {
		ex.log.Info("executor ready", "owner", ex.cfg.Owner, "workers", ex.cfg.Workers, "lease", ex.cfg.Lease.String())
	} else {
		ex.log.Info("executor ready", "unfinished_executions", resumed, "workers", ex.cfg.Workers)
	}

	w := &batchWriter{ops: ex.records, clock: ex.clock, batchSize: ex.cfg.BatchSize, depth: 1,
		busy: ex.recordsMayWait, starting: ex.recordsMayPile, idle: ex.tasks.idle, commitRecords: ex.commitRecords}
	writerDone := make(chan struct{})
	go func() {
		defer close(writerDone)
		w.run(ctx)
	}()

	attemptCtx, cancelAttempts := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelAttempts()
	defer ex.act.Close()
	var workers, side, renewing sync.WaitGroup
	// The leases are renewed until the last attempt ended and its record is committed.
	renewCtx, stopRenewing := context.WithCancel(context.WithoutCancel(ctx))
	defer stopRenewing()
	ex.tasks.startWorkers(ex.cfg.Workers, func() { workers.Go(func() { ex.worker(attemptCtx) }) })
	if ex.replica() {
		side.Go(func() { ex.taker(ctx) })
		renewing.Go(func() { ex.renewer(renewCtx) })
	}

	ex.loop(ctx)
	side.Wait()

	// Shutdown: no new attempts; wait for running ones up to the grace period.
	ex.tasks.close()
	idle := make(chan struct{})
	go func() {
		workers.Wait()
		close(idle)
	}()
	grace := ex.clock.NewTimer(ex.cfg.ShutdownGrace)
	select {
	case <-idle:
		grace.Stop()
	case <-grace.C():
		ex.log.Warn("shutdown grace period over: cutting running attempts short", "grace", ex.cfg.ShutdownGrace.String())
		cancelAttempts()
		<-idle
	}
	close(ex.records)
	<-writerDone
	stopRenewing()
	renewing.Wait()
	if ex.replica() {
		ex.release(context.WithoutCancel(ctx))
	}
	ex.log.Info("executor stopped")
	return nil
}

// loop starts the executions held as they fall due and handles the executor's events, until
// ctx is done.
func (ex *Executor) loop(ctx context.Context) {
	timer := ex.clock.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		now := ex.clock.Now()
		for _, ev := range ex.inbox.take() {
			ev.execute(ctx, ex)
		}
		ex.held.start(now, func(it *held) {
			ex.gc.heldStarting()
			ex.startHeld(it)
		}, nil)
		idle := !ex.tasks.busy()
		if idle {
			ex.gc.idle()
		}
		next, held := ex.held.nextAndLen()
		if !next.IsZero() {
			if !next.After(ex.clock.Now()) {
				continue
			}
			wait := next.Sub(ex.clock.Now())
			if idle {
				// The pacer looks at the heap gcLead before the burst, not when the burst's
				// claims arrive (lookahead before it): a collection their allocations started is
				// over by then and counts as the burst's, where a check in its mark would make
				// runtime.GC wait for it and run a second one.
				switch {
				case wait > gcLead && ex.gc.mayCollect(held, next):
					wait -= gcLead
				case wait >= gcLeadLeast:
					ex.gc.beforeBurst(held, next)
				}
			}
			timer.Reset(wait)
			if !next.After(ex.clock.Now()) {
				continue
			}
		} else {
			timer.Stop()
		}
		ex.hooks.quiet.waiting(quietExecutor, next)
		select {
		case <-ctx.Done():
			return
		case <-timer.C():
		case <-ex.inbox.wake:
		}
		ex.hooks.quiet.woke(quietExecutor)
	}
}

// cancelAhead (a replica's) cancels the occurrences of a job it took ahead and has not started.
func (ex *Executor) cancelAhead(ctx context.Context, jobID int64) {
	for _, it := range ex.held.cancelAhead(jobID) {
		if it.taken {
			ex.waiting.Add(-1)
		}
		ex.cancel(ctx, it.exec)
	}
}

// cancelAheadOfCollection (a replica's) cancels the occurrences it holds ahead of the jobs of a
// collection that changed when they can no longer fire (the collection disabled, suspended or
// deleted), as the leader does for those it claimed and no executor took.
func (ex *Executor) cancelAheadOfCollection(ctx context.Context, collectionID int64) {
	for _, jobID := range ex.held.aheadJobsOfCollection(collectionID) {
		j, err := ex.store.JobGetByID(ctx, store.JobGetByIDParams{ID: jobID})
		switch {
		case errors.Is(err, store.ErrNotFound):
		case err != nil:
			ex.log.Error("reloading a job after its collection changed", "job_id", jobID, "error", err.Error())
			again(ctx, ex.clock, &ex.inbox, executorEvent(collectionChanged{id: collectionID}))
			continue
		case j.State == store.JobStateEnabled && j.CollectionState == store.CollectionStateEnabled:
			continue
		}
		ex.cancelAhead(ctx, jobID)
	}
}

// cancel has the record writer delete an execution whose attempt has not started, with no
// history.
func (ex *Executor) cancel(ctx context.Context, x *store.Execution) {
	ex.log.Info("claimed occurrence cancelled: its job changed", "job_id", x.JobID, "execution_tag", x.Tag,
		"expected_execution_time", x.Scheduled)
	r := cancelRecord(x, ex.recordOwner())
	ex.pendingRecords.Add(1)
	select {
	case ex.records <- op{record: r}:
	case <-ctx.Done():
		ex.pendingRecords.Add(-1)
	}
}

// taken (a replica's) holds the executions it took until they are due.
func (ex *Executor) taken(ev executionsTaken) {
	now := ex.clock.Now()
	for _, t := range ev.executions {
		x, j := t.Execution, t.Job
		// An occurrence not started: a change of its job cancels it.
		ahead := x.DueAt.After(now) && x.Phase == store.ActionMain && x.Attempt == 0
		ex.held.push(x, j, ex.target(j.Properties, x.Phase), ahead, true, nil)
	}
}

// recorded holds the retries of a batch of committed records and passes the batch on to the
// scheduler.
func (ex *Executor) recorded(ev recordsCommitted) {
	for i, r := range ev.records {
		if x := ev.results[i].Released; x != nil {
			ex.released(x)
		}
		if ev.results[i].Gone || r.rec.Next.IsZero() {
			continue
		}
		x := r.exec
		x.Phase, x.Attempt, x.DueAt = r.rec.Phase, r.rec.Attempt, r.rec.Next
		target := ""
		if r.job != nil {
			target = ex.target(r.job.Properties, x.Phase)
		}
		ex.held.push(&x, r.job, target, false, false, nil)
	}
	if ex.hooks.recorded != nil {
		ex.hooks.recorded(ev.records, ev.results)
	}
	ex.pendingRecords.Add(-int64(len(ev.records)))
}

// released runs a buffered execution that a record released (due now): a single process's
// executor runs it here; a replica's wakes its taker, and whichever executor takes it first
// runs it.
func (ex *Executor) released(x *store.Execution) {
	ex.log.Info("buffered occurrence released: the job's previous execution ended", "job_id", x.JobID,
		"execution_tag", x.Tag, "expected_execution_time", x.Scheduled)
	if ex.replica() {
		ex.Wake()
		return
	}
	ex.held.push(x, nil, "", false, false, nil)
}

// newExecutorMetrics makes an executor's metrics (scheduler_executions_taken_total on a
// replica's).
func newExecutorMetrics(reg prometheus.Registerer, replica bool, backlog, running func() float64) (*metrics, error) {
	return newMetrics(reg, false, replica, backlog, running)
}
