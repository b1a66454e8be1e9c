// Command schedbench is the daemon's load tool. It starts a schedulerd child process on a fresh
// data directory (embedded SQLite) and an in-process HTTP sink, creates jobs through the API with
// concurrent clients, lets them fire for a number of minutes, and prints what it measured:
// job PUTs per second, fires per second, lateness (sink receive time minus the scheduled time the
// daemon sends in x-ms-scheduler-expected-execution-time), how long a burst of jobs due in the same
// second took to start, whether history and status were committed, and the daemon's peak RSS.
//
//	schedbench --schedulerd bin/schedulerd --jobs 100000 --spread 10s --cycles 2
//
// Every job recurs every minute; job i's startTime second is i mod spread, so --spread 10s puts
// jobs/10 fires in each of the first ten seconds of every minute (100,000 jobs: 10,000 fires/s),
// --spread 60s spreads them evenly (60,000 jobs: 1,000 fires/s) and --spread 1s makes them all due
// in the same second. --every D makes every job recur every D instead (whole minutes), their due
// times spread over D unless --spread says otherwise, so large counts fire at a realistic rate
// (1,000,000 jobs --every 10m: 1,667 fires/s); it also restarts the daemon after the PUTs and
// reports the start-up time and the memory per job.
//
// Every run first measures the loopback ceiling on the same machine (--calibrate-for): plain HTTP
// POSTs to the same sink from as many connections as the daemon opens to it, and states its
// figures against it. --calibrate does only that. The daemon's CPU time and allocations per PUT
// and per fire (from /proc and its /metrics) do not depend on wall time, and so compare across
// runs on a busy machine.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"
)

type options struct {
	schedulerd string
	jobs       int
	spread     time.Duration
	cycles     int
	putWorkers int
	perColl    int
	daemonArgs string
	keep       bool
	store      string // postgres://...: the replicas' database (a fresh schema in it); "": SQLite
	replicas   int
	action     string
	// jobAction, when set, is every job's action (a message action); nil: an Http request to the sink.
	jobAction func() *wire.JobAction
	signing   bool   // every Http job signs its requests (Standard Webhooks)
	otlp      string // "": no export; "ok": an in-process OTLP/HTTP collector; "hang": one that never answers
	compare   string // features of the "on" phases of a comparison (see runCompare); "": one run
	pairs     int    // off/on pairs of a comparison

	every          time.Duration // 0: every minute
	restart        bool          // restart the daemon after the PUTs, timing it until /readyz
	calibrateOnly  bool
	calibrateFor   time.Duration // 0: no calibration
	calibrateConns int           // 0: the connections the daemons open to the sink
	seedHistory    int           // history entries given to every job after the PUTs (0: none)
	seedExecutions int           // executions the seed moves every job's count on by (at least seedHistory)
	seedBody       int           // bytes of response body in every seeded entry's message
}

// period is how often every job recurs.
func (o options) period() time.Duration {
	if o.every > 0 {
		return o.every
	}
	return time.Minute
}

