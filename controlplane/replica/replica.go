// Package replica runs one schedulerd replica among several sharing a PostgreSQL database.
//
// One replica at a time leads: it holds the leadership row (store.Leadership) under a lease with
// a term, renewed every TTL/3. The leader runs the scheduler (a dispatch.Scheduler)
// of its term: it alone computes the schedule, claims occurrences (claims fenced by its term, so
// that a stale leader's claims are refused by the store), rescues the executions of replicas whose
// lease ran out and purges. Every replica, the leader too, runs an executor (a dispatch.Executor)
// for its whole life: it takes claimed executions in batches sized to its free workers (an owner
// and a lease, FOR UPDATE SKIP LOCKED), holds them until due, runs their attempts, renews their
// leases and records them. The leader notifies a claim batch (store.ChangeTakeable) and every
// executor takes its share; each also looks every Poll. Every replica serves the API; a change
// made through any of them is recorded in the store's change feed and notified to all in the
// transaction that writes it (store.ChangeFeed, store.Notifier: LISTEN/NOTIFY on PostgreSQL), and
// reaches the leader's scheduler at once, which reloads the job and drops a claim it made obsolete
// that no executor took, and every executor, which drops the occurrences it holds ahead of that
// job. Notifications are the fast path: each replica also reads the feed every FeedInterval and
// after every LISTEN, and acts on the changes it was not notified of (feed.go). A manual run is
// claimed and taken by the replica that was asked.
//
// A leader that cannot renew steps down (its scheduler stops claiming) TTL/4 before its lease
// expires, so no two replicas act in one term; when it dies, another replica takes over once the
// lease expires (within TTL plus one renewal interval). The executions a dead replica held run
// again elsewhere, with their execution tags, once their lease ran out and the leader rescued
// them.
package replica

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/dispatch"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/queue"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/clock"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/testsignal"
)

// DefaultTTL is how long a leadership lasts without renewal.
const DefaultTTL = 2 * time.Second

// Config configures a Replica.
type Config struct {
	Store store.Driver
	// ID names this replica (default: hostname, process id and a random suffix). Two live
	// replicas must never share one.
	ID  string
	TTL time.Duration // the leadership's lease (DefaultTTL)
	// Clock times the election (renewals, the step-down margin) and is the dispatchers' clock
	// unless Dispatch.Clock is set (clock.Real).
	Clock clock.Clock
	// LeaseClock, when set, is the clock the leadership's expiry is computed from
	// (store.LeaderElectParams.Now); nil: the database's, which the replicas share. Tests that
	// move a fake Clock set it to the same one, so that failover runs on the fake clock.
	LeaseClock clock.Clock
	Logger     *slog.Logger
	Registerer prometheus.Registerer // scheduler_leader, scheduler_replica_info and the executor's
	// Dispatch configures the replica's dispatchers (Store, Secrets, workers...; its Lease and
	// Poll apply to the executions shared): the replica sets their Owner, Term, Registerer
	// and callbacks.
	Dispatch dispatch.Config
	// FeedInterval is how often the replica reads the store's change feed, when it has one
	// (DefaultFeedInterval); FeedRetention how long the leader keeps its changes
	// (DefaultFeedRetention).
	FeedInterval  time.Duration
	FeedRetention time.Duration
}

// Replica is one replica: the api.Dispatcher the API talks to, and a prometheus.Gatherer of the
// current dispatcher's metrics.
type Replica struct {
	cfg      Config
	log      *slog.Logger
	notifier store.Notifier // nil: a single process
	feed     *feed          // the reader of the store's change feed (nil: none)
	leader   prometheus.Gauge
	exec     *dispatch.Executor // the executor, for the replica's life

	mu  sync.Mutex
	cur *dispatch.Scheduler
	reg *prometheus.Registry // the metrics of the current (or last) scheduler

	listening    atomic.Bool
	listenMu     sync.Mutex
	listenCancel context.CancelFunc // ends the current LISTEN (relisten)

	// TestSignals are the replica's decision points, for tests (inert unless initialised).
	TestSignals TestSignals
	stale       chan struct{}
	resync      chan struct{}
	changes     *queue.Bounded[store.Change] // made through this replica, waiting to be notified (a full queue holds the API back)
	takeable    chan struct{}                // a ChangeTakeable to notify (one pending is enough)
}

