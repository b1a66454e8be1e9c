package dispatch_test

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/dispatch"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/secret"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store/testdb"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"
)

// benchSetup opens a store with n one-shot Http jobs to sink, all due at due.
func benchSetup(b *testing.B, n int, sink string, due time.Time) (store.Driver, *secret.Box) {
	b.Helper()
	return benchSetupEach(b, n, nil, func(int) string { return sink }, func(int) time.Time { return due })
}

// benchSetupEach opens a store with n Http jobs with recurrence rec (nil: one-shot); job i goes
// to uri(i), first at due(i).
func benchSetupEach(b *testing.B, n int, rec *wire.JobRecurrence, uri func(int) string, dueOf func(int) time.Time) (store.Driver, *secret.Box) {
	b.Helper()
	ctx := b.Context()
	st := testdb.Open(b)
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	box, err := secret.New(key)
	if err != nil {
		b.Fatal(err)
	}
	ck := store.CollectionKey{Subscription: "s", ResourceGroup: "rg", Name: "bench"}
	if _, _, err := st.CollectionPut(ctx, store.CollectionPutParams{Now: time.Now(), Collection: store.Collection{
		Key: ck, Properties: wire.JobCollectionProperties{State: "Enabled"},
	}}); err != nil {
		b.Fatal(err)
	}
	for i := range n {
		due, sink := dueOf(i), uri(i)
		if _, _, err := st.JobPut(ctx, store.JobPutParams{Now: time.Now(), Job: store.Job{
			Key:   store.JobKey{CollectionKey: ck, Name: fmt.Sprintf("job-%07d", i)},
			State: "Enabled",
			Properties: wire.JobProperties{
				StartTime:  due.UTC().Format(time.RFC3339Nano),
				Recurrence: rec,
				Action:     &wire.JobAction{Type: "Http", Request: &wire.HTTPRequest{URI: sink, Method: "POST", Body: "x"}},
			},
			Status: store.JobStatus{NextExecutionTime: due},
		}}); err != nil {
			b.Fatal(err)
		}
	}
	return st, box
}

// newSink is a local HTTP target answering 204 after calling onHit.
func newSink(b *testing.B, onHit func(*http.Request)) *httptest.Server {
	b.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		onHit(r)
		w.WriteHeader(http.StatusNoContent)
	}))
	b.Cleanup(srv.Close)
	return srv
}

// runUntil runs a dispatcher until done is closed and returns how long that took.
func runUntil(b *testing.B, cfg dispatch.Config, done <-chan struct{}) {
	b.Helper()
	d, err := dispatch.New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	runActorUntil(b, d, done)
}

// runActorUntil runs d until done.
func runActorUntil(b *testing.B, d interface{ Run(context.Context) error }, done <-chan struct{}) {
	b.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() { ran <- d.Run(ctx) }()
	select {
	case <-done:
	case <-time.After(5 * time.Minute):
		b.Fatal("timed out")
	}
	cancel()
	if err := <-ran; err != nil {
		b.Fatal(err)
	}
}

// BenchmarkFires measures end-to-end throughput of the hot path: b.N due jobs claimed (batched
// commits), fired at a local HTTP sink over keep-alive, and recorded (history, counters, job
// completed) durably. The figure is fires/s.
func BenchmarkFires(b *testing.B) {
	sink := newSink(b, func(*http.Request) {})
	due := time.Now().Add(-time.Second)
	st, box := benchSetup(b, b.N, sink.URL, due)
	var recorded atomic.Int64
	done := make(chan struct{})
	n := int64(b.N)
	cfg := dispatch.Config{Store: st, Secrets: box, Workers: 64, MisfireThreshold: time.Hour,
		OnRecord: func(r store.AttemptRecord, _ store.AttemptRecordResult) {
			if r.Finished && recorded.Add(1) == n {
				close(done)
			}
		}}
	b.ResetTimer()
	runUntil(b, cfg, done)
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "fires/s")
}

// BenchmarkBurst10k measures how long 10,000 jobs due at the same instant take to start (from
// the due time to the sink receiving the last first attempt) and the p99 lateness among them.
func BenchmarkBurst10k(b *testing.B) {
	const jobs = 10_000
	for range b.N {
		b.StopTimer()
		var (
			mu    sync.Mutex
			times []time.Time
		)
		done := make(chan struct{})
		sink := newSink(b, func(*http.Request) {
			mu.Lock()
			times = append(times, time.Now())
			if len(times) == jobs {
				close(done)
			}
			mu.Unlock()
		})
		due := time.Now().Add(time.Hour)
		st, box := benchSetup(b, jobs, sink.URL, due)
		// Move the due time to just after loading: jobs are stored with next = due; start the
		// dispatcher with a clock offset so that "now" reaches due 2 s after Run starts.
		offset := time.Until(due) - 2*time.Second
		clk := offsetClock{offset: offset}
		cfg := dispatch.Config{Store: st, Secrets: box, Clock: clk, Workers: 256, MisfireThreshold: time.Hour}
		b.StartTimer()
		runUntil(b, cfg, done)
		b.StopTimer()
		sort.Slice(times, func(i, j int) bool { return times[i].Before(times[j]) })
		realDue := due.Add(-offset)
		b.ReportMetric(times[len(times)-1].Sub(realDue).Seconds(), "s_to_start_all")
		b.ReportMetric(times[len(times)*99/100].Sub(realDue).Seconds(), "s_p99_lateness")
	}
}

