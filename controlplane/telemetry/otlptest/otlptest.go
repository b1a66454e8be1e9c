// Package otlptest is a real OTLP/HTTP trace endpoint for tests: it decodes each export with the
// collector's own protocol types (go.opentelemetry.io/proto/otlp) and keeps the spans, so that a
// test checks what a collector would receive: identifiers, parent links, attributes.
package otlptest

import (
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/schedulerhq/terraform-provider-scheduler/internal/testsignal"
)

// Collector is an OTLP/HTTP trace endpoint at URL (exports go to URL + "/v1/traces").
type Collector struct {
	URL string

	mu    sync.Mutex
	spans []*tracepb.Span
	// exported is signalled with the number of spans received so far after each export.
	exported testsignal.Signal[int]
}

// New starts a Collector, closed when the test ends.
func New(t testing.TB) *Collector {
	c := &Collector{}
	c.exported.Init()
	srv := httptest.NewServer(c)
	t.Cleanup(srv.Close)
	c.URL = srv.URL
	return c
}

// ServeHTTP takes one export: a protobuf ExportTraceServiceRequest on /v1/traces.
func (c *Collector) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/v1/traces" || r.Header.Get("Content-Type") != "application/x-protobuf" {
		http.Error(w, "unexpected "+r.URL.Path+" "+r.Header.Get("Content-Type"), http.StatusBadRequest)
		return
	}
	b, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
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
	n := len(c.spans)
	c.mu.Unlock()
	out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(out)
	c.exported.Signal(n)
}

// Spans returns the spans received so far, in the order they came.
func (c *Collector) Spans() []*tracepb.Span {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]*tracepb.Span(nil), c.spans...)
}

// WaitSpans waits until at least n spans came (an export is signalled when it is received) and
// returns them all.
func (c *Collector) WaitSpans(t testing.TB, n int, timeout time.Duration) []*tracepb.Span {
	t.Helper()
	if got := c.Spans(); len(got) >= n {
		return got
	}
	if _, err := c.exported.Wait(timeout, func(got int) bool { return got >= n }); err != nil {
		t.Fatalf("waiting for %d spans (%d came): %v", n, len(c.Spans()), err)
	}
	return c.Spans()
}

// Attrs returns a span's string and integer attributes.
func Attrs(s *tracepb.Span) map[string]any {
	m := map[string]any{}
	for _, kv := range s.Attributes {
		if sv, ok := kv.Value.GetValue().(*commonpb.AnyValue_StringValue); ok {
			m[kv.Key] = sv.StringValue
		} else {
			m[kv.Key] = kv.Value.GetIntValue()
		}
	}
	return m
}
