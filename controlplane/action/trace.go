package action

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// HeaderTraceparent is the W3C Trace Context header every HTTP attempt carries (SPEC 8).
const HeaderTraceparent = "traceparent"

// TraceIDs are the W3C trace context identifiers of one attempt: the execution's trace (the same
// for every attempt, retry and error action of an execution, on every replica), the execution's
// span (the parent of each attempt's span) and the attempt's own span.
type TraceIDs struct {
	TraceID       trace.TraceID
	ExecutionSpan trace.SpanID
	AttemptSpan   trace.SpanID
}

// Trace derives an attempt's trace identifiers: the trace and the execution span from the job's
// resource ID and the execution tag, the attempt's span from its client request ID (new for each
// attempt). Derived, not drawn, so that a replica taking an execution over continues its trace.
func (a *Attempt) Trace() TraceIDs {
	var t TraceIDs
	t.TraceID, t.ExecutionSpan = ExecutionTrace(a.JobID, a.ExecutionTag)
	var buf [64]byte // the hashed text, on the stack when it fits
	s := sha256.Sum256(append(append(buf[:0], "span\x00"...), a.ClientRequestID...))
	copy(t.AttemptSpan[:], s[:8])
	// All-zero identifiers are invalid in W3C trace context.
	if !t.AttemptSpan.IsValid() {
		t.AttemptSpan[7] = 1
	}
	return t
}

// ExecutionTrace is the trace of an execution and its span, derived from the job's resource ID
// (store.JobKey.ID, as the executor names the job) and the execution tag: what every attempt of
// the execution carries in traceparent, and what the dashboard shows and links for a history
// entry.
func ExecutionTrace(jobID, tag string) (trace.TraceID, trace.SpanID) {
	var (
		id   trace.TraceID
		span trace.SpanID
	)
	var buf [256]byte // the hashed text, on the stack when it fits
	h := sha256.Sum256(append(append(append(append(buf[:0], "trace\x00"...), jobID...), 0), tag...))
	copy(id[:], h[:16])
	copy(span[:], h[16:24])
	// All-zero identifiers are invalid in W3C trace context.
	if !id.IsValid() {
		id[15] = 1
	}
	if !span.IsValid() {
		span[7] = 1
	}
	return id, span
}

// Traceparent is the attempt's traceparent header value: version 00, the execution's trace, the
// attempt's span, sampled.
func (t TraceIDs) Traceparent() string {
	return "00-" + hex.EncodeToString(t.TraceID[:]) + "-" + hex.EncodeToString(t.AttemptSpan[:]) + "-01"
}

// traceIDs returns the attempt's trace context: Do's (with the recorded span's ID when a tracer
// records one), else derived.
func (a *Attempt) traceIDs() TraceIDs {
	if a.ids != nil {
		return *a.ids
	}
	return a.Trace()
}

// startSpan starts the attempt's span as a child of the execution's span (a remote parent: it is
// the same on every replica), and takes its span ID for the attempt's traceparent.
func (e *Executor) startSpan(ctx context.Context, a *Attempt) (context.Context, trace.Span) {
	parent := trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: a.ids.TraceID, SpanID: a.ids.ExecutionSpan, TraceFlags: trace.FlagsSampled, Remote: true,
	})
	ctx = trace.ContextWithRemoteSpanContext(ctx, parent)
	ctx, span := e.tracer.Start(ctx, "scheduler.attempt", trace.WithSpanKind(trace.SpanKindClient))
	// Attributes only for a span that is recorded: one that is not (the collector is down) costs
	// next to nothing.
	if span.IsRecording() {
		span.SetAttributes(
			attribute.String("scheduler.job_id", a.JobID),
			attribute.String("scheduler.job_collection_id", a.JobCollectionID),
			attribute.String("scheduler.execution_tag", a.ExecutionTag),
			attribute.String("scheduler.expected_execution_time", a.ExpectedExecution.UTC().Format(time.RFC3339)),
			attribute.String("scheduler.action", a.Phase),
			attribute.String("scheduler.action_type", a.Action.Type),
			attribute.Int("scheduler.attempt", a.RetryCount),
		)
	}
	if sc := span.SpanContext(); sc.IsValid() {
		a.ids.AttemptSpan = sc.SpanID()
	}
	return ctx, span
}

