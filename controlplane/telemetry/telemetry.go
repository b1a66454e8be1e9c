// Package telemetry turns the dispatcher's finished executions (dispatch.Config.OnOutcome) and
// the store's job counts into what operators alert on and chart: per-job outcome counters and
// last-success times, a gauge of jobs by state, a counter of coalesced occurrences, and
// executions per minute by outcome over the last 24 hours for the dashboard's charts. Handler
// serves them on /metrics (exposition.go). Tracing (otlp.go) exports the spans of executions
// and attempts over OTLP/HTTP; its breaker (breaker.go) stops recording them, counted, while
// the collector fails or hangs.
//
// Decisions:
//
//   - Per-job series carry the labels subscription, collection and job (names as stored); a
//     job has two from its first finished execution on this process, its completed executions
//     and its last success, and a failed or faulted counter once such an execution happened
//     (the alerting rules catch a series that appears at 1). Config.PerJob false turns them off
//     (the daemon's --metrics-per-job=false).
//   - The per-job series are kept as one row of values per job (integer counts, the last
//     success, its names; about 70 bytes of heap with its index: perjob.go), not as
//     client_golang vector children (those cost about 2.9 kB of heap and 72 allocations for
//     each job's first execution), and they are not in the daemon's registry:
//     Handler writes them into /metrics straight from the counts in the text format, copying
//     one chunk of rows at a time, and only there (a Gather of the registry, as the
//     dashboard's sampling does, stays small).
//   - A job's last success is known from its successes on this process; when a job's first
//     execution seen by this process did not succeed, its last success is read from the store's
//     history (the newest completed main action), else its creation time, so that "has not
//     succeeded in 26 h" holds after a restart too. The lookups run in Run, never on the
//     dispatcher's writer.
//   - Series of a deleted job stay until the daemon restarts.
//   - Jobs by state are counted by the store (one GROUP BY) at most once per StateCacheTTL;
//     a count that fails or outlasts Config.CountTimeout never fails a scrape: the last good
//     count is served with its age (statecount.go).
//   - The per-minute counts are the executions this process finished, kept for 24 hours in
//     memory (a restart starts them over), per subscription so that a tenant sees its own.
package telemetry

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/dispatch"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/queue"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/arm"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/clock"
)

// Metric names (the alerting rules and the Grafana dashboard in deploy/ use them).
const (
	MetricJobExecutions  = "scheduler_job_executions_total"
	MetricJobLastSuccess = "scheduler_job_last_success_timestamp_seconds"
	MetricJobs           = "scheduler_jobs"
	MetricMissed         = "scheduler_occurrences_coalesced_total"
	// MetricJobsCountAge and MetricJobsCountFailures say how stale MetricJobs is.
	MetricJobsCountAge      = "scheduler_jobs_count_age_seconds"
	MetricJobsCountFailures = "scheduler_jobs_count_failures_total"
)

// StateCacheTTL is how long a count of jobs by state is reused (scrapers and the dashboard
// asking at once share one count). A failed count is not retried before it either.
const StateCacheTTL = time.Second

// DefaultCountTimeout bounds one count of jobs by state when Config.CountTimeout is 0.
const DefaultCountTimeout = 5 * time.Second

// seedQueue bounds the last-success lookups waiting for Run; more are dropped (and logged).
const seedQueue = 4096

// Minutes is how many minutes of executions are kept for the charts (24 hours).
const Minutes = 24 * 60

// Config is what a Collector needs.
type Config struct {
	Store  store.Driver
	Clock  clock.Clock
	Logger *slog.Logger
	// PerJob turns the per-job series on (subscription, collection and job labels).
	PerJob bool
	// CountTimeout bounds one count of jobs by state (DefaultCountTimeout when 0).
	CountTimeout time.Duration
}

