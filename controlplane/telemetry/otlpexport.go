package telemetry

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/protobuf/encoding/protowire"
)

// otlpExporter sends spans to a collector over OTLP/HTTP, one protobuf ExportTraceServiceRequest
// per batch, encoded here field by field. The SDK's own OTLP exporter links gRPC and the
// collector's generated service code for this one message: 5.9 MB more binary and about 2.5 MB
// more resident memory in every daemon, tracing on or off (schedulerd idle, 3 starts each).
// Failed exports are not retried (the breaker counts them); an export takes at most timeout.
type otlpExporter struct {
	url     string
	client  *http.Client
	timeout time.Duration
}

var _ sdktrace.SpanExporter = (*otlpExporter)(nil)

func newOTLPExporter(url string, timeout time.Duration) *otlpExporter {
	rt := http.DefaultTransport
	if t, ok := rt.(*http.Transport); ok {
		rt = t.Clone() // its own connections, closed by Shutdown
	}
	return &otlpExporter{url: url, timeout: timeout, client: &http.Client{Transport: rt}}
}

// ExportSpans posts spans to the collector; an answer other than 2xx is an error.
func (e *otlpExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	if len(spans) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, e.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.url, bytes.NewReader(encodeExport(spans)))
	if err != nil {
		return fmt.Errorf("otlp export: %w", err)
	}
	req.Header.Set("Content-Type", "application/x-protobuf")
	resp, err := e.client.Do(req)
	if err != nil {
		return fmt.Errorf("otlp export: %w", err)
	}
	defer func() { _ = resp.Body.Close() }()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("otlp export: the collector answered %s", resp.Status)
	}
	return nil
}

// Shutdown closes the exporter's idle connections.
func (e *otlpExporter) Shutdown(context.Context) error {
	e.client.CloseIdleConnections()
	return nil
}

// The field numbers of the OTLP messages (opentelemetry-proto, trace/v1, common/v1, resource/v1).
const (
	fExportResourceSpans = 1 // ExportTraceServiceRequest.resource_spans

	fResourceSpansResource  = 1
	fResourceSpansScopes    = 2
	fResourceSpansSchemaURL = 3
	fResourceAttributes     = 1

	fScopeSpansScope     = 1
	fScopeSpansSpans     = 2
	fScopeSpansSchemaURL = 3
	fScopeName           = 1
	fScopeVersion        = 2
	fScopeAttributes     = 3

	fSpanTraceID      = 1
	fSpanSpanID       = 2
	fSpanTraceState   = 3
	fSpanParentSpanID = 4
	fSpanName         = 5
	fSpanKind         = 6
	fSpanStart        = 7
	fSpanEnd          = 8
	fSpanAttributes   = 9
	fSpanDroppedAttrs = 10
	fSpanEvents       = 11
	fSpanDroppedEvts  = 12
	fSpanLinks        = 13
	fSpanDroppedLinks = 14
	fSpanStatus       = 15
	fSpanFlags        = 16

	fEventTime         = 1
	fEventName         = 2
	fEventAttributes   = 3
	fEventDroppedAttrs = 4

	fLinkTraceID      = 1
	fLinkSpanID       = 2
	fLinkTraceState   = 3
	fLinkAttributes   = 4
	fLinkDroppedAttrs = 5
	fLinkFlags        = 6

	fStatusMessage = 2
	fStatusCode    = 3

	fKeyValueKey   = 1
	fKeyValueValue = 2
	fAnyString     = 1
	fAnyBool       = 2
	fAnyInt        = 3
	fAnyDouble     = 4
	fAnyArray      = 5
	fArrayValues   = 1

	// SpanFlags: the parent's being remote is known, and whether it is.
	flagHasIsRemote = 0x100
	flagIsRemote    = 0x200

	// Status.StatusCode.
	statusOK    = 1
	statusError = 2
)

