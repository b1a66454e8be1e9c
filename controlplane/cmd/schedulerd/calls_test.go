package main

import (
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/action"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/telemetry/otlptest"
)

// TestSignedAndTracedCallEndToEnd: a job with a signing secret, put through the API, calls its
// target signed (verified with the Standard Webhooks Go library) and with a traceparent, and the
// daemon started with --otlp-endpoint exports the attempt's span and the execution's to a real
// OTLP/HTTP endpoint (decoded with the collector's protocol types): the target's span, in the
// execution's trace, a child of the execution's span, with the job and its outcome, and the
// execution's span itself. The secret is in no log and not
// in the database file in plain text.
func TestSignedAndTracedCallEndToEnd(t *testing.T) {
	collector := otlptest.New(t)
	type call struct {
		header http.Header
		body   []byte
	}
	calls := make(chan call, 4)
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		calls <- call{r.Header.Clone(), b}
	}))
	defer target.Close()

	const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	d := startDaemon(t, "--otlp-endpoint", collector.URL)
	d.putJob("signed", `{"type":"Http","timeout":"PT5S","request":{"uri":"`+target.URL+`/hook","method":"POST","body":"{\"n\":1}",`+
		`"signing":{"secret":"`+secret+`"}}}`)
	var c call
	select {
	case c = <-calls:
	case <-time.After(60 * time.Second):
		t.Fatalf("the target was not called; log:\n%s", d.logs.String())
	}
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatal(err)
	}
	if err := wh.Verify(c.body, c.header); err != nil {
		t.Errorf("the signature does not verify: %v (headers %v)", err, c.header)
	}
	tag := c.header.Get("x-ms-execution-tag")
	if c.header.Get("webhook-id") != tag || tag == "" {
		t.Errorf("webhook-id %q, execution tag %q", c.header.Get("webhook-id"), tag)
	}
	// The attempt's span, then the execution's (its parent).
	spans := collector.WaitSpans(t, 2, 30*time.Second)
	s, x := spans[0], spans[1]
	ids := (&action.Attempt{JobID: c.header.Get("x-ms-scheduler-jobid"), ExecutionTag: tag}).Trace()
	if x.Name != "scheduler.execution" || hex.EncodeToString(x.SpanId) != ids.ExecutionSpan.String() || len(x.ParentSpanId) != 0 {
		t.Errorf("second span %s %x (parent %x), want the execution's span %s, a root", x.Name, x.SpanId, x.ParentSpanId, ids.ExecutionSpan)
	}
	if a := otlptest.Attrs(x); a["scheduler.outcome"] != "completed" || a["scheduler.attempts"] != int64(1) {
		t.Errorf("execution span attributes %v", a)
	}
	if want := "00-" + ids.TraceID.String() + "-" + hex.EncodeToString(s.SpanId) + "-01"; c.header.Get("traceparent") != want {
		t.Errorf("traceparent %q, the exported span makes %q", c.header.Get("traceparent"), want)
	}
	if hex.EncodeToString(s.ParentSpanId) != ids.ExecutionSpan.String() {
		t.Errorf("parent %x, want the execution's span %s", s.ParentSpanId, ids.ExecutionSpan)
	}
	got := map[string]string{}
	for _, kv := range s.Attributes {
		got[kv.Key] = kv.Value.GetStringValue()
	}
	if got["scheduler.job_id"] != c.header.Get("x-ms-scheduler-jobid") || got["scheduler.outcome"] != "succeeded" || got["scheduler.action"] != "MainAction" {
		t.Errorf("span attributes %v", got)
	}
	key := strings.TrimPrefix(secret, "whsec_")
	if strings.Contains(d.logs.String(), key) {
		t.Error("the signing secret is in the log")
	}
	if strings.Contains(string(d.stored()), key) {
		t.Error("the signing secret is stored in plain text")
	}
}
