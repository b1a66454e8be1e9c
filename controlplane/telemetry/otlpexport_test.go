package telemetry

import (
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// The hand-written encoding is the collector's message: decoded with the protocol's own generated
// types, every field of a span (ids, parent, state, kind, times, attributes of each type, events,
// links, status, flags), its resource and its scope reads back as set, and spans of two scopes
// and two resources are grouped as OTLP groups them.
func TestOTLPEncodingDecodesWithTheProtocolsTypes(t *testing.T) {
	tid := trace.TraceID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
	ts, err := trace.ParseTraceState("k=v")
	if err != nil {
		t.Fatal(err)
	}
	parent := trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: trace.SpanID{9, 9, 9, 9, 9, 9, 9, 9}, Remote: true})
	res := resource.NewSchemaless(attribute.String("service.name", "schedulerd"))
	other := resource.NewSchemaless(attribute.String("service.name", "other"))
	start := time.Date(2026, 11, 26, 5, 0, 0, 123, time.UTC)
	scope := instrumentation.Scope{Name: "schedulerd/action", Version: "1"}
	stubs := tracetest.SpanStubs{
		{
			Name: "POST", SpanKind: trace.SpanKindClient, Resource: res, InstrumentationScope: scope,
			SpanContext: trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: trace.SpanID{1, 1, 1, 1, 1, 1, 1, 1},
				TraceFlags: trace.FlagsSampled, TraceState: ts}),
			Parent: parent, StartTime: start, EndTime: start.Add(1500 * time.Millisecond),
			Attributes: []attribute.KeyValue{attribute.String("s", "x"), attribute.Bool("b", true), attribute.Int64("i", -7),
				attribute.Float64("f", 2.5), attribute.StringSlice("ss", []string{"a", "b"}), attribute.Int64Slice("is", []int64{1, -2}),
				attribute.BoolSlice("bs", []bool{true, false}), attribute.Float64Slice("fs", []float64{0.5})},
			DroppedAttributes: 2,
			Events:            []sdktrace.Event{{Name: "retry", Time: start.Add(time.Second), Attributes: []attribute.KeyValue{attribute.Int("n", 1)}}},
			Links: []sdktrace.Link{{SpanContext: trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: trace.SpanID{7, 7, 7, 7, 7, 7, 7, 7},
				TraceFlags: trace.FlagsSampled}), Attributes: []attribute.KeyValue{attribute.String("l", "y")}}},
			Status: sdktrace.Status{Code: codes.Error, Description: "500 Internal Server Error"},
		},
		{Name: "execution", SpanKind: trace.SpanKindInternal, Resource: res, InstrumentationScope: instrumentation.Scope{Name: "second"},
			SpanContext: trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: trace.SpanID{2, 2, 2, 2, 2, 2, 2, 2}}),
			StartTime:   start, EndTime: start, Status: sdktrace.Status{Code: codes.Ok}},
		{Name: "third", Resource: other, InstrumentationScope: scope,
			SpanContext: trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: trace.SpanID{3, 3, 3, 3, 3, 3, 3, 3}})},
		{Name: "fourth", Resource: res, InstrumentationScope: scope,
			SpanContext: trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: trace.SpanID{4, 4, 4, 4, 4, 4, 4, 4}})},
	}
	var got coltracepb.ExportTraceServiceRequest
	if err := proto.Unmarshal(encodeExport(stubs.Snapshots()), &got); err != nil {
		t.Fatalf("decoding: %v", err)
	}
	kv := func(k string, v *commonpb.AnyValue) *commonpb.KeyValue { return &commonpb.KeyValue{Key: k, Value: v} }
	str := func(s string) *commonpb.AnyValue {
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: s}}
	}
	i64 := func(i int64) *commonpb.AnyValue {
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_IntValue{IntValue: i}}
	}
	bl := func(b bool) *commonpb.AnyValue {
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_BoolValue{BoolValue: b}}
	}
	dbl := func(f float64) *commonpb.AnyValue {
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_DoubleValue{DoubleValue: f}}
	}
	arr := func(vs ...*commonpb.AnyValue) *commonpb.AnyValue {
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_ArrayValue{ArrayValue: &commonpb.ArrayValue{Values: vs}}}
	}
	id := func(b byte) []byte { return []byte{b, b, b, b, b, b, b, b} }
	ns := uint64(start.UnixNano())
	first := &tracepb.Span{
		TraceId: tid[:], SpanId: id(1), TraceState: "k=v", ParentSpanId: id(9), Name: "POST", Kind: tracepb.Span_SPAN_KIND_CLIENT,
		StartTimeUnixNano: ns, EndTimeUnixNano: ns + 1_500_000_000,
		Attributes: []*commonpb.KeyValue{kv("s", str("x")), kv("b", bl(true)), kv("i", i64(-7)), kv("f", dbl(2.5)),
			kv("ss", arr(str("a"), str("b"))), kv("is", arr(i64(1), i64(-2))), kv("bs", arr(bl(true), bl(false))), kv("fs", arr(dbl(0.5)))},
		DroppedAttributesCount: 2,
		Events:                 []*tracepb.Span_Event{{TimeUnixNano: ns + 1_000_000_000, Name: "retry", Attributes: []*commonpb.KeyValue{kv("n", i64(1))}}},
		Links: []*tracepb.Span_Link{{TraceId: tid[:], SpanId: id(7), Attributes: []*commonpb.KeyValue{kv("l", str("y"))},
			Flags: 0x1 | 0x100}},
		Status: &tracepb.Status{Code: tracepb.Status_STATUS_CODE_ERROR, Message: "500 Internal Server Error"},
		Flags:  0x1 | 0x100 | 0x200,
	}
	plain := func(name string, b byte) *tracepb.Span {
		return &tracepb.Span{TraceId: tid[:], SpanId: id(b), Name: name, Status: &tracepb.Status{}, Flags: 0x100}
	}
	second := &tracepb.Span{TraceId: tid[:], SpanId: id(2), Name: "execution", Kind: tracepb.Span_SPAN_KIND_INTERNAL,
		StartTimeUnixNano: ns, EndTimeUnixNano: ns, Status: &tracepb.Status{Code: tracepb.Status_STATUS_CODE_OK}, Flags: 0x100}
	scopePB := &commonpb.InstrumentationScope{Name: "schedulerd/action", Version: "1"}
	want := &coltracepb.ExportTraceServiceRequest{ResourceSpans: []*tracepb.ResourceSpans{
		{
			Resource: &resourcepb.Resource{Attributes: []*commonpb.KeyValue{kv("service.name", str("schedulerd"))}},
			ScopeSpans: []*tracepb.ScopeSpans{
				{Scope: scopePB, Spans: []*tracepb.Span{first, plain("fourth", 4)}},
				{Scope: &commonpb.InstrumentationScope{Name: "second"}, Spans: []*tracepb.Span{second}},
			},
		},
		{
			Resource:   &resourcepb.Resource{Attributes: []*commonpb.KeyValue{kv("service.name", str("other"))}},
			ScopeSpans: []*tracepb.ScopeSpans{{Scope: scopePB, Spans: []*tracepb.Span{plain("third", 3)}}},
		},
	}}
	if !proto.Equal(&got, want) {
		t.Fatalf("decoded:\n%s\nwant:\n%s", protojson.Format(&got), protojson.Format(want))
	}
}
