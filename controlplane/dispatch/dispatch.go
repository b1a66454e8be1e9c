// Package dispatch fires jobs on time. One goroutine (the loop) owns an in-memory heap of next-due
// times (each schedulable job's next occurrence and each execution's next retry) and sleeps on one
// timer, a wake-up channel and ctx.Done(). When items fall due it builds claims; a batch writer
// commits claims and attempt records to the store in transactions of up to BatchSize; a bounded
// pool of workers runs the attempts (package action).
//
// Overload stays with the target that causes it. Attempts queue by target (scheme, host and
// port; Service Bus namespace), and a worker takes the next task of the next target in turn
// among those with fewer than TargetConcurrency attempts under way: a target that hangs holds at
// most TargetConcurrency workers, its other attempts wait without holding one, and the other
// targets' attempts go ahead. Claims are sized to free capacity (as river's maxJobsToFetch): an
// occurrence due now is claimed only while the workers have room (Workers plus one batch, less
// the attempts under way or waiting for a worker) and so has its target (TargetConcurrency plus
// one batch, less its attempts queued or under way). The rest stay unclaimed in the store
// (executionCount counts claims, so it does not count them) until room frees; misfire
// coalescing then applies to them like to occurrences missed while the daemon was down.
// Occurrences claimed ahead (Lookahead) take no room, so that a burst due at one instant is
// claimed in full before it is due, but none is claimed while there is no room left.
//
// Replicas sharing a store (package replica) split this work by Role. The leader's dispatcher
// (RoleScheduler) schedules and claims, fenced by its term, as above, but claims executions
// unowned and runs none (it commits up to four claim batches at once: its store is a server); every replica's executor (RoleExecutor) takes executions (owner and
// lease, store.Leases) in batches sized to its free workers, ahead of their due time, holds them
// until due, runs their attempts, renews their leases in batches and records them as their owner.
// The leader also rescues the executions whose owner's lease ended (a replica that died or lost
// the database): their owner is cleared and another executor takes them, with their execution
// tag. An attempt in flight on a replica that dies thus runs again, with the same tag, once its
// lease ended; a record from an owner that lost its lease is not applied. A single process
// (RoleSingle) runs what it claims itself: no lease, no round trip per attempt beyond the
// batches.
//
// Delivery is at-least-once: an occurrence is claimed durably (as a store.Execution with its
// execution tag) before its first attempt, and the execution is deleted only in the transaction
// that records its last attempt. Retries are the execution's DueAt, stored, not sleeps. On start
// the dispatcher loads every unfinished execution and runs it again with the same tag, so a crash
// can repeat an attempt but never drop an occurrence.
//
// The writer commits claims before records (claims start attempts), and records wait while the
// attempts of a burst are queued or under way (at most 250 ms), so that recording the first
// attempts of a burst does not take the CPU its last ones need. The loop keeps each job's
// definition as one JSON string, decoded when an occurrence is claimed, so that 100,000 jobs cost
// the garbage collector little to mark.
//
// Next occurrences are computed from the scheduled time, never from when the previous execution
// ran, so schedules do not drift. A next execution time read back from a store that keeps less
// than nanoseconds (PostgreSQL: microseconds) is taken as the rule's occurrence it stands for. Occurrences are claimed up to Lookahead before they are due and
// their attempts start at the due time, so commit latency does not add to lateness.
//
// Decisions where SPEC is silent, fixed here:
//   - Misfires: when an occurrence is found more than MisfireThreshold late (after downtime or
//     overload), it and every later occurrence due by now become one execution, expected at the
//     latest of them; the message of its first attempt says how many earlier ones were
//     coalesced. Coalesced occurrences do not count toward the recurrence's count (they did not
//     execute). Occurrences late by less than the threshold each run, one after the other.
//   - executionCount and lastExecutionTime change when an occurrence is claimed (it has started),
//     not when its last attempt ends; a job with nothing left becomes Completed when its last
//     execution ends.
//   - "Run now" is one more execution (it counts toward executionCount and count), expected at
//     the moment of the request; it runs whatever the job's state and leaves the schedule alone.
//     A job has at most one manual run in flight, whichever replica runs it: RunNow returns a
//     store.RunInFlightError until it ends (the store refuses the claim; the API also applies
//     the collection's maxRecurrence and state to manual runs).
//   - A change wins over a claim. Deleting, disabling or updating a job, and disabling,
//     suspending or deleting its collection, cancels an occurrence claimed ahead whose attempt
//     has not started: its execution is deleted with no history and does not count in
//     executionCount. The API schedules an updated job at that occurrence again, so it runs
//     once, as updated; a change that comes after its attempt started does not make it run
//     twice (the loop does not claim an occurrence at or before one it has started). An
//     execution whose attempt has started (its retries, its error action) still finishes.
//     A job's nextExecutionTime moves on up to Lookahead before the occurrence it replaces has
//     run.
//   - A failed attempt that will be retried is recorded as Failed; this dispatcher records no
//     Postponed attempts.
//   - An occurrence is faulted when its main action failed after its retries and it has no error
//     action or the error action failed too; one that is not faulted resets the run of
//     consecutive faults.
//   - Every action type is executed by package action: Http and Https requests, StorageQueue
//     messages (Azure Storage REST), ServiceBusQueue and ServiceBusTopic messages (AMQP 1.0 over
//     connections pooled per namespace, closed when Run returns).
//   - History is purged by end time (Retention) and beyond the last HistoryKeep executions (not
//     attempts) of each job; Completed and Faulted jobs Retention after they became final.
package dispatch

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
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

