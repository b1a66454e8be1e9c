package telemetry

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/schedulerhq/terraform-provider-scheduler/internal/clock"
)

// breaker keeps a collector that is down or slow from costing the daemon more than a counter.
// It wraps the exporter and gates the spans (Record, which the action executor asks before it
// starts one): while the last export failed, or one has been under way longer than slow, spans
// are not started (the targets still get their traceparent) and are counted as lost, except one
// probe per probeEvery, whose export says when the collector is back.
type breaker struct {
	sdktrace.SpanExporter
	clock      clock.Clock
	slow       time.Duration
	probeEvery time.Duration

	failing   atomic.Bool
	exporting atomic.Int64 // unix nanoseconds an export under way started; 0: none
	nextProbe atomic.Int64 // unix nanoseconds from which a span is recorded as a probe

	exported, lost prometheus.Counter
}

// open reports whether the collector is failing or slow now.
func (b *breaker) open(now int64) bool {
	if b.failing.Load() {
		return true
	}
	started := b.exporting.Load()
	return started != 0 && now-started > int64(b.slow)
}

// Record reports whether to record a span now: always while the collector keeps up; else only
// a probe now and then, counting the others as lost (action.Gate).
func (b *breaker) Record() bool {
	now := b.clock.Now().UnixNano()
	if !b.open(now) {
		return true
	}
	next := b.nextProbe.Load()
	if now < next || !b.nextProbe.CompareAndSwap(next, now+int64(b.probeEvery)) {
		b.lost.Inc()
		return false
	}
	return true
}

// gatedTracer is the tracer Tracing.Tracer returns: the SDK's, and Record for action.Gate.
type gatedTracer struct {
	trace.Tracer
	b *breaker
}

// Record is action.Gate: whether to record a span now.
func (g gatedTracer) Record() bool { return g.b.Record() }

// ExportSpans exports a batch and counts its spans delivered or lost. A failure is only counted:
// returned, it would reach the SDK's process-wide error handler, which logs every one.
func (b *breaker) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	b.exporting.Store(b.clock.Now().UnixNano())
	err := b.SpanExporter.ExportSpans(ctx, spans)
	b.exporting.Store(0)
	b.failing.Store(err != nil)
	if err != nil {
		b.lost.Add(float64(len(spans)))
	} else {
		b.exported.Add(float64(len(spans)))
	}
	return nil
}