// TestSignals are the signals a replica sends to tests that initialise them (Init) before Run.
type TestSignals struct {
	// Elected is sent after each round of the election, when the replica goes to wait for the
	// next one.
	Elected testsignal.Signal[Elected]
}

// Init enables every signal.
func (s *TestSignals) Init() { s.Elected.Init() }

// Elected is one round of the election: when it started (Clock), whether the replica leads
// after it, and how long it waits before the next round.
type Elected struct {
	At      time.Time
	Leading bool
	Wait    time.Duration
}

// DefaultID is a replica ID unique to this process.
func DefaultID() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "replica"
	}
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	return fmt.Sprintf("%s-%d-%s", host, os.Getpid(), hex.EncodeToString(b))
}

// New returns a Replica; it does no I/O.
func New(cfg Config) (*Replica, error) {
	if cfg.Store == nil {
		return nil, errors.New("replica: Store is required")
	}
	if cfg.ID == "" {
		cfg.ID = DefaultID()
	}
	if cfg.TTL <= 0 {
		cfg.TTL = DefaultTTL
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.Real{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Registerer == nil {
		cfg.Registerer = prometheus.NewRegistry()
	}
	if cfg.FeedInterval <= 0 {
		cfg.FeedInterval = DefaultFeedInterval
	}
	if cfg.FeedRetention <= 0 {
		cfg.FeedRetention = DefaultFeedRetention
	}
	r := &Replica{
		cfg: cfg, log: cfg.Logger.With("replica", cfg.ID),
		stale: make(chan struct{}, 1), resync: make(chan struct{}, 1), changes: queue.New[store.Change](maxQueued),
		takeable: make(chan struct{}, 1),
	}
	r.notifier, _ = cfg.Store.(store.Notifier)
	if cf, ok := cfg.Store.(store.ChangeFeed); ok && r.notifier != nil {
		r.feed = newFeed(r, cf)
	}
	ec := cfg.Dispatch
	ec.Store, ec.Owner, ec.Term, ec.Registerer = cfg.Store, cfg.ID, 0, cfg.Registerer
	ec.OnStaleTerm, ec.OnTakeable = nil, nil
	if ec.Clock == nil {
		ec.Clock = cfg.Clock
	}
	if ec.Logger == nil {
		ec.Logger = r.log
	}
	ec.Logger = ec.Logger.With("role", "executor")
	exec, err := dispatch.NewExecutor(ec)
	if err != nil {
		return nil, fmt.Errorf("replica: executor: %w", err)
	}
	r.exec = exec
	if r.leader, err = Gauges(cfg.Registerer, cfg.ID); err != nil {
		return nil, fmt.Errorf("replica: %w", err)
	}
	if r.feed != nil {
		for _, c := range r.feed.collectors() {
			if err := cfg.Registerer.Register(c); err != nil {
				return nil, fmt.Errorf("replica: metrics: %w", err)
			}
		}
	}
	return r, nil
}

// ID returns the replica's id.
func (r *Replica) ID() string { return r.cfg.ID }

// Leading reports whether this replica's dispatcher runs.
func (r *Replica) Leading() bool { return r.current() != nil }

func (r *Replica) current() *dispatch.Scheduler {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.cur
}

// Gather gathers the current (or last) dispatcher's metrics.
func (r *Replica) Gather() ([]*dto.MetricFamily, error) {
	r.mu.Lock()
	reg := r.reg
	r.mu.Unlock()
	if reg == nil {
		return nil, nil
	}
	return reg.Gather()
}

// JobChanged tells the leader's scheduler and every executor (this replica's, and the others
// through the store) that a job changed. A store with a change feed has recorded and notified
// the change in the write's own transaction; another is told now.
func (r *Replica) JobChanged(jobID int64) {
	if d := r.current(); d != nil {
		d.JobChanged(jobID)
	}
	r.exec.JobChanged(jobID)
	if r.feed == nil {
		r.notify(store.Change{Kind: store.ChangeJob, ID: jobID})
	}
}

// JobWritten is JobChanged for a job written through this replica, j as written: the leader's
// scheduler, when it runs here, takes it without reading it back (Scheduler.JobWritten).
func (r *Replica) JobWritten(j *store.Job) {
	if d := r.current(); d != nil {
		d.JobWritten(j)
	}
	r.exec.JobChanged(j.ID)
	if r.feed == nil {
		r.notify(store.Change{Kind: store.ChangeJob, ID: j.ID})
	}
}

// CollectionChanged tells the leader's scheduler and every executor that a collection changed
// (as JobChanged).
func (r *Replica) CollectionChanged(collectionID int64) {
	if d := r.current(); d != nil {
		d.CollectionChanged(collectionID)
	}
	r.exec.CollectionChanged(collectionID)
	if r.feed == nil {
		r.notify(store.Change{Kind: store.ChangeCollection, ID: collectionID})
	}
}

// RunNow runs one execution of the job now: this replica's executor claims it (durably, before
// RunNow returns) and takes it.
func (r *Replica) RunNow(ctx context.Context, j *store.Job) error {
	return r.exec.RunNow(ctx, j)
}

// Backfill runs a backfill of the job: this replica's executor stores it (before Backfill
// returns) and takes its first execution; the others are taken, one after the other, by any
// replica.
func (r *Replica) Backfill(ctx context.Context, jobID int64, at []time.Time) error {
	_, err := r.exec.Backfill(ctx, jobID, at)
	return err
}

// Ready reports whether the replica serves: it listens to changes (when it has a notifier),
// and, leading, its schedule is loaded.
func (r *Replica) Ready() bool {
	if r.notifier != nil && !r.listening.Load() {
		return false
	}
	if !r.exec.Ready() {
		return false
	}
	if d := r.current(); d != nil {
		return d.Ready()
	}
	return true
}

// Run takes part in the election and runs the dispatcher while leading, until ctx is done; on
// return the dispatcher has stopped and the leadership is given up.
func (r *Replica) Run(ctx context.Context) error {
	var wg sync.WaitGroup
	defer wg.Wait()
	if r.feed != nil {
		// The feed's cursor is placed before the replica elects or listens: a schedule loaded
		// after that misses nothing committed later.
		placed := make(chan struct{})
		wg.Go(func() { r.feed.run(ctx, placed) })
		select {
		case <-placed:
		case <-ctx.Done():
			return nil
		}
	}
	if r.notifier != nil {
		wg.Go(func() { r.listen(ctx) })
		wg.Go(func() { r.sendChanges(ctx) })
	}
	execDone := make(chan error, 1)
	wg.Go(func() { execDone <- r.exec.Run(ctx) })
	err := r.elect(ctx)
	if ctx.Err() == nil {
		return err
	}
	// Stopping: the executor finishes (or releases) what it holds.
	if eerr := <-execDone; eerr != nil && err == nil {
		err = fmt.Errorf("executor: %w", eerr)
	}
	return err
}

// run is the dispatcher of one term.
type run struct {
	term   int64
	cancel context.CancelFunc
	done   chan struct{}
}

func (r *Replica) elect(ctx context.Context) error {
	var (
		cur      *run
		deadline time.Time // when this replica's lease ends, as far as it knows
		renew    = r.cfg.TTL / 3
		margin   = r.cfg.TTL / 4
	)
	stop := func(why string) {
		if cur == nil {
			return
		}
		r.log.Info("stepping down", "term", cur.term, "reason", why)
		cur.cancel()
		cur = nil
	}
	defer func() {
		term := int64(0)
		var done chan struct{}
		if cur != nil {
			term, done = cur.term, cur.done
		}
		stop("shutdown")
		if done != nil {
			<-done
			ctx := context.WithoutCancel(ctx)
			if err := r.cfg.Store.LeaderResign(ctx, store.LeaderResignParams{Replica: r.cfg.ID, Term: term}); err != nil {
				r.log.Warn("resigning the leadership", "error", err.Error())
			}
		}
	}()
	for {
		if cur != nil {
			select {
			case <-cur.done:
				cur = nil // the scheduler stopped (its store failed): start again if still leading
			default:
			}
		}
		start := r.cfg.Clock.Now()
		params := store.LeaderElectParams{Replica: r.cfg.ID, TTL: r.cfg.TTL}
		if r.cfg.LeaseClock != nil {
			params.Now = r.cfg.LeaseClock.Now()
		}
		// The call's own deadline is the wall clock's: it bounds a round trip to the database.
		ectx, cancel := context.WithTimeout(ctx, renew)
		l, err := r.cfg.Store.LeaderElect(ectx, params)
		cancel()
		switch {
		case ctx.Err() != nil:
			return nil
		case err != nil:
			r.log.Warn("leader election", "error", err.Error())
		case l.Replica == r.cfg.ID:
			deadline = start.Add(r.cfg.TTL)
			if cur != nil && cur.term != l.Term {
				stop("new term")
			}
			if cur == nil {
				r.log.Info("leading", "term", l.Term)
				cur = r.start(ctx, l.Term, nil)
			}
		default:
			stop("another replica leads: " + l.Replica)
		}
		if cur != nil && !r.cfg.Clock.Now().Before(deadline.Add(-margin)) {
			stop("the leadership could not be renewed in time")
		}
		wait := renew
		if cur != nil {
			wait = min(wait, deadline.Add(-margin).Sub(r.cfg.Clock.Now()))
		}
		// The timer first: a test that moves a fake clock as soon as the round is signalled
		// reaches the next round (a timer made after the move would be due one wait later).
		t := r.cfg.Clock.NewTimer(max(wait, time.Millisecond))
		r.TestSignals.Elected.Signal(Elected{At: start, Leading: cur != nil, Wait: max(wait, time.Millisecond)})
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-t.C():
		case <-r.stale:
			t.Stop()
			stop("the store refused this term")
		case <-r.resync:
			t.Stop()
			if cur != nil {
				// Changes may have been missed while not listening: a new dispatcher of the
				// same term loads everything again.
				r.log.Info("reloading the schedule after a gap in notifications", "term", cur.term)
				prev := cur
				prev.cancel()
				cur = r.start(ctx, prev.term, prev.done)
			}
		}
	}
}

// start runs a dispatcher of term once the previous one (prev) has stopped.
func (r *Replica) start(ctx context.Context, term int64, prev chan struct{}) *run {
	dctx, cancel := context.WithCancel(ctx)
	ru := &run{term: term, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(ru.done)
		if prev != nil {
			<-prev
		}
		if dctx.Err() != nil {
			return
		}
		reg := prometheus.NewRegistry()
		c := r.cfg.Dispatch
		if c.Clock == nil {
			c.Clock = r.cfg.Clock
		}
		c.Store, c.Owner, c.Term, c.Registerer = r.cfg.Store, "", term, reg
		if c.Logger == nil {
			c.Logger = r.log
		}
		c.Logger = c.Logger.With("role", "scheduler", "term", term)
		c.OnTakeable = r.takeableNow
		c.OnStaleTerm = func() {
			select {
			case r.stale <- struct{}{}:
			default:
			}
		}
		d, err := dispatch.NewScheduler(c)
		if err != nil {
			r.log.Error("dispatcher", "error", err.Error())
			return
		}
		r.mu.Lock()
		r.cur, r.reg = d, reg
		r.mu.Unlock()
		r.leader.Set(1)
		err = d.Run(dctx)
		r.leader.Set(0)
		r.mu.Lock()
		r.cur = nil
		r.mu.Unlock()
		if err != nil && dctx.Err() == nil {
			r.log.Error("scheduler stopped", "term", term, "error", err.Error())
		}
	}()
	return ru
}
