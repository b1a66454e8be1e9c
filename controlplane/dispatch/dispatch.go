// Package dispatch fires jobs on time, as two actors with one job each.
//
// The Scheduler decides when. One goroutine (its loop) owns an indexed heap of every schedulable
// job's next occurrence and sleeps on one timer, a wake-up channel and ctx.Done(). When an
// occurrence falls due (Lookahead before its time) it builds a claim; a batch writer commits
// claims in transactions of up to BatchSize. A change of a job (JobChanged, CollectionChanged:
// from the API, from the notifications of other replicas, or from a sweep of the change feed)
// reloads it and cancels its occurrences claimed ahead that have not started. The scheduler also
// purges history (and, on the leader, rescues the executions whose owner's lease ended), as
// services started and stopped with it.
//
// The Executor runs. It holds each execution until due, then runs its attempts on a bounded pool
// of workers (package action) and records them in batches. Overload stays with the target that
// causes it: attempts queue by target (scheme, host and port; Service Bus namespace), and a
// worker takes the next task of the next target in turn among those with fewer than
// TargetConcurrency attempts under way: a target that hangs holds at most TargetConcurrency
// workers, its other attempts wait without holding one, and the other targets' attempts go
// ahead.
//
// A single process (New: a Dispatcher) runs both: its scheduler hands what it claims to its
// executor in memory, no extra round trip, and sizes its claims to the executor's free capacity
// (as river's maxJobsToFetch): an occurrence due now is claimed only while the workers have room
// (Workers plus one batch, less the attempts under way or waiting for a worker) and so has its
// target (TargetConcurrency plus one batch, less its attempts queued or under way). The rest stay
// unclaimed in the store (executionCount counts claims, so it does not count them) until room
// frees; misfire coalescing then applies to them like to occurrences missed while the daemon
// was down. Occurrences claimed ahead take no room, so that a burst due at one instant is
// claimed in full before it is due, but none is claimed while there is no room left.
//
// Replicas sharing a store (package replica) each run an Executor (NewExecutor, Config.Owner):
// it takes executions (owner and lease, store.Leases) in batches sized to its free workers, ahead
// of their due time, holds them until due, runs their attempts, renews their leases in batches
// and records them as their owner. The leader alone runs a Scheduler (NewScheduler), switched on
// and off by its leadership: it claims executions unowned, fenced by its term (committing up to
// four claim batches at once: its store is a server), and rescues the executions whose owner's
// lease ended (a replica that died or lost the database): their owner is cleared and another
// executor takes them, with their execution tag. An attempt in flight on a replica that dies
// thus runs again, with the same tag, once its lease ended; a record from an owner that lost its
// lease is not applied.
//
// Delivery is at-least-once: an occurrence is claimed durably (as a store.Execution with its
// execution tag) before its first attempt, and the execution is deleted only in the transaction
// that records its last attempt. Retries are the execution's DueAt, stored, not sleeps. On start
// a single process's executor loads every unfinished execution and runs it again with the same
// tag, so a crash can repeat an attempt but never drop an occurrence.
//
// The executor's records wait while the attempts of a burst are queued or under way (at most
// 250 ms), so that recording the first attempts of a burst does not take the CPU its last ones
// need. The scheduler keeps each job's definition as one JSON string, decoded when an occurrence
// is claimed, so that 100,000 jobs cost the garbage collector little to mark.
//
// Next occurrences are computed from the scheduled time, never from when the previous execution
// ran, so schedules do not drift (the rules themselves are package jobstate's). A next execution
// time read back from a store that keeps less than nanoseconds (PostgreSQL: microseconds) is
// taken as the rule's occurrence it stands for. Occurrences are claimed up to Lookahead before
// they are due and their attempts start at the due time, so commit latency does not add to
// lateness.
//
// Decisions where SPEC is silent, fixed here:
//   - Misfires: when an occurrence is found more than MisfireThreshold late (after downtime or
//     overload), it and every later occurrence due by now become one execution, expected at the
//     latest of them; the message of its first attempt says how many earlier ones were
//     coalesced. Coalesced occurrences do not count toward the recurrence's count (they did not
//     execute). Occurrences late by less than the threshold each run, one after the other.
//   - Overlap (SPEC 8): a job with a policy (Skip, BufferOne) has its occurrences claimed when
//     they start, not Lookahead ahead, and the store applies jobstate.Overlap in the claim's
//     transaction, the job's row locked: the occurrence runs, is skipped (a Skipped history
//     entry naming the unfinished execution's tag; the job moves to its next occurrence, count
//     not spent) or is stored buffered (store.BufferedDueAt: no executor takes it). The record
//     that ends the job's last unfinished execution releases it (due then; a single process
//     runs it at once, a replica's executor wakes its taker), or cancels it when the job is no
//     longer Claimable. A change of the job through the API cancels it at once, in the change's
//     transaction (jobstate.WaitingOnChange). It starts when released: the job's
//     lastExecutionTime is set then, not when it began to wait. The misfire policy Skip records the occurrences it skipped in one
//     Skipped entry (a skip claim), then claims the first it did not skip.
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
//   - A backfill (Executor.Backfill) stores one execution per occurrence before it answers; they
//     run one after the other, oldest first, each due when the record that ends the previous one
//     is committed (the store makes it due in that transaction), so a restart or another replica
//     carries on. They count in executionCount as manual runs do; a change of the job does not
//     cancel them (none is claimed ahead) unless it disables the job or its collection
//     (jobstate.BackfillOnChange: the job's write, or the collection's, deletes those waiting,
//     and a single process's executor runs a next one only when the record made it due,
//     AttemptRecordResult.BackfillNext; the store refuses to store a backfill that may not run,
//     store.RunRefusedError), and the job's overlap policy sees the one under way as its
//     unfinished execution.
//   - A pause that ends (resumeAt) is the scheduler's: it enables the job at that time
//     (jobstate.Resumed: the next run as an enable at resumeAt computes it), and when it starts
//     after that time, as of it.
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
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/trace"

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