// BenchmarkLateness1000PerSecond fires 5,000 jobs due 1 ms apart (1,000 fires/s for 5 s) and
// reports the lateness (due time to the sink receiving the request) at p50, p99 and max.
func BenchmarkLateness1000PerSecond(b *testing.B) {
	const jobs = 5000
	for range b.N {
		b.StopTimer()
		var (
			mu   sync.Mutex
			late []time.Duration
		)
		done := make(chan struct{})
		var offset time.Duration
		base := time.Now().Add(time.Hour)
		sink := newSink(b, func(r *http.Request) {
			arrived := time.Now()
			var i int
			if _, err := fmt.Sscanf(r.URL.Path, "/%d", &i); err != nil {
				b.Error(err)
			}
			mu.Lock()
			late = append(late, arrived.Sub(base.Add(time.Duration(i)*time.Millisecond).Add(-offset)))
			if len(late) == jobs {
				close(done)
			}
			mu.Unlock()
		})
		st, box := benchSetupEach(b, jobs, nil, func(i int) string { return fmt.Sprintf("%s/%d", sink.URL, i) },
			func(i int) time.Time { return base.Add(time.Duration(i) * time.Millisecond) })
		offset = time.Until(base) - 2*time.Second
		cfg := dispatch.Config{Store: st, Secrets: box, Clock: offsetClock{offset: offset}, Workers: 256, MisfireThreshold: time.Hour}
		b.StartTimer()
		runUntil(b, cfg, done)
		b.StopTimer()
		sort.Slice(late, func(i, j int) bool { return late[i] < late[j] })
		b.ReportMetric(late[len(late)/2].Seconds()*1000, "ms_p50_lateness")
		b.ReportMetric(late[len(late)*99/100].Seconds()*1000, "ms_p99_lateness")
		b.ReportMetric(late[len(late)-1].Seconds()*1000, "ms_max_lateness")
	}
}

// BenchmarkLoad100k measures the start of a daemon holding 100,000 enabled hourly jobs (60
// distinct schedules: job i starts at minute i mod 60), each with its own action: how long until
// Ready (the schedule read in pages and compiled into the heap), the heap memory the schedule
// takes per job, and what the load allocates per job (count and bytes: figures that do not
// depend on the machine's load).
func BenchmarkLoad100k(b *testing.B) {
	const jobs = 100_000
	due := time.Now().Add(24 * time.Hour)
	hourly := &wire.JobRecurrence{Frequency: "Hour", Interval: intp(1)}
	st, box := benchSetupEach(b, jobs, hourly, func(i int) string { return fmt.Sprintf("http://127.0.0.1:1/%d", i) },
		func(i int) time.Time { return due.Add(time.Duration(i%60) * time.Minute) })
	benchLoad(b, st, box, jobs)
}

// BenchmarkLoad100kShared is BenchmarkLoad100k in the shape schedbench --every 10m creates: every
// job does the same thing (one action), recurs every 10 minutes and starts on a whole second
// (600 distinct schedules: job i at second i mod 600).
func BenchmarkLoad100kShared(b *testing.B) {
	const jobs = 100_000
	base := time.Now().Add(24 * time.Hour).Truncate(10 * time.Minute)
	every := &wire.JobRecurrence{Frequency: "Minute", Interval: intp(10)}
	st, box := benchSetupEach(b, jobs, every, func(int) string { return "http://127.0.0.1:1/fire" },
		func(i int) time.Time { return base.Add(time.Duration(i%600) * time.Second) })
	benchLoad(b, st, box, jobs)
}