func main() {
	var o options
	flag.StringVar(&o.schedulerd, "schedulerd", "bin/schedulerd", "path of the schedulerd binary to start")
	flag.IntVar(&o.jobs, "jobs", 10000, "jobs to create")
	flag.DurationVar(&o.spread, "spread", 10*time.Second, "spread of the jobs' due times within each minute (1s..60s)")
	flag.IntVar(&o.cycles, "cycles", 2, "minutes to observe after every job is created (0: only create the jobs, report what their PUTs cost and, with --restart (the default with --every), the restart and the memory of the schedule after it)")
	flag.IntVar(&o.putWorkers, "put-workers", 32, "concurrent API clients creating jobs")
	flag.IntVar(&o.perColl, "jobs-per-collection", 1000, "jobs per collection (P20Premium allows 1000)")
	flag.StringVar(&o.daemonArgs, "daemon-args", "", "extra arguments for schedulerd serve, space separated")
	flag.BoolVar(&o.keep, "keep", false, "keep the data directory")
	flag.StringVar(&o.store, "store", "", "postgres://... : run the daemons on this PostgreSQL database, in a fresh schema dropped at the end (empty: SQLite)")
	flag.IntVar(&o.replicas, "replicas", 1, "daemons sharing the --store database; jobs are created through each in turn")
	flag.StringVar(&o.action, "action", "http", "what every job does: http (a request to the in-process sink), storagequeue (a message on a queue of an Azurite started by tools/azurite.sh) or servicebusqueue (a message on a queue of the machine's RabbitMQ, AMQP 1.0); the sink reads the queue back")
	flag.DurationVar(&o.every, "every", 0, "every job recurs every D (whole minutes; default 1m), their due times spread over D unless --spread is set; restarts the daemon after the PUTs unless --restart=false")
	flag.BoolVar(&o.restart, "restart", false, "restart the daemon after the PUTs and report its start-up time until /readyz (default with --every; not with --replicas)")
	flag.BoolVar(&o.calibrateOnly, "calibrate", false, "only measure the loopback ceiling (plain HTTP POSTs to the sink) and exit")
	flag.DurationVar(&o.calibrateFor, "calibrate-for", 3*time.Second, "how long to measure the loopback ceiling before each run (0: not measured)")
	flag.IntVar(&o.calibrateConns, "calibrate-conns", 0, "connections for the ceiling (0: as many as the daemons open to one target: --workers capped by --target-concurrency, times --replicas)")
	flag.BoolVar(&o.signing, "signing", false, "every Http job signs its requests (action.request.signing)")
	flag.StringVar(&o.compare, "compare", "", "compare runs without and with features, comma separated: signing, otlp (a collector that accepts the spans), otlp-hang (one that never answers); runs --pairs off/on pairs back to back, alternating, each on a fresh daemon, and prints their ratios")
	flag.IntVar(&o.pairs, "pairs", 2, "off/on pairs of a --compare run")
	flag.StringVar(&o.otlp, "otlp", "", "export the attempts' spans (--otlp-endpoint) to an in-process collector: ok (it accepts them) or hang (it never answers); empty: no export")
	flag.IntVar(&o.seedHistory, "seed-history", 0, "after the PUTs, stop the daemon and give every job N executions of history through the store driver (as the record path writes them, one cycle apart), then start it again and report the store's size per entry and per job: 1000 puts every job at the retention bound (one daemon)")
	flag.IntVar(&o.seedExecutions, "seed-executions", 0, "with --seed-history N: move every job's execution count on by M (at least N), the N entries being the oldest of M executions: --seed-history 10 --seed-executions 1000 puts every job at the retention bound with 10 entries stored, so that each of its next 10 fires pushes one out")
	flag.IntVar(&o.seedBody, "seed-body", 0, "with --seed-history: bytes of response body in every seeded entry's message (the sink answers with none; the record path keeps up to 2048)")
	flag.Parse()
	set := map[string]bool{}
	flag.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if o.every > 0 && !set["spread"] {
		o.spread = o.every
	}
	if o.every > 0 && !set["restart"] && o.replicas == 1 {
		o.restart = true
	}
	// The sink shares the machine with the daemon it measures: its own garbage collector should
	// not run in every burst of deliveries (its live heap is small, so at the default it would),
	// adding its pauses to the lateness it reports.
	debug.SetGCPercent(400)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := 0
	if err := run(ctx, o, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "schedbench:", err)
		code = 1
	}
	stop()
	os.Exit(code)
}

func run(ctx context.Context, o options, out io.Writer) error {
	if o.every < 0 || o.every%time.Minute != 0 {
		return fmt.Errorf("--every %s: want whole minutes", o.every)
	}
	if o.spread < time.Second || o.spread > o.period() || o.spread%time.Second != 0 {
		return fmt.Errorf("--spread %s: want whole seconds, 1s..%s", o.spread, o.period())
	}
	if (o.restart || o.seedHistory > 0) && o.replicas > 1 {
		return errors.New("--restart and --seed-history: one daemon only (not with --replicas)")
	}
	if o.seedHistory < 0 || o.seedExecutions < 0 || o.seedBody < 0 {
		return errors.New("--seed-history, --seed-executions and --seed-body must not be negative")
	}
	if o.calibrateFor < 0 || o.calibrateConns < 0 || (o.calibrateOnly && o.calibrateFor == 0) {
		return errors.New("--calibrate-for and --calibrate-conns must not be negative, and --calibrate needs a --calibrate-for")
	}
	if o.replicas < 1 || (o.replicas > 1 && o.store == "") {
		return errors.New("--replicas: want 1, or more with a --store postgres:// URL")
	}
	if o.jobs < 1 || o.cycles < 0 || o.putWorkers < 1 || o.perColl < 1 {
		return errors.New("--jobs, --put-workers and --jobs-per-collection must be positive, --cycles not negative")
	}
	if o.compare != "" {
		return runCompare(ctx, o, out)
	}
	s, err := startSink(o.jobs * (o.cycles + 2))
	if err != nil {
		return err
	}
	defer s.close()
	cal, err := measureCeiling(ctx, o, s, out)
	if err != nil || o.calibrateOnly {
		return err
	}
	_, err = runPhase(ctx, o, s, cal, out)
	return err
}