// Config configures a Dispatcher, a Scheduler or an Executor. Store, Secrets are required; the
// rest have defaults.
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
	// Tracer, when set, records a span per attempt (action.Config.Tracer).
	Tracer trace.Tracer

	MisfireThreshold time.Duration // occurrences later than this are coalesced (60 s)
	// Lookahead is how long before its due time an occurrence is claimed, so that the claim's
	// commit is not part of its lateness: the attempt itself still starts at the due time
	// (500 ms; negative: claim only when due).
	Lookahead     time.Duration
	FaultedAfter  int           // consecutive faulted occurrences that make a job Faulted (10)
	Workers       int           // concurrent attempts (256); a worker is started when a task finds none free
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

	// Term fences the scheduler's claims (store.ExecutionClaimManyParams.Term): the
	// leader's term among replicas sharing a database (0: a single process, not fenced).
	// OnStaleTerm, when set, is called when the store refuses a claim of a stale term: another
	// replica leads now, and this scheduler must stop.
	Term        int64
	OnStaleTerm func()

	// Owner, Lease and Poll share executions among replicas. Owner names this replica (an
	// executor among replicas: NewExecutor). Lease is how long an execution stays an executor's
	// without renewal (DefaultLease; renewed when it ends within 2/3 of it, looked at every
	// Lease/6): an executor that dies has its executions run elsewhere about Lease after its
	// last renewal. Poll is how often an executor
	// looks for executions when not woken, and how often the leader's scheduler rescues
	// (DefaultPoll).
	Owner string
	Lease time.Duration
	Poll  time.Duration
	// OnTakeable, when set (the leader's scheduler), is called after claims or a rescue left executions
	// to take: the replica wakes the executors (Wake).
	OnTakeable func()

	// OnRecord, when set, is called after each attempt record is committed (tests, tracing).
	OnRecord func(store.AttemptRecord, store.AttemptRecordResult)
	// OnOutcome, when set, is called once per finished execution, after its last attempt is
	// committed, on the process that ran that attempt (the daemon's per-job metrics and the
	// dashboard's charts). It is called from the executor's record writer: it must not block.
	OnOutcome func(Outcome)
	// OnPurge, when set, is called after each purge with the history entries and jobs deleted.
	OnPurge func(history, jobs int64)
}

