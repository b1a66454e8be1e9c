package telemetry

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/trace"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/action"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/telemetry/otlptest"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/dispatch"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store/sqlite"
)

// BenchmarkObserve measures Observe with the per-job series on: "new-job" observes each of
// 100,000 distinct jobs once (a fresh collector every 100,000 operations) and reports the heap
// each job keeps after a scrape; "seen-job" observes one job that already has its series.
func BenchmarkObserve(b *testing.B) {
	const jobs = 100_000
	st, err := sqlite.Open(b.Context(), filepath.Join(b.TempDir(), "db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = st.Close() })
	newCollector := func(b *testing.B) (*Collector, *prometheus.Registry) {
		c, err := New(Config{Store: st, PerJob: true})
		if err != nil {
			b.Fatal(err)
		}
		reg := prometheus.NewRegistry()
		if err := c.Register(reg); err != nil {
			b.Fatal(err)
		}
		return c, reg
	}
	keys := make([]store.JobKey, jobs)
	for i := range keys {
		keys[i] = store.JobKey{CollectionKey: store.CollectionKey{Subscription: "sub", ResourceGroup: "rg", Name: "c" + strconv.Itoa(i%100)}, Name: "job-" + strconv.Itoa(i)}
	}
	end := time.Unix(1_800_000_000, 0)

	b.Run("new-job", func(b *testing.B) {
		c, _ := newCollector(b)
		i := 0
		b.ReportAllocs()
		for b.Loop() {
			if i == jobs {
				b.StopTimer()
				c, _ = newCollector(b)
				i = 0
				b.StartTimer()
			}
			c.Observe(dispatch.Outcome{Job: keys[i], Outcome: dispatch.OutcomeCompleted, End: end})
			i++
		}
		b.StopTimer()
		// The heap 100,000 jobs keep, measured apart from the timed loop.
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		c, _ = newCollector(b)
		for _, k := range keys {
			c.Observe(dispatch.Outcome{Job: k, Outcome: dispatch.OutcomeCompleted, End: end})
		}
		if n, err := seriesOf(c.PerJobGatherer(), MetricJobExecutions); err != nil || n != jobs {
			b.Fatalf("%d series (%v), want %d", n, err, jobs)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/jobs, "heap-B/job")
		runtime.KeepAlive(c)
	})

	b.Run("seen-job", func(b *testing.B) {
		c, _ := newCollector(b)
		o := dispatch.Outcome{Job: keys[0], Outcome: dispatch.OutcomeCompleted, End: end}
		c.Observe(o)
		b.ReportAllocs()
		for b.Loop() {
			c.Observe(o)
		}
	})
}

// BenchmarkTracedAttempt measures an HTTP attempt and its execution's span: without a tracer,
// with spans recorded for a collector that takes them, and with the collector down (the breaker
// open: spans not recorded, counted).
func BenchmarkTracedAttempt(b *testing.B) {
	target := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer target.Close()
	down := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	downURL := down.URL
	down.Close() // refuses connections
	for _, bc := range []struct{ name, endpoint string }{{"no-tracer", ""}, {"recorded", "ok"}, {"collector-down", downURL}} {
		b.Run(bc.name, func(b *testing.B) {
			var tracer trace.Tracer
			if bc.endpoint != "" {
				endpoint := bc.endpoint
				if endpoint == "ok" {
					endpoint = otlptest.New(b).URL
				}
				tr, err := NewTracing(TracingConfig{Endpoint: endpoint, Registerer: prometheus.NewRegistry(), BatchTimeout: 50 * time.Millisecond})
				if err != nil {
					b.Fatal(err)
				}
				defer func() { _ = tr.Shutdown(context.Background()) }()
				tracer = tr.Tracer()
				if bc.name == "collector-down" { // one failed export opens the breaker
					_, s := tracer.Start(b.Context(), "first")
					s.End()
					_ = tr.Flush(b.Context())
				}
			}
			e := action.New(action.Config{Tracer: tracer})
			a := action.Attempt{Action: &wire.JobErrorAction{Type: "Http", Request: &wire.HTTPRequest{URI: target.URL, Method: "POST", Body: "x"}},
				ExecutionTag: "t", ClientRequestID: "c", JobID: "/j", JobCollectionID: "/c", Region: "local", Phase: "MainAction",
				ExpectedExecution: time.Unix(1_800_000_000, 0)}
			b.ReportAllocs()
			for b.Loop() {
				if res := e.Do(b.Context(), a); !res.Success {
					b.Fatal(res.Message)
				}
				e.TraceExecution(b.Context(), action.Execution{Last: a, Start: a.ExpectedExecution, End: a.ExpectedExecution, Outcome: "completed", Attempts: 1})
			}
		})
	}
}
