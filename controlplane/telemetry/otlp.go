package telemetry

import (
	"context"
	"fmt"
	"net/url"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/action"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/clock"
)

// TracingConfig configures the export of attempt spans over OTLP/HTTP (the daemon's
// --otlp-endpoint).
type TracingConfig struct {
	// Endpoint is the collector's OTLP/HTTP base URL ("http://collector:4318"); its path, when
	// it has none, is /v1/traces.
	Endpoint string
	// ExportTimeout bounds one export (0: 10 s). A collector that does not answer costs a
	// failed export, counted, never a slower fire: spans are queued and sent in batches apart
	// from the attempts.
	ExportTimeout time.Duration
	// BatchTimeout is how long spans wait to be sent in a batch (0: 2 s).
	BatchTimeout time.Duration
	// SlowExport is how long an export may take before the collector counts as down (0: 1 s).
	// While it is down (an export failed, or one is slower than this) spans are not recorded,
	// only counted, but for a probe a second; the first export that succeeds ends it.
	SlowExport time.Duration
	// Clock times exports (nil: the real clock).
	Clock      clock.Clock
	Registerer prometheus.Registerer
}

// Tracing records a span per execution and per attempt (the execution's span their parent) and
// exports them over OTLP/HTTP with the OpenTelemetry Go SDK (its spans and batches; the export
// itself is otlpExporter).
type Tracing struct {
	provider *sdktrace.TracerProvider
	breaker  *breaker
}

// NewTracing returns a Tracing exporting to cfg.Endpoint. It registers
// scheduler_trace_spans_exported_total and scheduler_trace_spans_failed_total.
func NewTracing(cfg TracingConfig) (*Tracing, error) {
	u, err := url.Parse(cfg.Endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("otlp endpoint %q is not an http or https URL", cfg.Endpoint)
	}
	if u.Path == "" || u.Path == "/" {
		u.Path = "/v1/traces"
	}
	if cfg.ExportTimeout <= 0 {
		cfg.ExportTimeout = 10 * time.Second
	}
	if cfg.BatchTimeout <= 0 {
		cfg.BatchTimeout = 2 * time.Second
	}
	exp := newOTLPExporter(u.String(), cfg.ExportTimeout)
	b := &breaker{SpanExporter: exp, clock: cfg.Clock, slow: cfg.SlowExport, probeEvery: time.Second,
		exported: prometheus.NewCounter(prometheus.CounterOpts{Name: "scheduler_trace_spans_exported_total",
			Help: "Spans the OTLP collector accepted."}),
		lost: prometheus.NewCounter(prometheus.CounterOpts{Name: "scheduler_trace_spans_failed_total",
			Help: "Spans lost to an unreachable or slow OTLP collector: in a failed export, or not recorded while exports fail or take longer than a second."}),
	}
	if b.clock == nil {
		b.clock = clock.Real{}
	}
	if b.slow <= 0 {
		b.slow = time.Second
	}
	if cfg.Registerer != nil {
		for _, c := range []prometheus.Collector{b.exported, b.lost} {
			if err := cfg.Registerer.Register(c); err != nil {
				return nil, fmt.Errorf("registering the tracing metrics: %w", err)
			}
		}
	}
	tp := sdktrace.NewTracerProvider(
		sdktrace.WithSampler(sdktrace.AlwaysSample()),
		// The execution's span takes the identifiers its attempts name as their parent.
		sdktrace.WithIDGenerator(action.IDGenerator{}),
		sdktrace.WithResource(resource.NewSchemaless(attribute.String("service.name", "schedulerd"))),
		sdktrace.WithBatcher(b, sdktrace.WithBatchTimeout(cfg.BatchTimeout), sdktrace.WithMaxQueueSize(8192),
			sdktrace.WithExportTimeout(cfg.ExportTimeout)),
	)
	return &Tracing{provider: tp, breaker: b}, nil
}

// Tracer is what action.Config.Tracer takes.
// Its spans are gated (action.Gate): the action executor starts none while the collector is down.
func (t *Tracing) Tracer() trace.Tracer {
	return gatedTracer{Tracer: t.provider.Tracer("schedulerd/action"), b: t.breaker}
}

// Flush exports the spans ended so far.
func (t *Tracing) Flush(ctx context.Context) error { return t.provider.ForceFlush(ctx) }

// Shutdown exports what is queued (within ctx) and stops.
func (t *Tracing) Shutdown(ctx context.Context) error { return t.provider.Shutdown(ctx) }