// withDefaults checks cfg and fills in its defaults.
func (cfg Config) withDefaults() (Config, error) {
	if cfg.Store == nil {
		return cfg, errors.New("dispatch: Store is required")
	}
	if cfg.Secrets == nil {
		return cfg, errors.New("dispatch: Secrets is required")
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
	return cfg, nil
}

// Dispatcher is a single process's scheduler and executor: the scheduler hands what it claims
// to the executor in memory. Create it with New, start it with Run.
type Dispatcher struct {
	sched *Scheduler
	exec  *Executor
	ran   atomic.Bool
	quiet quietWatch

	// TestSignals are the dispatcher's decision points, for tests (inert unless initialised).
	TestSignals TestSignals
}

// New returns the Dispatcher of a single process (cfg.Owner must be empty: it owns every
// execution of its store); it does no I/O.
func New(cfg Config) (*Dispatcher, error) {
	if cfg.Owner != "" {
		return nil, errors.New("dispatch: a single process's dispatcher has no Owner (replicas: NewExecutor)")
	}
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	d := &Dispatcher{}
	var s *Scheduler
	ex, err := newExecutor(cfg, executorHooks{
		backlog: func() int64 { return s.pendingClaims.Load() + s.parked.Load() },
		freed:   func() { s.wakeIfParked() },
		recorded: func(rs []*recordOp, res []store.AttemptRecordResult) {
			s.inbox.post(recordsCommitted{records: rs, results: res})
		},
		manualClaimed: func(jobID, prev, version int64, count int) {
			s.inbox.post(manualClaimed{jobID: jobID, prev: prev, version: version, count: count})
		},
		awaitsLoad: func(jobID int64) { d.TestSignals.AwaitsLoad.Signal(jobID) },
		quiet:      &d.quiet,
	})
	if err != nil {
		return nil, err
	}
	s = newScheduler(cfg, executorRunner{ex: ex}, ex.m)
	s.target = ex.target
	s.signals, s.quiet = &d.TestSignals, &d.quiet
	d.sched, d.exec = s, ex
	d.quiet.init(&d.TestSignals.Quiet, cfg.Clock,
		func() bool { return s.inbox.pending() || s.pendingClaims.Load() > 0 || s.pendingCancels.Load() > 0 },
		func() bool {
			return ex.inbox.pending() || ex.pendingRecords.Load() > 0 || ex.tasks.busy() || ex.gc.collecting.Load()
		})
	return d, nil
}

// Ready reports whether the schedule and the unfinished executions are loaded (for /readyz).
func (d *Dispatcher) Ready() bool { return d.sched.Ready() && d.exec.Ready() }

// JobChanged tells the dispatcher a job was created, updated or deleted: it reloads the job.
func (d *Dispatcher) JobChanged(jobID int64) { d.sched.JobChanged(jobID) }

// JobWritten tells the dispatcher a job was created or updated here, with the job as written:
// see Scheduler.JobWritten.
func (d *Dispatcher) JobWritten(j *store.Job) { d.sched.JobWritten(j) }

// CollectionChanged tells the dispatcher a collection's state changed or it was deleted: it
// reloads the collection's jobs.
func (d *Dispatcher) CollectionChanged(collectionID int64) { d.sched.CollectionChanged(collectionID) }

// RunNow runs one execution of the job now, whatever its schedule ("run now"): see
// Executor.RunNow.
func (d *Dispatcher) RunNow(ctx context.Context, j *store.Job) error { return d.exec.RunNow(ctx, j) }

// Backfill runs one execution of the job per occurrence of at, one after the other: see
// Executor.Backfill.
func (d *Dispatcher) Backfill(ctx context.Context, jobID int64, at []time.Time) error {
	_, err := d.exec.Backfill(ctx, jobID, at)
	return err
}

// Run loads the schedule and fires jobs until ctx is done; it may be called once. On return no
// attempt is running and every finished attempt is recorded (see Executor.Run).
func (d *Dispatcher) Run(ctx context.Context) error {
	if !d.ran.CompareAndSwap(false, true) {
		return errors.New("dispatch: Run was already called on this dispatcher")
	}
	sctx, stopScheduler := context.WithCancel(ctx)
	defer stopScheduler()
	execDone := make(chan error, 1)
	go func() { execDone <- d.exec.Run(ctx) }()
	// The scheduler claims once the executor has loaded the unfinished executions: one it
	// claimed before would be loaded and run twice.
	select {
	case <-d.exec.loaded:
	case err := <-execDone:
		return err
	}
	schedDone := make(chan error, 1)
	go func() { schedDone <- d.sched.Run(sctx) }()
	err := <-execDone
	stopScheduler()
	if serr := <-schedDone; serr != nil && err == nil {
		err = serr
	}
	return err
}

// TestSignals are the signals a dispatcher sends to tests that initialise them (Init) before Run.
type TestSignals struct {
	// Quiet is sent each time the scheduler or the executor goes to wait while nothing is in
	// flight: every event posted so far handled by both, no claim, cancellation or record
	// waiting for a writer, no attempt queued or under way.
	Quiet testsignal.Signal[Quiet]
	// Parked is sent when a due occurrence is left unclaimed for want of capacity.
	Parked testsignal.Signal[Parked]
	// Cancelled is sent when an occurrence claimed ahead is cancelled by a change of its job.
	Cancelled testsignal.Signal[Cancelled]
	// Skipped is sent when a claim skipped an occurrence (overlap or misfire policy Skip) and
	// Buffered when one was stored waiting (overlap policy BufferOne).
	Skipped  testsignal.Signal[Skipped]
	Buffered testsignal.Signal[Buffered]
	// Resumed is sent when a paused job became Enabled by itself at its resumeAt.
	Resumed testsignal.Signal[Resumed]
	// AwaitsLoad is sent when a run now or a backfill (its job ID) waits, before it stores
	// anything, for the executor to have loaded the unfinished executions.
	AwaitsLoad testsignal.Signal[int64]
}

// Init enables every signal.
func (s *TestSignals) Init() {
	s.Quiet.Init()
	s.Parked.Init()
	s.Cancelled.Init()
	s.Skipped.Init()
	s.Buffered.Init()
	s.Resumed.Init()
	s.AwaitsLoad.Init()
}

// Skipped is an occurrence of a job that was skipped and recorded (the first of them, for the
// misfire policy Skip).
type Skipped struct {
	JobID     int64
	Scheduled time.Time
}

// Buffered is an occurrence of a job stored waiting for the end of its unfinished execution.
type Buffered struct {
	JobID     int64
	Tag       string
	Scheduled time.Time
}

// Quiet is the state of a dispatcher with nothing in flight: the time, and when it has
// something to do next (zero: nothing held or scheduled): claim an occurrence, or start one
// held.
type Quiet struct {
	Now  time.Time
	Next time.Time
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

// The two loops a quietWatch watches.
const (
	quietScheduler = iota
	quietExecutor
)

// quietWatch sends TestSignals.Quiet when both loops of a dispatcher wait with nothing in flight.
type quietWatch struct {
	mu    sync.Mutex
	sig   *testsignal.Signal[Quiet]
	clock clock.Clock
	idle  [2]bool
	next  [2]time.Time
	busy  [2]func() bool
}

func (q *quietWatch) init(sig *testsignal.Signal[Quiet], clk clock.Clock, scheduler, executor func() bool) {
	q.sig, q.clock, q.busy = sig, clk, [2]func() bool{scheduler, executor}
}

// waiting says a loop goes to wait with its next wake-up at next (zero: none).
func (q *quietWatch) waiting(who int, next time.Time) {
	if q == nil || q.sig == nil || !q.sig.Enabled() {
		return
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	q.idle[who], q.next[who] = true, next
	for i := range q.idle {
		if !q.idle[i] || q.busy[i]() {
			return
		}
	}
	at := q.next[0]
	if n := q.next[1]; !n.IsZero() && (at.IsZero() || n.Before(at)) {
		at = n
	}
	q.sig.Signal(Quiet{Now: q.clock.Now(), Next: at})
}

// woke says a loop woke up.
func (q *quietWatch) woke(who int) {
	if q == nil || q.sig == nil || !q.sig.Enabled() {
		return
	}
	q.mu.Lock()
	q.idle[who] = false
	q.mu.Unlock()
}
