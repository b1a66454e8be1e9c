package telemetry

import (
	"bytes"
	"context"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/action"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/telemetry/otlptest"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/clock"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"
)

// counter reads a counter of reg.
func counter(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name {
			return mf.GetMetric()[0].GetCounter().GetValue()
		}
	}
	t.Fatalf("no metric %s", name)
	return 0
}

// TestOTLPSpansAndParents: the attempts of one execution (two failed, then the error action) and
// the execution are exported to a real OTLP/HTTP endpoint as four spans of one trace: the
// execution's, the root, with the derived span ID and its outcome and attempts, and three
// attempts, each its child, each the span the target saw in its traceparent, with the job,
// attempt, outcome and status code.
func TestOTLPSpansAndParents(t *testing.T) {
	col := otlptest.New(t)
	reg := prometheus.NewRegistry()
	tr, err := NewTracing(TracingConfig{Endpoint: col.URL, Registerer: reg, BatchTimeout: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tr.Shutdown(context.Background()) }()

	var mu sync.Mutex
	var seen []string
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Get("traceparent"))
		mu.Unlock()
		if r.URL.Path == "/main" {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	defer target.Close()
	e := action.New(action.Config{Tracer: tr.Tracer()})
	base := action.Attempt{ExecutionTag: "tag-7", ExpectedExecution: time.Date(2026, 5, 4, 10, 30, 0, 0, time.UTC),
		JobID:           "/subscriptions/s/resourceGroups/rg/providers/Microsoft.Scheduler/jobCollections/c/jobs/j",
		JobCollectionID: "/subscriptions/s/resourceGroups/rg/providers/Microsoft.Scheduler/jobCollections/c", Region: "local"}
	for i, step := range []struct {
		phase, path, id string
		retry           int
	}{{"MainAction", "/main", "r1", 0}, {"MainAction", "/main", "r2", 1}, {"ErrorAction", "/error", "r3", 0}} {
		a := base
		a.Phase, a.RetryCount, a.ClientRequestID = step.phase, step.retry, step.id
		a.ErrorAction(&wire.JobErrorAction{Type: "Http", Request: &wire.HTTPRequest{URI: target.URL + step.path, Method: "POST"}})
		if res := e.Do(t.Context(), a); res.Success != (i == 2) {
			t.Fatalf("attempt %d: %+v", i, res)
		}
	}
	last := base
	last.Phase, last.ClientRequestID = "ErrorAction", "r3"
	e.TraceExecution(t.Context(), action.Execution{Last: last, Start: base.ExpectedExecution,
		End: base.ExpectedExecution.Add(time.Minute), Outcome: "failed", Attempts: 3})
	if err := tr.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	spans := col.Spans()
	if len(spans) != 4 {
		t.Fatalf("%d spans exported, want 4", len(spans))
	}
	ids := base.Trace()
	wantTrace, wantParent := ids.TraceID.String(), ids.ExecutionSpan.String()
	// The execution's span: the root of the trace, with the span ID its attempts name.
	x := spans[3]
	if hex.EncodeToString(x.TraceId) != wantTrace || hex.EncodeToString(x.SpanId) != wantParent || len(x.ParentSpanId) != 0 {
		t.Errorf("execution span: trace %x span %x parent %x, want %s %s and none", x.TraceId, x.SpanId, x.ParentSpanId, wantTrace, wantParent)
	}
	if a := otlptest.Attrs(x); x.Name != "scheduler.execution" || a["scheduler.job_id"] != base.JobID || a["scheduler.outcome"] != "failed" ||
		a["scheduler.attempts"] != int64(3) || a["scheduler.execution_tag"] != "tag-7" || a["scheduler.expected_execution_time"] != "2026-05-04T10:30:00Z" {
		t.Errorf("execution span %s attributes %v", x.Name, a)
	}
	if x.StartTimeUnixNano != uint64(base.ExpectedExecution.UnixNano()) || x.EndTimeUnixNano != uint64(base.ExpectedExecution.Add(time.Minute).UnixNano()) {
		t.Errorf("execution span from %d to %d, want the expected time and a minute later", x.StartTimeUnixNano, x.EndTimeUnixNano)
	}
	spans = spans[:3]
	wantOutcome := []string{"failed", "failed", "succeeded"}
	wantStatus := []int64{503, 503, 200}
	for i, s := range spans {
		if hex.EncodeToString(s.TraceId) != wantTrace || hex.EncodeToString(s.ParentSpanId) != wantParent {
			t.Errorf("span %d: trace %x parent %x, want %s %s", i, s.TraceId, s.ParentSpanId, wantTrace, wantParent)
		}
		if want := "00-" + wantTrace + "-" + hex.EncodeToString(s.SpanId) + "-01"; seen[i] != want {
			t.Errorf("span %d: the target saw traceparent %s, want %s", i, seen[i], want)
		}
		a := otlptest.Attrs(s)
		if a["scheduler.job_id"] != base.JobID || a["scheduler.execution_tag"] != "tag-7" || a["scheduler.outcome"] != wantOutcome[i] ||
			a["http.response.status_code"] != wantStatus[i] || a["scheduler.expected_execution_time"] != "2026-05-04T10:30:00Z" {
			t.Errorf("span %d attributes %v", i, a)
		}
	}
	if bytes.Equal(spans[0].SpanId, spans[1].SpanId) {
		t.Errorf("retry span %x equals the first", spans[1].SpanId)
	}
	if got := counter(t, reg, "scheduler_trace_spans_exported_total"); got != 4 {
		t.Errorf("exported counter %v, want 4", got)
	}
}

// TestOTLPDeadCollectorCostsACounter: with a collector that accepts connections and never
// answers, attempts are not slowed (none waits for an export) and every lost span is counted.
func TestOTLPDeadCollectorCostsACounter(t *testing.T) {
	release := make(chan struct{})
	dead := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer dead.Close()
	defer close(release)
	reg := prometheus.NewRegistry()
	tr, err := NewTracing(TracingConfig{Endpoint: dead.URL, Registerer: reg, ExportTimeout: 300 * time.Millisecond, BatchTimeout: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tr.Shutdown(context.Background()) }()
	target := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer target.Close()
	e := action.New(action.Config{Tracer: tr.Tracer()})
	const n = 100
	var slowest time.Duration
	for i := range n {
		a := action.Attempt{ExecutionTag: "tag", ClientRequestID: "r" + string(rune('a'+i%26)) + time.Now().String(), JobID: "j"}
		a.ErrorAction(&wire.JobErrorAction{Type: "Http", Request: &wire.HTTPRequest{URI: target.URL, Method: "GET"}})
		start := time.Now()
		if res := e.Do(t.Context(), a); !res.Success {
			t.Fatal(res.Message)
		}
		slowest = max(slowest, time.Since(start))
	}
	if slowest >= 300*time.Millisecond {
		t.Errorf("the slowest attempt took %v: it waited for the dead collector", slowest)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	if err := tr.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if failed, exported := counter(t, reg, "scheduler_trace_spans_failed_total"), counter(t, reg, "scheduler_trace_spans_exported_total"); failed != n || exported != 0 {
		t.Errorf("failed %v exported %v, want %d and 0", failed, exported, n)
	}
}

// TestOTLPSlowCollectorStopsTheRecording: once an export has hung longer than SlowExport (on the
// fake clock), attempts record no span but one probe: the others are counted as lost at once,
// with no export, and still carry their traceparent; when the collector answers again, spans are
// recorded and exported again. Without the breaker every span would be recorded, queued and
// encoded for a collector that takes none.
func TestOTLPSlowCollectorStopsTheRecording(t *testing.T) {
	got := make(chan struct{}, 16)
	release := make(chan struct{})
	col := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- struct{}{}
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer col.Close()
	fake := clock.NewFake(time.Date(2026, 5, 4, 10, 30, 0, 0, time.UTC))
	reg := prometheus.NewRegistry()
	tr, err := NewTracing(TracingConfig{Endpoint: col.URL, Registerer: reg, ExportTimeout: time.Minute,
		BatchTimeout: 10 * time.Millisecond, SlowExport: time.Second, Clock: fake})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tr.Shutdown(context.Background()) }()
	var mu sync.Mutex
	var parents []string
	target := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		mu.Lock()
		parents = append(parents, r.Header.Get("traceparent"))
		mu.Unlock()
	}))
	defer target.Close()
	e := action.New(action.Config{Tracer: tr.Tracer()})
	attempt := func(i int) {
		a := action.Attempt{ExecutionTag: "tag-" + strconv.Itoa(i), ClientRequestID: "r" + strconv.Itoa(i), JobID: "j"}
		a.ErrorAction(&wire.JobErrorAction{Type: "Http", Request: &wire.HTTPRequest{URI: target.URL, Method: "GET"}})
		if res := e.Do(t.Context(), a); !res.Success {
			t.Fatal(res.Message)
		}
	}
	attempt(0)
	select { // the first span's export reached the collector, which holds it
	case <-got:
	case <-time.After(10 * time.Second):
		t.Fatal("the first span was not exported")
	}
	fake.Advance(2 * time.Second) // the export is now slower than SlowExport
	for i := 1; i <= 100; i++ {
		attempt(i)
	}
	if lost, exported := counter(t, reg, "scheduler_trace_spans_failed_total"), counter(t, reg, "scheduler_trace_spans_exported_total"); lost != 99 || exported != 0 {
		t.Errorf("while the collector hangs: lost %v exported %v, want 99 (all but one probe) and 0", lost, exported)
	}
	mu.Lock()
	for i, p := range parents {
		ids := (&action.Attempt{JobID: "j", ExecutionTag: "tag-" + strconv.Itoa(i)}).Trace()
		if !strings.HasPrefix(p, "00-"+ids.TraceID.String()+"-") || !strings.HasSuffix(p, "-01") || len(p) != 55 {
			t.Errorf("attempt %d: traceparent %q, want one in trace %s", i, p, ids.TraceID)
		}
	}
	mu.Unlock()
	close(release) // the collector answers again: the held export succeeds
	if err := tr.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	attempt(101)
	if err := tr.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	if lost, exported := counter(t, reg, "scheduler_trace_spans_failed_total"), counter(t, reg, "scheduler_trace_spans_exported_total"); lost != 99 || exported != 3 {
		t.Errorf("after the collector came back: lost %v exported %v, want 99 and 3 (the first, the probe, the last)", lost, exported)
	}
}