// Defaults of Config.
const (
	DefaultMisfireThreshold = 60 * time.Second
	DefaultLookahead        = 500 * time.Millisecond
	DefaultFaultedAfter     = 10
	DefaultWorkers          = 256
	DefaultBatchSize        = 256
	DefaultShutdownGrace    = 8 * time.Second
	DefaultPurgeInterval    = time.Hour
	DefaultRetention        = 60 * 24 * time.Hour
	DefaultHistoryKeep      = 1000
	DefaultLoadPage         = 1000
	DefaultLease            = 5 * time.Second
	DefaultPoll             = time.Second
)

// Role is what a dispatcher does among replicas sharing a store.
type Role int

const (
	// RoleSingle is the only process on its store: it schedules, claims, runs what it claims
	// itself (unowned: no lease) and resumes every unfinished execution when it starts.
	RoleSingle Role = iota
	// RoleScheduler is the leader's: it schedules and claims (fenced by Term) unowned
	// executions, cancels the claims a change made obsolete while no executor has taken them,
	// rescues the executions whose lease ended and purges. It runs no attempt.
	RoleScheduler
	// RoleExecutor is every replica's: it takes executions as Owner, sized to its free workers,
	// holds them until due, runs their attempts, renews their leases and records them.
	RoleExecutor
)