// endSpan records the attempt's outcome and status code on its span and ends it.
func endSpan(span trace.Span, res Result) {
	if !span.IsRecording() {
		span.End()
		return
	}
	outcome := "failed"
	if res.Success {
		outcome = "succeeded"
	}
	span.SetAttributes(attribute.String("scheduler.outcome", outcome))
	if res.StatusCode != 0 {
		span.SetAttributes(attribute.Int("http.response.status_code", res.StatusCode))
	}
	if !res.Success {
		first, _, _ := strings.Cut(res.Message, "\n")
		span.SetStatus(codes.Error, shortReason(first))
	}
	span.End()
}

// Execution is what an execution's span says once the execution is over: its last attempt
// (the job, collection and tag it ran for), when it was expected and ended, its outcome
// ("completed", "failed": the error action ran, "faulted") and its attempts, retries and error
// action included.
type Execution struct {
	Last       Attempt
	Start, End time.Time
	Outcome    string
	Attempts   int
}

// Tracing reports whether the executor records spans (Config.Tracer).
func (e *Executor) Tracing() bool { return e.tracer != nil }

// Gate is what a Config.Tracer may implement to say, before a span is started, whether it is
// to be recorded now (telemetry's is false while the collector is down): a span it refuses is
// not started at all, and the attempt's traceparent carries the derived span ID.
type Gate interface {
	Record() bool
}

// recording reports whether to start a span now.
func (e *Executor) recording() bool {
	if e.tracer == nil {
		return false
	}
	if g, ok := e.tracer.(Gate); ok {
		return g.Record()
	}
	return true
}

// TraceExecution records the span of an execution that is over: the root of its trace, with the
// execution span ID its attempts' spans name as their parent (Attempt.Trace), from x.Start to
// x.End. The tracer must generate that ID: its provider is built with IDGenerator (as
// telemetry.NewTracing's is); with another the span gets an ID of its own. Without a tracer it
// does nothing.
func (e *Executor) TraceExecution(ctx context.Context, x Execution) {
	if !e.recording() {
		return
	}
	ids := x.Last.Trace()
	ctx = context.WithValue(ctx, executionIDsKey{}, ids)
	_, span := e.tracer.Start(ctx, "scheduler.execution", trace.WithNewRoot(), trace.WithSpanKind(trace.SpanKindInternal),
		trace.WithTimestamp(x.Start))
	if !span.IsRecording() {
		span.End()
		return
	}
	span.SetAttributes(
		attribute.String("scheduler.job_id", x.Last.JobID),
		attribute.String("scheduler.job_collection_id", x.Last.JobCollectionID),
		attribute.String("scheduler.execution_tag", x.Last.ExecutionTag),
		attribute.String("scheduler.expected_execution_time", x.Last.ExpectedExecution.UTC().Format(time.RFC3339)),
		attribute.String("scheduler.outcome", x.Outcome),
		attribute.Int("scheduler.attempts", x.Attempts),
	)
	if x.Outcome != "completed" {
		span.SetStatus(codes.Error, "the execution "+x.Outcome)
	}
	span.End(trace.WithTimestamp(x.End))
}

// executionIDsKey carries an execution's derived identifiers from TraceExecution to IDGenerator.
type executionIDsKey struct{}

// IDGenerator is the span ID generator of a tracer provider whose tracer is Config.Tracer
// (sdktrace.WithIDGenerator): random identifiers, except for an execution's span, which takes
// the trace and span IDs derived from the job and the execution tag, so that the span its
// attempts name as their parent (on any replica) is the one exported.
type IDGenerator struct{}

// NewIDs returns the identifiers of a root span: an execution's derived ones in TraceExecution,
// else random.
func (IDGenerator) NewIDs(ctx context.Context) (trace.TraceID, trace.SpanID) {
	if ids, ok := ctx.Value(executionIDsKey{}).(TraceIDs); ok {
		return ids.TraceID, ids.ExecutionSpan
	}
	var t trace.TraceID
	for !t.IsValid() {
		_, _ = rand.Read(t[:])
	}
	return t, IDGenerator{}.NewSpanID(ctx, t)
}

// NewSpanID returns a random span ID.
func (IDGenerator) NewSpanID(context.Context, trace.TraceID) trace.SpanID {
	var s trace.SpanID
	for !s.IsValid() {
		_, _ = rand.Read(s[:])
	}
	return s
}