// Collector collects the outcomes. Observe is its dispatch.Config.OnOutcome.
type Collector struct {
	store  store.Driver
	clock  clock.Clock
	log    *slog.Logger
	perJob bool

	jobExecDesc     *prometheus.Desc
	lastSuccessDesc *prometheus.Desc
	missed          prometheus.Counter
	jobsDesc        *prometheus.Desc
	perJobReg       *prometheus.Registry // the per-job series alone (PerJobGatherer)
	writers         sync.Pool            // *scrapeWriters of the text scrapes (exposition.go)

	mu      sync.Mutex
	series  seriesTable                  // jobs with series (PerJob)
	minute  map[string]*ring             // folded subscription → its executions per minute
	seeds   *queue.Bounded[store.JobKey] // last-success lookups waiting for Run
	started time.Time

	countTimeout  time.Duration
	countAgeDesc  *prometheus.Desc
	countFailures prometheus.Counter
	stateMu       sync.Mutex
	stateTried    time.Time      // the last count asked of the store, good or not
	stateAt       time.Time      // the last good count
	stateVal      map[string]int // nil until a count succeeded
}

// New returns a Collector.
func New(cfg Config) (*Collector, error) {
	if cfg.Store == nil {
		return nil, errors.New("telemetry: Store is required")
	}
	c := &Collector{
		store: cfg.Store, clock: cfg.Clock, log: cfg.Logger, perJob: cfg.PerJob,
		series: newSeriesTable(), minute: map[string]*ring{},
		seeds: queue.New[store.JobKey](seedQueue), countTimeout: cfg.CountTimeout,
	}
	if c.countTimeout <= 0 {
		c.countTimeout = DefaultCountTimeout
	}
	if c.clock == nil {
		c.clock = clock.Real{}
	}
	c.started = c.clock.Now()
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	c.jobExecDesc = prometheus.NewDesc(MetricJobExecutions, helpJobExecutions,
		[]string{"subscription", "collection", "job", "outcome"}, nil)
	c.lastSuccessDesc = prometheus.NewDesc(MetricJobLastSuccess, helpJobLastSuccess,
		[]string{"subscription", "collection", "job"}, nil)
	c.perJobReg = prometheus.NewRegistry()
	if c.perJob {
		if err := c.perJobReg.Register(perJobCollector{c}); err != nil {
			return nil, fmt.Errorf("telemetry: the per-job series: %w", err)
		}
	}
	c.missed = prometheus.NewCounter(prometheus.CounterOpts{
		Name: MetricMissed,
		Help: "Occurrences missed by more than the misfire threshold and coalesced into a later execution (counted when that execution finishes).",
	})
	c.jobsDesc = prometheus.NewDesc(MetricJobs, "Jobs in the store by state (Enabled, Disabled, Completed, Faulted).", []string{"state"}, nil)
	c.countAgeDesc = prometheus.NewDesc(MetricJobsCountAge, "Seconds since the count of jobs by state in "+MetricJobs+" was made (it is served stale while counting fails).", nil, nil)
	c.countFailures = prometheus.NewCounter(prometheus.CounterOpts{
		Name: MetricJobsCountFailures,
		Help: "Counts of jobs by state that failed or timed out (" + MetricJobs + " keeps the last good count, or is absent before one).",
	})
	return c, nil
}

// Register registers the collector's daemon-wide metrics. The per-job series are not among
// them: Handler serves them, PerJobGatherer gathers them.
func (c *Collector) Register(reg prometheus.Registerer) error {
	for _, x := range []prometheus.Collector{c.missed, stateCollector{c}} {
		if err := reg.Register(x); err != nil {
			return fmt.Errorf("telemetry: registering metrics: %w", err)
		}
	}
	return nil
}

// Observe records a finished execution. It does not block (dispatch.Config.OnOutcome).
func (c *Collector) Observe(o dispatch.Outcome) {
	if o.Missed > 0 {
		c.missed.Add(float64(o.Missed))
	}
	c.mu.Lock()
	r := c.minute[arm.Fold(o.Job.Subscription)]
	if r == nil {
		r = &ring{}
		c.minute[arm.Fold(o.Job.Subscription)] = r
	}
	r.add(o.End, o.Outcome)
	if !c.perJob {
		c.mu.Unlock()
		return
	}
	// Under mu: Run's check-then-set of a looked-up success must not overwrite this one.
	first := c.observeJob(o)
	c.mu.Unlock()
	if first && o.Outcome != dispatch.OutcomeCompleted {
		if !c.seeds.TryPush(o.Job) {
			c.log.Warn("telemetry: too many last-success lookups waiting; this job's last success stays unknown until it succeeds",
				"subscription", o.Job.Subscription, "collection", o.Job.CollectionKey.Name, "job", o.Job.Name)
		}
	}
}