// Config configures a Dispatcher. Store, Secrets are required; the rest have defaults.
type Config struct {
	Store   store.Driver
	Clock   clock.Clock
	Secrets *secret.Box
	Logger  *slog.Logger
	// Registerer receives the dispatcher's metrics; nil: they are kept in a private registry.
	Registerer prometheus.Registerer

	// Outbound HTTP: a shared Transport (nil: action.NewTransport), extra roots for HTTPS
	// targets, the attempt timeout (60 s) and where OAuth tokens come from.
	Transport      *http.Transport
	RootCAs        *x509.CertPool
	AttemptTimeout time.Duration
	OAuthAuthority string
	// StorageQueueEndpoint is the queue service address with "{account}" for the account name
	// ("": Azure's https://{account}.queue.core.windows.net; Azurite: http://127.0.0.1:10001/{account}).
	StorageQueueEndpoint string
	// ServiceBus says how Service Bus actions reach their namespaces (zero: Azure's).
	ServiceBus action.ServiceBusConfig

	MisfireThreshold time.Duration // occurrences later than this are coalesced (60 s)
	// Lookahead is how long before its due time an occurrence is claimed, so that the claim's
	// commit is not part of its lateness: the attempt itself still starts at the due time
	// (500 ms; negative: claim only when due).
	Lookahead     time.Duration
	FaultedAfter  int           // consecutive faulted occurrences that make a job Faulted (10)
	Workers       int           // concurrent attempts (256)
	Region        string        // x-ms-scheduler-execution-region
	BatchSize     int           // claims or records per transaction (256)
	ShutdownGrace time.Duration // how long Run waits for running attempts on shutdown (8 s)
	// TargetConcurrency bounds the attempts under way to one target (scheme, host and port;
	// Service Bus namespace): its other attempts wait without holding a worker, and its
	// occurrences are not claimed while it has TargetConcurrency+BatchSize queued or under way
	// (Workers/4, at least 1).
	TargetConcurrency int

	PurgeInterval time.Duration // how often history and final jobs are purged (1 h)
	Retention     time.Duration // history age and final jobs' age before purge (60 days)
	HistoryKeep   int           // executions of history kept per job (1,000)

	// Term fences the dispatcher's scheduled claims (store.ExecutionClaimManyParams.Term): the
	// leader's term among replicas sharing a database (0: a single process, not fenced).
	// OnStaleTerm, when set, is called when the store refuses a claim of a stale term: another
	// replica leads now, and this dispatcher must stop.
	Term        int64
	OnStaleTerm func()

	// Role, Owner, Lease and Poll share executions among replicas (see Role; zero: RoleSingle).
	// Owner names this replica (RoleExecutor: required). Lease is how long an execution stays
	// an executor's without renewal (DefaultLease; renewed every Lease/3): an executor that dies
	// has its executions run elsewhere about Lease after its last renewal. Poll is how often an
	// executor looks for executions when not woken, and how often the scheduler rescues
	// (DefaultPoll).
	Role  Role
	Owner string
	Lease time.Duration
	Poll  time.Duration
	// OnTakeable, when set (RoleScheduler), is called after claims or a rescue left executions
	// to take: the replica wakes the executors (Wake).
	OnTakeable func()

	// OnRecord, when set, is called after each attempt record is committed (tests, tracing).
	OnRecord func(store.AttemptRecord, store.AttemptRecordResult)
	// OnOutcome, when set, is called once per finished execution, after its last attempt is
	// committed, on the process that ran that attempt (the daemon's per-job metrics and the
	// dashboard's charts). It is called from the dispatcher's writer: it must not block.
	OnOutcome func(Outcome)
	// OnPurge, when set, is called after each purge with the history entries and jobs deleted.
	OnPurge func(history, jobs int64)
}

// Dispatcher fires jobs. Create it with New, start it with Run.
type Dispatcher struct {
	cfg   Config
	store store.Driver
	clock clock.Clock
	box   *secret.Box
	log   *slog.Logger
	exec  *action.Executor
	m     *metrics
	ready atomic.Bool
	tasks *taskQueue
	ops   chan op
	inbox inbox
	ran   atomic.Bool // Run runs once per Dispatcher
	// pendingClaims counts claims sent to the writer and not yet answered (for the backlog gauge).
	pendingClaims atomic.Int64
	// pendingRecords counts records sent to the writer and not yet answered (TestSignals).
	pendingRecords atomic.Int64
	// parked: the loop holds due occurrences it could not claim for want of capacity; the
	// workers wake it when an attempt ends.
	parked atomic.Int64
	// manual holds the execution tag of each job's manual run in flight.
	manualMu sync.Mutex
	manual   map[int64]string
	// RoleExecutor: owned holds the executions this executor owns (taken, not finished); waiting
	// counts those taken and not started yet; takeWake wakes the taker, starved says the last
	// take was cut short by capacity (a freed worker wakes it).
	owned    ownedSet
	waiting  atomic.Int64
	takeWake chan struct{}
	starved  atomic.Bool

	// TestSignals are the dispatcher's decision points, for tests (inert unless initialised).
	TestSignals TestSignals
}