// benchLoad starts a dispatcher on st (holding jobs jobs) until Ready, b.N times.
func benchLoad(b *testing.B, st store.Driver, box *secret.Box, jobs int) {
	b.Helper()
	b.ResetTimer()
	b.StopTimer()
	for range b.N {
		runtime.GC()
		var before, loaded, after runtime.MemStats
		runtime.ReadMemStats(&before)
		d, err := dispatch.New(dispatch.Config{Store: st, Secrets: box})
		if err != nil {
			b.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		ran := make(chan error, 1)
		cpu0 := processCPU(b)
		start := time.Now()
		b.StartTimer()
		go func() { ran <- d.Run(ctx) }()
		for !d.Ready() {
			time.Sleep(time.Millisecond)
		}
		b.StopTimer()
		took := time.Since(start)
		cpu := processCPU(b) - cpu0
		runtime.ReadMemStats(&loaded)
		runtime.GC()
		runtime.ReadMemStats(&after)
		cancel()
		if err := <-ran; err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(took.Seconds(), "s_to_ready")
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/float64(jobs), "heap_bytes/job")
		b.ReportMetric(float64(loaded.Mallocs-before.Mallocs)/float64(jobs), "load_allocs/job")
		b.ReportMetric(float64(loaded.TotalAlloc-before.TotalAlloc)/float64(jobs), "load_B/job")
		b.ReportMetric(float64(cpu.Microseconds())/float64(jobs), "cpu_us/job")
	}
}

// processCPU is the CPU time (user and system) this process has used so far.
func processCPU(b *testing.B) time.Duration {
	b.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// claimClock is the test's store for BenchmarkClaimLoop: it times the claims from the first
// batch sent to the one that made want claims.
type claimClock struct {
	store.Driver
	want        int64
	claimed     atomic.Int64
	first, last atomic.Int64 // Unix ns
	done        chan struct{}
}

func (c *claimClock) ExecutionClaimMany(ctx context.Context, p store.ExecutionClaimManyParams) ([]store.ExecutionClaimResult, error) {
	c.first.CompareAndSwap(0, time.Now().UnixNano())
	res, err := c.Driver.ExecutionClaimMany(ctx, p)
	if err != nil {
		return res, err
	}
	n := int64(0)
	for _, r := range res {
		if r.Err == nil {
			n++
		}
	}
	if now := c.claimed.Add(n); now >= c.want && now-n < c.want {
		c.last.Store(time.Now().UnixNano())
		close(c.done)
	}
	return res, err
}

// BenchmarkClaimLoop measures the leader's claim loop alone: a scheduler (dispatch.NewScheduler,
// its claims fenced by its term, as the leader of replicas makes them; it runs no attempt) claims
// 20,000 occurrences due at one instant, ahead of it (Lookahead) as it claims every burst, from
// its first claim batch to its last. Run it on either driver (SCHEDULER_TEST_STORE) to compare
// them; the figure is claims/s. (A burst of 5,000 lasted under 100 ms: one pause of the machine
// moved a run's figure by a third.)
func BenchmarkClaimLoop(b *testing.B) {
	const jobs = 20000
	for range b.N {
		b.StopTimer()
		due := time.Now().Add(time.Hour)
		st, box := benchSetup(b, jobs, "http://127.0.0.1:1/hook", due)
		l, err := st.LeaderElect(b.Context(), store.LeaderElectParams{Replica: "bench", TTL: 2 * time.Hour})
		if err != nil {
			b.Fatal(err)
		}
		warm(b, st, l.Term)
		c := &claimClock{Driver: st, want: jobs, done: make(chan struct{})}
		// The clock reaches due less Lookahead a second after Run starts.
		offset := time.Until(due) - dispatch.DefaultLookahead - time.Second
		s, err := dispatch.NewScheduler(dispatch.Config{Store: c, Secrets: box, Term: l.Term, MisfireThreshold: time.Hour,
			Clock: offsetClock{offset: offset}})
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		runActorUntil(b, s, c.done)
		b.StopTimer()
		if got := c.claimed.Load(); got != jobs { // Run has returned: every commit is in
			b.Fatalf("%d occurrences claimed of %d one-shot jobs", got, jobs)
		}
		b.ReportMetric(jobs/time.Duration(c.last.Load()-c.first.Load()).Seconds(), "claims/s")
	}
}

// warm has the store open the connections and prepare the claim statement the leader's claim
// loop uses (claimsWarm claims at once, of absent jobs: nothing is claimed), as a leader that
// has been running has them: a connection's first claim also sets it up (a new PostgreSQL
// backend, the statement parsed and planned), which took up to 200 ms at the start of a burst.
func warm(b *testing.B, st store.Driver, term int64) {
	b.Helper()
	var wg sync.WaitGroup
	for i := range claimsWarm {
		wg.Go(func() {
			res, err := st.ExecutionClaimMany(b.Context(), store.ExecutionClaimManyParams{Now: time.Now(), Term: term,
				Claims: []store.ExecutionClaim{{Execution: store.Execution{JobID: -1 - int64(i), Tag: "warm"}, ExpectVersion: 1}}})
			if err != nil || !errors.Is(res[0].Err, store.ErrNotFound) {
				b.Errorf("warm-up claim: %v %+v", err, res)
			}
		})
	}
	wg.Wait()
}

// claimsWarm is how many claims warm makes at once: the leader's claim batches in flight and
// more.
const claimsWarm = 8