// Run looks up the last success of jobs whose first execution seen here did not succeed,
// until ctx ends.
func (c *Collector) Run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-c.seeds.Ready():
			for k, ok := c.seeds.Pop(); ok && ctx.Err() == nil; k, ok = c.seeds.Pop() {
				c.lookUp(ctx, k)
			}
		}
	}
}

// lookUp sets the last success of k from the store.
func (c *Collector) lookUp(ctx context.Context, k store.JobKey) {
	at, err := c.lastSuccessOf(ctx, k)
	if err != nil {
		if !errors.Is(err, store.ErrNotFound) && ctx.Err() == nil {
			c.log.Warn("telemetry: reading a job's last success", "job", k.Name, "error", err.Error())
		}
		return
	}
	c.mu.Lock()
	c.seedLastSuccess(k, at)
	c.mu.Unlock()
}

// historyScan is how many completed history entries are read to find a job's last success.
const historyScan = 100

// lastSuccessOf returns the end of the job's newest completed main action in the store's
// history, else the job's creation time.
func (c *Collector) lastSuccessOf(ctx context.Context, k store.JobKey) (time.Time, error) {
	hs, err := c.store.HistoryList(ctx, store.HistoryListParams{Job: k, Status: store.HistoryCompleted, Limit: historyScan})
	if err != nil {
		return time.Time{}, fmt.Errorf("reading history: %w", err)
	}
	for _, h := range hs {
		if h.ActionName == store.ActionMain {
			return h.EndTime, nil
		}
	}
	j, err := c.store.JobGet(ctx, store.JobGetParams{Key: k})
	if err != nil {
		return time.Time{}, fmt.Errorf("reading the job: %w", err)
	}
	return j.CreatedAt, nil
}

// Started is when the collector started counting (the per-minute counts begin there).
func (c *Collector) Started() time.Time { return c.started }

// PerMinute is the executions finished in one minute, by outcome.
type PerMinute struct {
	Start                      time.Time // the minute's start
	Completed, Failed, Faulted int
}

// ExecutionsPerMinute returns the last n minutes (n ≤ Minutes) up to now, oldest first: of one
// subscription, or of every subscription when subscription is "" (the admin's view).
func (c *Collector) ExecutionsPerMinute(subscription string, now time.Time, n int) []PerMinute {
	n = min(max(n, 1), Minutes)
	end := now.Unix() / 60
	out := make([]PerMinute, n)
	for i := range out {
		out[i].Start = time.Unix((end-int64(n-1-i))*60, 0).In(now.Location())
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	rings := make([]*ring, 0, len(c.minute))
	if subscription == "" {
		for _, r := range c.minute {
			rings = append(rings, r)
		}
	} else if r := c.minute[arm.Fold(subscription)]; r != nil {
		rings = append(rings, r)
	}
	for _, r := range rings {
		for i := range out {
			m := end - int64(n-1-i)
			b := &r.b[m%Minutes]
			if b.minute != m {
				continue
			}
			out[i].Completed += b.n[0]
			out[i].Failed += b.n[1]
			out[i].Faulted += b.n[2]
		}
	}
	return out
}

// ring holds the executions of the last Minutes minutes, by outcome.
type ring struct {
	b [Minutes]struct {
		minute int64 // unix minute the counts are of
		n      [3]int
	}
}

func (r *ring) add(at time.Time, outcome string) {
	m := at.Unix() / 60
	b := &r.b[m%Minutes]
	switch {
	case m < b.minute:
		return // more than 24 hours older than what the slot holds
	case m > b.minute:
		b.minute, b.n = m, [3]int{}
	}
	switch outcome {
	case dispatch.OutcomeCompleted:
		b.n[0]++
	case dispatch.OutcomeFailed:
		b.n[1]++
	default:
		b.n[2]++
	}
}