// TestSignals are the signals a dispatcher sends to tests that initialise them (Init) before Run.
type TestSignals struct {
	// Quiet is sent each time the loop goes to wait with nothing in flight: every event posted
	// so far handled, no claim or record waiting for the writer, no attempt queued or under way.
	Quiet testsignal.Signal[Quiet]
	// Parked is sent when a due occurrence is left unclaimed for want of capacity.
	Parked testsignal.Signal[Parked]
	// Cancelled is sent when an occurrence claimed ahead is cancelled by a change of its job.
	Cancelled testsignal.Signal[Cancelled]
}

// Init enables every signal.
func (s *TestSignals) Init() {
	s.Quiet.Init()
	s.Parked.Init()
	s.Cancelled.Init()
}

// Parked is a job whose occurrence due at Due waits, unclaimed, for capacity.
type Parked struct {
	JobID int64
	Due   time.Time
}

// Cancelled is an occurrence claimed ahead (its execution tag) that a change of its job cancelled.
type Cancelled struct {
	JobID int64
	Tag   string
}

// Quiet is the loop's state when it went to wait with nothing in flight: the clock time of its
// turn, and when its timer fires next (zero: nothing scheduled; an executor schedules nothing,
// but holds what it took).
type Quiet struct {
	Now  time.Time
	Next time.Time
}