// encodeExport encodes spans as an ExportTraceServiceRequest: one ResourceSpans per resource,
// within it one ScopeSpans per instrumentation scope, in the order they first appear.
func encodeExport(spans []sdktrace.ReadOnlySpan) []byte {
	type group struct {
		first  sdktrace.ReadOnlySpan
		scopes []instrumentation.Scope
		spans  [][]sdktrace.ReadOnlySpan
	}
	var groups []*group
	byResource := map[attribute.Distinct]*group{}
	for _, s := range spans {
		if s == nil {
			continue
		}
		k := s.Resource().Equivalent()
		g := byResource[k]
		if g == nil {
			g = &group{first: s}
			byResource[k] = g
			groups = append(groups, g)
		}
		sc := s.InstrumentationScope()
		i := 0
		for i < len(g.scopes) && !sameScope(g.scopes[i], sc) {
			i++
		}
		if i == len(g.scopes) {
			g.scopes = append(g.scopes, sc)
			g.spans = append(g.spans, nil)
		}
		g.spans[i] = append(g.spans[i], s)
	}
	var out []byte
	for _, g := range groups {
		var rs []byte
		var res []byte
		for _, kv := range g.first.Resource().Attributes() {
			res = appendMessage(res, fResourceAttributes, keyValue(kv))
		}
		rs = appendMessage(rs, fResourceSpansResource, res)
		for i, sc := range g.scopes {
			var ss []byte
			var scope []byte
			scope = appendString(scope, fScopeName, sc.Name)
			scope = appendString(scope, fScopeVersion, sc.Version)
			for _, kv := range sc.Attributes.ToSlice() {
				scope = appendMessage(scope, fScopeAttributes, keyValue(kv))
			}
			ss = appendMessage(ss, fScopeSpansScope, scope)
			for _, s := range g.spans[i] {
				ss = appendMessage(ss, fScopeSpansSpans, appendSpan(nil, s))
			}
			ss = appendString(ss, fScopeSpansSchemaURL, sc.SchemaURL)
			rs = appendMessage(rs, fResourceSpansScopes, ss)
		}
		rs = appendString(rs, fResourceSpansSchemaURL, g.first.Resource().SchemaURL())
		out = appendMessage(out, fExportResourceSpans, rs)
	}
	return out
}

func sameScope(a, b instrumentation.Scope) bool {
	return a.Name == b.Name && a.Version == b.Version && a.SchemaURL == b.SchemaURL && a.Attributes.Equals(&b.Attributes)
}

// appendSpan appends the fields of a Span.
func appendSpan(b []byte, s sdktrace.ReadOnlySpan) []byte {
	sc := s.SpanContext()
	tid, sid := sc.TraceID(), sc.SpanID()
	b = appendBytes(b, fSpanTraceID, tid[:])
	b = appendBytes(b, fSpanSpanID, sid[:])
	b = appendString(b, fSpanTraceState, sc.TraceState().String())
	if p := s.Parent().SpanID(); p.IsValid() {
		b = appendBytes(b, fSpanParentSpanID, p[:])
	}
	b = appendString(b, fSpanName, s.Name())
	b = appendVarint(b, fSpanKind, uint64(spanKind(s.SpanKind())))
	b = appendFixed64(b, fSpanStart, unixNano(s.StartTime()))
	b = appendFixed64(b, fSpanEnd, unixNano(s.EndTime()))
	for _, kv := range s.Attributes() {
		b = appendMessage(b, fSpanAttributes, keyValue(kv))
	}
	b = appendVarint(b, fSpanDroppedAttrs, count(s.DroppedAttributes()))
	for _, ev := range s.Events() {
		var e []byte
		e = appendFixed64(e, fEventTime, unixNano(ev.Time))
		e = appendString(e, fEventName, ev.Name)
		for _, kv := range ev.Attributes {
			e = appendMessage(e, fEventAttributes, keyValue(kv))
		}
		e = appendVarint(e, fEventDroppedAttrs, count(ev.DroppedAttributeCount))
		b = appendMessage(b, fSpanEvents, e)
	}
	b = appendVarint(b, fSpanDroppedEvts, count(s.DroppedEvents()))
	for _, l := range s.Links() {
		var m []byte
		lt, ls := l.SpanContext.TraceID(), l.SpanContext.SpanID()
		m = appendBytes(m, fLinkTraceID, lt[:])
		m = appendBytes(m, fLinkSpanID, ls[:])
		m = appendString(m, fLinkTraceState, l.SpanContext.TraceState().String())
		for _, kv := range l.Attributes {
			m = appendMessage(m, fLinkAttributes, keyValue(kv))
		}
		m = appendVarint(m, fLinkDroppedAttrs, count(l.DroppedAttributeCount))
		m = protowire.AppendTag(m, fLinkFlags, protowire.Fixed32Type)
		m = protowire.AppendFixed32(m, spanFlags(l.SpanContext.TraceFlags(), l.SpanContext))
		b = appendMessage(b, fSpanLinks, m)
	}
	b = appendVarint(b, fSpanDroppedLinks, count(s.DroppedLinks()))
	var st []byte
	st = appendString(st, fStatusMessage, s.Status().Description)
	switch s.Status().Code {
	case codes.Ok:
		st = appendVarint(st, fStatusCode, statusOK)
	case codes.Error:
		st = appendVarint(st, fStatusCode, statusError)
	}
	b = appendMessage(b, fSpanStatus, st)
	b = protowire.AppendTag(b, fSpanFlags, protowire.Fixed32Type)
	return protowire.AppendFixed32(b, spanFlags(sc.TraceFlags(), s.Parent()))
}

