package dispatch_test

import (
	"encoding/hex"
	"fmt"
	"net/http"
	"testing"
	"time"

	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/action"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/dispatch"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/telemetry"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/telemetry/otlptest"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"
)

// TestAnExecutionIsOneTraceWithItsSpanAsParent: an execution whose main action fails, is retried,
// fails again and goes to its error action, which succeeds, is exported to a real OTLP/HTTP
// endpoint as one trace of four spans: the execution's (the root, the span ID its attempts name
// as parent, from its expected time to the end of the error action, outcome failed, 3 attempts)
// and its three attempts (the two main actions and the error action, each its child and each
// the span the target saw in traceparent). Without the execution's span the attempts' parent is
// a span no collector ever receives.
func TestAnExecutionIsOneTraceWithItsSpanAsParent(t *testing.T) {
	col := otlptest.New(t)
	tr, err := telemetry.NewTracing(telemetry.TracingConfig{Endpoint: col.URL, BatchTimeout: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tr.Shutdown(t.Context()) })
	tg := newTarget(t)
	tg.answer("/main", http.StatusServiceUnavailable)
	e := newEnv(t, t0, func(c *dispatch.Config) { c.Tracer = tr.Tracer() })
	due := t0.Add(time.Minute)
	props := wire.JobProperties{StartTime: due.Format(time.RFC3339), Action: httpAction(tg.URL + "/main")}
	props.Action.RetryPolicy = &wire.RetryPolicy{RetryType: "Fixed", RetryInterval: "PT20S", RetryCount: intp(1)}
	props.Action.ErrorAction = &wire.JobErrorAction{Type: "Http", Request: &wire.HTTPRequest{URI: tg.URL + "/error", Method: "POST"}}
	e.putJob("traced", props, "Enabled")
	e.start()
	e.clock.Set(due)
	var hits []hit
	var end time.Time
	for i := range 3 {
		hits = append(hits, tg.next(t))
		r := e.record()
		end = r.History.EndTime
		if i < 2 {
			e.clock.Set(r.Next)
		}
	}
	equal(t, "paths", []string{hits[0].Path, hits[1].Path, hits[2].Path}, []string{"/main", "/main", "/error"})
	if err := tr.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	spans := col.Spans()
	if len(spans) != 4 {
		t.Fatalf("%d spans exported, want 4 (3 attempts and the execution)", len(spans))
	}
	tag := hits[0].Header.Get("x-ms-execution-tag")
	ids := (&action.Attempt{JobID: hits[0].Header.Get("x-ms-scheduler-jobid"), ExecutionTag: tag}).Trace()
	var exec *tracepb.Span
	var attempts []*tracepb.Span
	for _, s := range spans {
		if hex.EncodeToString(s.TraceId) != ids.TraceID.String() {
			t.Errorf("span %s in trace %x, want the execution's %s", s.Name, s.TraceId, ids.TraceID)
		}
		switch s.Name {
		case "scheduler.execution":
			exec = s
		case "scheduler.attempt":
			attempts = append(attempts, s)
		default:
			t.Errorf("unexpected span %s", s.Name)
		}
	}
	if exec == nil || len(attempts) != 3 {
		t.Fatalf("execution span %v, %d attempt spans", exec != nil, len(attempts))
	}
	equal(t, "execution span ID", hex.EncodeToString(exec.SpanId), ids.ExecutionSpan.String())
	equal(t, "execution span parent", len(exec.ParentSpanId), 0)
	equal(t, "execution span from the expected time to the error action's end",
		[2]uint64{exec.StartTimeUnixNano, exec.EndTimeUnixNano}, [2]uint64{uint64(due.UnixNano()), uint64(end.UnixNano())})
	a := otlptest.Attrs(exec)
	equal(t, "execution span attributes", fmt.Sprint(a["scheduler.outcome"], a["scheduler.attempts"], a["scheduler.execution_tag"], a["scheduler.expected_execution_time"]),
		fmt.Sprint("failed", 3, tag, "2026-06-01T09:01:00Z"))
	equal(t, "execution span job", a["scheduler.job_id"], hits[0].Header.Get("x-ms-scheduler-jobid"))
	wantPhase := []string{"MainAction", "MainAction", "ErrorAction"}
	wantRetry := []int64{0, 1, 0}
	for i, s := range attempts {
		equal(t, fmt.Sprintf("attempt %d parent", i), hex.EncodeToString(s.ParentSpanId), ids.ExecutionSpan.String())
		equal(t, fmt.Sprintf("attempt %d traceparent", i), hits[i].Header.Get("traceparent"),
			"00-"+ids.TraceID.String()+"-"+hex.EncodeToString(s.SpanId)+"-01")
		a := otlptest.Attrs(s)
		equal(t, fmt.Sprintf("attempt %d phase and retry", i), fmt.Sprint(a["scheduler.action"], a["scheduler.attempt"]), fmt.Sprint(wantPhase[i], wantRetry[i]))
	}
}