// New returns a Dispatcher; it does no I/O.
func New(cfg Config) (*Dispatcher, error) {
	if cfg.Store == nil {
		return nil, errors.New("dispatch: Store is required")
	}
	if cfg.Secrets == nil {
		return nil, errors.New("dispatch: Secrets is required")
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.Real{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.MisfireThreshold <= 0 {
		cfg.MisfireThreshold = DefaultMisfireThreshold
	}
	switch {
	case cfg.Lookahead == 0:
		cfg.Lookahead = DefaultLookahead
	case cfg.Lookahead < 0:
		cfg.Lookahead = 0
	}
	if cfg.FaultedAfter <= 0 {
		cfg.FaultedAfter = DefaultFaultedAfter
	}
	if cfg.Workers <= 0 {
		cfg.Workers = DefaultWorkers
	}
	if cfg.BatchSize <= 0 {
		cfg.BatchSize = DefaultBatchSize
	}
	if cfg.TargetConcurrency <= 0 {
		cfg.TargetConcurrency = max(cfg.Workers/4, 1)
	}
	if cfg.ShutdownGrace <= 0 {
		cfg.ShutdownGrace = DefaultShutdownGrace
	}
	if cfg.PurgeInterval <= 0 {
		cfg.PurgeInterval = DefaultPurgeInterval
	}
	if cfg.Retention <= 0 {
		cfg.Retention = DefaultRetention
	}
	if cfg.HistoryKeep <= 0 {
		cfg.HistoryKeep = DefaultHistoryKeep
	}
	if cfg.Registerer == nil {
		cfg.Registerer = prometheus.NewRegistry()
	}
	if cfg.Lease <= 0 {
		cfg.Lease = DefaultLease
	}
	if cfg.Poll <= 0 {
		cfg.Poll = DefaultPoll
	}
	if cfg.Role == RoleExecutor && cfg.Owner == "" {
		return nil, errors.New("dispatch: an executor needs an Owner")
	}
	d := &Dispatcher{
		cfg:   cfg,
		store: cfg.Store,
		clock: cfg.Clock,
		box:   cfg.Secrets,
		log:   cfg.Logger,
		exec: action.New(action.Config{
			Clock: cfg.Clock, Transport: cfg.Transport, RootCAs: cfg.RootCAs, Timeout: cfg.AttemptTimeout,
			OAuthAuthority: cfg.OAuthAuthority, StorageQueueEndpoint: cfg.StorageQueueEndpoint, ServiceBus: cfg.ServiceBus,
			Logger: cfg.Logger,
		}),
		tasks:    newTaskQueue(cfg.TargetConcurrency),
		manual:   map[int64]string{},
		ops:      make(chan op, 4*cfg.BatchSize),
		owned:    ownedSet{ids: map[int64]struct{}{}},
		takeWake: make(chan struct{}, 1),
	}
	d.inbox.wake = make(chan struct{}, 1)
	d.tasks.freed = func() {
		if d.parked.Load() > 0 { // the loop waits for capacity
			select {
			case d.inbox.wake <- struct{}{}:
			default:
			}
		}
		if d.starved.Load() { // the taker waits for capacity
			d.Wake()
		}
	}
	m, err := newMetrics(cfg.Registerer, cfg.Role, func() float64 {
		return float64(d.tasks.len()) + float64(d.pendingClaims.Load()) + float64(d.parked.Load())
	}, func() float64 { return float64(d.tasks.runningNow()) })
	if err != nil {
		return nil, fmt.Errorf("dispatch: metrics: %w", err)
	}
	d.m = m
	return d, nil
}

// Ready reports whether the schedule is loaded (for /readyz).
func (d *Dispatcher) Ready() bool { return d.ready.Load() }

// JobChanged tells the dispatcher a job was created, updated or deleted: it reloads the job.
func (d *Dispatcher) JobChanged(jobID int64) {
	d.inbox.post(event{kind: evJobChanged, id: jobID})
}

// CollectionChanged tells the dispatcher a collection's state changed or it was deleted: it
// reloads the collection's jobs.
func (d *Dispatcher) CollectionChanged(collectionID int64) {
	d.inbox.post(event{kind: evCollectionChanged, id: collectionID})
}

// Wake tells an executor that executions wait to be taken (claimed or rescued by the leader).
func (d *Dispatcher) Wake() {
	select {
	case d.takeWake <- struct{}{}:
	default:
	}
}

// RunNow runs one execution of the job now, whatever its schedule ("run now"). The execution is
// claimed durably before RunNow returns; it counts as an execution of the job. It returns
// store.ErrNotFound (wrapped) when the job does not exist. An executor claims it unowned and takes
// it at once: it runs here (another replica's taker may take it first: it then runs there, and
// the one-run-in-flight rule does not follow it).
func (d *Dispatcher) RunNow(ctx context.Context, jobID int64) error {
	tag := uuid.NewString()
	d.manualMu.Lock()
	if inFlight, ok := d.manual[jobID]; ok {
		d.manualMu.Unlock()
		return fmt.Errorf("run now: %w", &store.RunInFlightError{Tag: inFlight})
	}
	d.manual[jobID] = tag
	d.manualMu.Unlock()
	claimed := false
	defer func() {
		if !claimed {
			d.manualDone(jobID, tag)
		}
	}()
	j, err := d.store.JobGetByID(ctx, store.JobGetByIDParams{ID: jobID})
	if err != nil {
		return fmt.Errorf("run now: %w", err)
	}
	now := d.clock.Now()
	res, err := d.store.ExecutionClaimMany(ctx, store.ExecutionClaimManyParams{Now: now, Claims: []store.ExecutionClaim{{
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
	e := res[0].Execution
	d.inbox.post(event{kind: evManualClaimed, id: jobID, prev: j.Version, version: res[0].Version, count: e.RepeatCount})
	d.log.Info("manual run claimed", "job_id", jobID, "execution_tag", e.Tag)
	if d.cfg.Role == RoleExecutor {
		taken, err := d.take(ctx, store.ExecutionTakeParams{IDs: []int64{e.ID}})
		if err != nil || len(taken) == 0 {
			d.manualDone(jobID, e.Tag) // it runs where it was taken (or when rescued)
			if err != nil {
				d.log.Warn("manual run claimed but not taken here: an executor takes it", "job_id", jobID, "error", err.Error())
			}
		}
		return nil
	}
	d.tasks.push(task{exec: *e, job: j, target: d.target(j.Properties, store.ActionMain)})
	return nil
}

// recordOwner is the owner an attempt is recorded as.
func (d *Dispatcher) recordOwner() string {
	if d.cfg.Role == RoleExecutor {
		return d.cfg.Owner
	}
	return ""
}

// manualDone says a job's manual run (tag) has ended.
func (d *Dispatcher) manualDone(jobID int64, tag string) {
	d.manualMu.Lock()
	if d.manual[jobID] == tag {
		delete(d.manual, jobID)
	}
	d.manualMu.Unlock()
}

// Run loads the schedule and fires jobs until ctx is done; it may be called once. On return no
// attempt is running and every finished attempt is recorded: on shutdown it starts no new
// attempt and waits up to ShutdownGrace for running ones (an attempt cut short is not recorded;
// its execution stays claimed and runs again, with the same tag, on the next start; an executor
// releases what it still owns, so that another replica runs it at once).
func (d *Dispatcher) Run(ctx context.Context) error {
	if !d.ran.CompareAndSwap(false, true) {
		return errors.New("dispatch: Run was already called on this dispatcher")
	}

	l := newLoop(d)
	if err := l.load(ctx); err != nil {
		return fmt.Errorf("dispatch: load: %w", err)
	}
	d.ready.Store(true)
	defer d.ready.Store(false)
	switch d.cfg.Role {
	case RoleExecutor:
		d.log.Info("executor ready", "owner", d.cfg.Owner, "workers", d.cfg.Workers, "lease", d.cfg.Lease.String())
	default:
		d.log.Info("dispatcher ready", "jobs", len(l.entries), "unfinished_executions", l.resumed, "workers", d.cfg.Workers)
	}

	writerDone := make(chan struct{})
	go func() {
		defer close(writerDone)
		d.writer(ctx)
	}()

	attemptCtx, cancelAttempts := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelAttempts()
	defer d.exec.Close()
	var workers, side, renewing sync.WaitGroup
	// The leases are renewed until the last attempt ended and its record is committed.
	renewCtx, stopRenewing := context.WithCancel(context.WithoutCancel(ctx))
	defer stopRenewing()
	if d.cfg.Role != RoleScheduler {
		for range d.cfg.Workers {
			workers.Go(func() { d.worker(attemptCtx) })
		}
	}
	switch d.cfg.Role {
	case RoleExecutor:
		side.Go(func() { d.taker(ctx) })
		renewing.Go(func() { d.renewer(renewCtx) })
	case RoleScheduler:
		side.Go(func() { d.purger(ctx) })
		side.Go(func() { d.rescuer(ctx) })
	default:
		side.Go(func() { d.purger(ctx) })
	}

	l.run(ctx)
	side.Wait()

	// Shutdown: no new attempts; wait for running ones up to the grace period.
	d.tasks.close()
	idle := make(chan struct{})
	go func() {
		workers.Wait()
		close(idle)
	}()
	grace := d.clock.NewTimer(d.cfg.ShutdownGrace)
	select {
	case <-idle:
		grace.Stop()
	case <-grace.C():
		d.log.Warn("shutdown grace period over: cutting running attempts short", "grace", d.cfg.ShutdownGrace.String())
		cancelAttempts()
		<-idle
	}
	close(d.ops)
	<-writerDone
	stopRenewing()
	renewing.Wait()
	if d.cfg.Role == RoleExecutor {
		d.release(context.WithoutCancel(ctx))
	}
	d.log.Info("dispatcher stopped")
	return nil
}