// spanFlags are a span's or a link's flags: the W3C trace flags, and whether the parent (or the
// linked span) is remote.
func spanFlags(tf trace.TraceFlags, parent trace.SpanContext) uint32 {
	f := uint32(tf) | flagHasIsRemote
	if parent.IsRemote() {
		f |= flagIsRemote
	}
	return f
}

// spanKind is the OTLP SpanKind of k (the same numbers; an unknown kind is unspecified).
func spanKind(k trace.SpanKind) int {
	if k < trace.SpanKindInternal || k > trace.SpanKindConsumer {
		return 0
	}
	return int(k)
}

// keyValue encodes a KeyValue.
func keyValue(kv attribute.KeyValue) []byte {
	b := appendString(nil, fKeyValueKey, string(kv.Key))
	return appendMessage(b, fKeyValueValue, anyValue(kv.Value))
}

// anyValue encodes an AnyValue (empty for an invalid value).
func anyValue(v attribute.Value) []byte {
	var b []byte
	switch v.Type() {
	case attribute.STRING:
		b = protowire.AppendTag(b, fAnyString, protowire.BytesType)
		return protowire.AppendString(b, v.AsString())
	case attribute.BOOL:
		b = protowire.AppendTag(b, fAnyBool, protowire.VarintType)
		return protowire.AppendVarint(b, protowire.EncodeBool(v.AsBool()))
	case attribute.INT64:
		b = protowire.AppendTag(b, fAnyInt, protowire.VarintType)
		return protowire.AppendVarint(b, uint64(v.AsInt64())) //nolint:gosec // int64 goes on the wire in two's complement
	case attribute.FLOAT64:
		b = protowire.AppendTag(b, fAnyDouble, protowire.Fixed64Type)
		return protowire.AppendFixed64(b, math.Float64bits(v.AsFloat64()))
	case attribute.STRINGSLICE:
		return appendMessage(b, fAnyArray, arrayValue(v.AsStringSlice(), attribute.StringValue))
	case attribute.BOOLSLICE:
		return appendMessage(b, fAnyArray, arrayValue(v.AsBoolSlice(), attribute.BoolValue))
	case attribute.INT64SLICE:
		return appendMessage(b, fAnyArray, arrayValue(v.AsInt64Slice(), attribute.Int64Value))
	case attribute.FLOAT64SLICE:
		return appendMessage(b, fAnyArray, arrayValue(v.AsFloat64Slice(), attribute.Float64Value))
	default:
		return b
	}
}

// arrayValue encodes an ArrayValue of xs, each as value makes it.
func arrayValue[T any](xs []T, value func(T) attribute.Value) []byte {
	var arr []byte
	for _, x := range xs {
		arr = appendMessage(arr, fArrayValues, anyValue(value(x)))
	}
	return arr
}

// appendMessage appends an embedded message (length-delimited) even when it is empty: a
// message field present but empty is not the same as one absent.
func appendMessage(b []byte, n protowire.Number, m []byte) []byte {
	b = protowire.AppendTag(b, n, protowire.BytesType)
	return protowire.AppendBytes(b, m)
}

// appendString appends a string field unless it is empty (proto3's default).
func appendString(b []byte, n protowire.Number, s string) []byte {
	if s == "" {
		return b
	}
	b = protowire.AppendTag(b, n, protowire.BytesType)
	return protowire.AppendString(b, s)
}

// appendBytes appends a bytes field unless it is empty.
func appendBytes(b []byte, n protowire.Number, v []byte) []byte {
	if len(v) == 0 {
		return b
	}
	b = protowire.AppendTag(b, n, protowire.BytesType)
	return protowire.AppendBytes(b, v)
}

// appendVarint appends a varint field unless it is zero.
func appendVarint(b []byte, n protowire.Number, v uint64) []byte {
	if v == 0 {
		return b
	}
	b = protowire.AppendTag(b, n, protowire.VarintType)
	return protowire.AppendVarint(b, v)
}

// appendFixed64 appends a fixed64 field unless it is zero.
func appendFixed64(b []byte, n protowire.Number, v uint64) []byte {
	if v == 0 {
		return b
	}
	b = protowire.AppendTag(b, n, protowire.Fixed64Type)
	return protowire.AppendFixed64(b, v)
}

func unixNano(t time.Time) uint64 { return uint64(max(0, t.UnixNano())) } //nolint:gosec // negative clamped

func count(n int) uint64 { return uint64(min(max(n, 0), math.MaxUint32)) } //nolint:gosec // clamped