// phaseFigures are what one run measured, for --compare's table.
type phaseFigures struct {
	fires         int           // delivered in the observed cycles
	firesPerSec   float64       // the slowest cycle's
	p99           time.Duration // the worst cycle's
	cpuPerFire    time.Duration // daemon CPU over the observed cycles per fire
	allocsPerFire float64
	peakRSS       string
}

// runPhase starts a daemon (and the broker and collector the options ask for) and measures one
// run against the sink s: PUTs, then the observed cycles.
func runPhase(ctx context.Context, o options, s *sink, cal calibration, out io.Writer) (phaseFigures, error) {
	var fig phaseFigures
	b, err := startBroker(ctx, o.action, s)
	if err != nil {
		return fig, err
	}
	if b != nil {
		defer b.stop()
		o.daemonArgs = strings.TrimSpace(o.daemonArgs + " " + strings.Join(b.daemonArgs, " "))
		o.jobAction = b.action
		fmt.Fprintf(out, "action %s: daemon %s\n", o.action, strings.Join(b.daemonArgs, " "))
	}
	if o.otlp != "" {
		url, stopCollector, err := startCollector(o.otlp)
		if err != nil {
			return fig, err
		}
		defer stopCollector()
		o.daemonArgs = strings.TrimSpace(o.daemonArgs + " --otlp-endpoint " + url)
		fmt.Fprintf(out, "OTLP collector (%s): %s\n", o.otlp, url)
	}
	d, err := startDaemon(ctx, o)
	if err != nil {
		return fig, err
	}
	defer d.stop(o.keep)
	fmt.Fprintf(out, "schedulerd %s (pid %d, data %s), sink %s\n", d.endpoint, d.pid(), d.dataDir, s.url)
	for _, p := range d.peers {
		fmt.Fprintf(out, "replica %s (pid %d)\n", p.endpoint, p.pid())
	}
	if o.store != "" {
		fmt.Fprintf(out, "store: PostgreSQL, schema %s, %d replica(s)\n", d.schema, o.replicas)
	}
	fmt.Fprintf(out, "load average at start: %s\n", loadAverage())

	before, err := markCPU(ctx, d, false)
	if err != nil {
		return fig, err
	}
	created, putElapsed, err := createJobs(ctx, o, d, s.url)
	if err != nil {
		return fig, err
	}
	fmt.Fprintf(out, "created %d jobs in %d collections in %s: %.0f PUT/s (%d concurrent clients)\n",
		created, (created+o.perColl-1)/o.perColl, putElapsed.Round(time.Millisecond),
		float64(created)/putElapsed.Seconds(), o.putWorkers)
	afterPuts, err := markCPU(ctx, d, true)
	if err != nil {
		return fig, err
	}
	fmt.Fprintf(out, "CPU for the PUTs (with any fires due meanwhile): %s\n", before.since(afterPuts, created, "PUT"))
	fmt.Fprintf(out, "memory after the PUTs: %s\n", memoryPerJob(d, created))
	if o.seedHistory > 0 {
		if err := seedHistory(ctx, o, d, out); err != nil {
			return fig, err
		}
	}
	if o.cycles == 0 && !o.restart {
		return fig, nil
	}
	if o.restart {
		took, err := d.restart(ctx)
		if err != nil {
			return fig, err
		}
		fmt.Fprintf(out, "restart with %d jobs: ready (/readyz 200) %s after the start (%s per job); memory: %s; load average %s\n",
			created, took.Round(time.Millisecond), (took / time.Duration(created)).Round(10*time.Nanosecond), memoryPerJob(d, created), loadAverage())
	}
	if o.cycles == 0 {
		return fig, nil
	}

	// Observe whole cycles that start after every job exists.
	period := o.period()
	first := time.Now().Truncate(period).Add(period)
	last := first.Add(time.Duration(o.cycles) * period)
	fmt.Fprintf(out, "observing %d cycle(s): occurrences due %s .. %s\n", o.cycles,
		first.UTC().Format(time.RFC3339), last.UTC().Format(time.RFC3339))
	deadline := last.Add(o.spread).Add(30 * time.Second)
	want := created * o.cycles
	var cyclesStart cpuMark
	for time.Now().Before(first) {
		select {
		case <-ctx.Done():
			return fig, ctx.Err()
		case <-time.After(time.Until(first)):
		}
	}
	if cyclesStart, err = markCPU(ctx, d, false); err != nil {
		return fig, err
	}
	sizeStart, err := storeSize(ctx, d)
	if err != nil {
		return fig, err
	}
	for time.Now().Before(deadline) {
		if s.countBetween(first, last) >= want && time.Now().After(last.Add(-period).Add(o.spread)) {
			break
		}
		select {
		case <-ctx.Done():
			return fig, ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
	for c := 0; c < o.cycles; c++ {
		from := first.Add(time.Duration(c) * period)
		st := s.stats(from, from.Add(period))
		fmt.Fprintf(out, "cycle %d: %d/%d fires; %s\n", c+1, st.count, created, st.describe(cal))
		fmt.Fprintf(out, "cycle %d: slowest instants (due, deliveries, last delivery): %s\n", c+1, st.describeWorst())
		if c == 0 || st.deliveriesPerSecondInTheBurst < fig.firesPerSec {
			fig.firesPerSec = st.deliveriesPerSecondInTheBurst
		}
		fig.p99 = max(fig.p99, st.p99)
	}
	cyclesEnd, err := markCPU(ctx, d, true)
	if err != nil {
		return fig, err
	}
	fig.fires = s.countBetween(first, last)
	fig.cpuPerFire, fig.allocsPerFire = cyclesStart.perUnit(cyclesEnd, fig.fires)
	fmt.Fprintf(out, "CPU over the observed cycles: %s\n", cyclesStart.since(cyclesEnd, fig.fires, "fire"))
	sizeEnd, err := storeSize(ctx, d)
	if err != nil {
		return fig, err
	}
	fmt.Fprintf(out, "store over the observed cycles: %s -> %s\n", sizeStart, sizeEnd)
	fmt.Fprintf(out, "load average at the end: %s\n", loadAverage())
	if got := s.countBetween(first, last); got < want {
		return fig, fmt.Errorf("the sink received %d of the %d fires due in the observed cycles", got, want)
	}
	if err := checkDurable(ctx, d, o, created); err != nil {
		return fig, err
	}
	fmt.Fprintf(out, "history and status committed: checked %d jobs, each with executionCount >= %d\n", min(created, 20), o.cycles)
	fig.peakRSS = d.peakRSS()
	fmt.Fprintf(out, "daemon peak RSS: %s; memory at the end: %s\n", fig.peakRSS, memoryPerJob(d, created))
	for _, p := range d.peers {
		fmt.Fprintf(out, "replica peak RSS: %s\n", p.peakRSS())
	}
	return fig, nil
}

// measureCeiling measures and prints the loopback ceiling (a zero calibration with
// --calibrate-for 0).
func measureCeiling(ctx context.Context, o options, s *sink, out io.Writer) (calibration, error) {
	if o.calibrateFor == 0 {
		return calibration{}, nil
	}
	conns := o.calibrateConns
	if conns == 0 {
		per, err := daemonConns(o.daemonArgs)
		if err != nil {
			return calibration{}, err
		}
		conns = per * o.replicas
	}
	fmt.Fprintf(out, "load average before the calibration: %s\n", loadAverage())
	c, err := calibrate(ctx, s, conns, o.calibrateFor)
	if err != nil {
		return c, err
	}
	fmt.Fprintf(out, "%s\n", c)
	return c, nil
}

// memoryPerJob states the daemon's resident set now and per job.
func memoryPerJob(d *daemon, jobs int) string {
	rss, err := d.rss()
	if err != nil {
		return "unknown (" + err.Error() + ")"
	}
	return fmt.Sprintf("RSS %.1f MB, %.0f B per job", float64(rss)/1e6, float64(rss)/float64(jobs))
}
