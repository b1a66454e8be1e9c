package telemetry

import (
	"bytes"
	"context"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/action"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"
)

// collector is a real OTLP/HTTP trace endpoint: it decodes each export with the collector's own
// protocol types and keeps the spans.
type collector struct {
	mu    sync.Mutex
	spans []*tracepb.Span
	got   chan struct{}
}

func (c *collector) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/v1/traces" || r.Header.Get("Content-Type") != "application/x-protobuf" {
		http.Error(w, "unexpected "+r.URL.Path+" "+r.Header.Get("Content-Type"), http.StatusBadRequest)
		return
	}
	b, _ := io.ReadAll(r.Body)
	var req coltracepb.ExportTraceServiceRequest
	if err := proto.Unmarshal(b, &req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	c.mu.Lock()
	for _, rs := range req.ResourceSpans {
		for _, ss := range rs.ScopeSpans {
			c.spans = append(c.spans, ss.Spans...)
		}
	}
	c.mu.Unlock()
	out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(out)
	select {
	case c.got <- struct{}{}:
	default:
	}
}

// attrs returns a span's attributes: strings and integers.
func attrs(s *tracepb.Span) map[string]any {
	m := map[string]any{}
	for _, kv := range s.Attributes {
		if sv := kv.Value.GetStringValue(); sv != "" {
			m[kv.Key] = sv
		} else {
			m[kv.Key] = kv.Value.GetIntValue()
		}
	}
	return m
}

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

// TestOTLPSpansAndParents: the attempts of one execution (two failed, then the error action) are
// exported to a real OTLP/HTTP endpoint as three spans of one trace, each a child of the
// execution's span, each the span the target saw in its traceparent, with the job, attempt,
// outcome and status code.
func TestOTLPSpansAndParents(t *testing.T) {
	col := &collector{got: make(chan struct{}, 1)}
	cs := httptest.NewServer(col)
	defer cs.Close()
	reg := prometheus.NewRegistry()
	tr, err := NewTracing(TracingConfig{Endpoint: cs.URL, Registerer: reg, BatchTimeout: time.Hour})
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
	if err := tr.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	col.mu.Lock()
	spans := append([]*tracepb.Span(nil), col.spans...)
	col.mu.Unlock()
	if len(spans) != 3 {
		t.Fatalf("%d spans exported, want 3", len(spans))
	}
	ids := base.Trace()
	wantTrace, wantParent := ids.TraceID.String(), ids.ExecutionSpan.String()
	wantOutcome := []string{"failed", "failed", "succeeded"}
	wantStatus := []int64{503, 503, 200}
	for i, s := range spans {
		if hex.EncodeToString(s.TraceId) != wantTrace || hex.EncodeToString(s.ParentSpanId) != wantParent {
			t.Errorf("span %d: trace %x parent %x, want %s %s", i, s.TraceId, s.ParentSpanId, wantTrace, wantParent)
		}
		if want := "00-" + wantTrace + "-" + hex.EncodeToString(s.SpanId) + "-01"; seen[i] != want {
			t.Errorf("span %d: the target saw traceparent %s, want %s", i, seen[i], want)
		}
		a := attrs(s)
		if a["scheduler.job_id"] != base.JobID || a["scheduler.execution_tag"] != "tag-7" || a["scheduler.outcome"] != wantOutcome[i] ||
			a["http.response.status_code"] != wantStatus[i] || a["scheduler.expected_execution_time"] != "2026-05-04T10:30:00Z" {
			t.Errorf("span %d attributes %v", i, a)
		}
	}
	if bytes.Equal(spans[0].SpanId, spans[1].SpanId) {
		t.Errorf("retry span %x equals the first", spans[1].SpanId)
	}
	if got := counter(t, reg, "scheduler_trace_spans_exported_total"); got != 3 {
		t.Errorf("exported counter %v, want 3", got)
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
