package action_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/action"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/brokertest"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"
)

// failure is what the tests below tell the error action: a 503 after 3 attempts, its reason on
// two lines (only the first is sent).
var failure = &action.Failure{Status: 503, Reason: "HTTP/1.1 503 Service Unavailable\nthe body", Attempts: 3}

// TestFailureHeadersHTTP: an error action's request says what failed; an attempt without a
// Failure (every main action's) has none of these headers; a failure without a response sends
// no status.
func TestFailureHeadersHTTP(t *testing.T) {
	rc := &recorder{status: http.StatusOK}
	srv := httptest.NewServer(rc)
	defer srv.Close()
	e := action.New(action.Config{})
	a := attempt("Http", &wire.HTTPRequest{URI: srv.URL, Method: "POST"})
	a.Failure = failure
	if res := e.Do(t.Context(), a); !res.Success {
		t.Fatal(res.Message)
	}
	a.Failure = &action.Failure{Reason: "Http action: the attempt was cancelled: no complete answer within its timeout of 1s", Attempts: 1}
	e.Do(t.Context(), a)
	a.Failure = nil
	e.Do(t.Context(), a)
	got := rc.requests()
	want := []map[string]string{
		{"X-Ms-Scheduler-Failed-Status": "503", "X-Ms-Scheduler-Failed-Reason": "HTTP/1.1 503 Service Unavailable", "X-Ms-Scheduler-Attempts": "3"},
		{"X-Ms-Scheduler-Failed-Status": "", "X-Ms-Scheduler-Failed-Reason": "Http action: the attempt was cancelled: no complete answer within its timeout of 1s", "X-Ms-Scheduler-Attempts": "1"},
		{"X-Ms-Scheduler-Failed-Status": "", "X-Ms-Scheduler-Failed-Reason": "", "X-Ms-Scheduler-Attempts": ""},
	}
	for i, w := range want {
		for k, v := range w {
			if g := got[i].Header.Get(k); g != v {
				t.Errorf("request %d: %s = %q, want %q", i, k, g, v)
			}
		}
		if _, ok := got[i].Header["X-Ms-Scheduler-Failed-Status"]; ok && w["X-Ms-Scheduler-Failed-Status"] == "" {
			t.Errorf("request %d carries an empty status header", i)
		}
	}
	// A long reason is cut to MaxReasonChars runes, control characters dropped.
	a.Failure = &action.Failure{Reason: "\x01" + strings.Repeat("é", 300), Attempts: 5}
	e.Do(t.Context(), a)
	if g := rc.requests()[3].Header.Get("X-Ms-Scheduler-Failed-Reason"); g != strings.Repeat("é", action.MaxReasonChars) {
		t.Errorf("long reason sent as %q", g)
	}
}

// TestFailureInQueueEnvelope: on a real Azurite queue the error action's envelope carries what
// failed; a main action's envelope is Azure's, unchanged.
func TestFailureInQueueEnvelope(t *testing.T) {
	az := brokertest.StartAzurite(t)
	az.CreateQueue(t, "errors")
	e := action.New(action.Config{StorageQueueEndpoint: az.Endpoint()})
	a := attempt("StorageQueue", nil)
	a.ErrorAction(&wire.JobErrorAction{Type: "StorageQueue", QueueMessage: &wire.StorageQueueMessage{
		StorageAccount: brokertest.AzuriteAccount, QueueName: "errors", SasToken: brokertest.AccountSAS("a"), Message: "m"}})
	a.Failure = failure
	if res := e.Do(t.Context(), a); !res.Success {
		t.Fatal(res.Message)
	}
	texts := az.Messages(t, "errors")
	if len(texts) != 1 {
		t.Fatalf("%d messages", len(texts))
	}
	env, err := action.ParseQueueEnvelope(texts[0])
	if err != nil {
		t.Fatal(err)
	}
	if env.FailedStatus != "503" || env.FailedReason != "HTTP/1.1 503 Service Unavailable" || env.Attempts != "3" || env.Message != "m" {
		t.Fatalf("envelope %+v", env)
	}
	if raw := decode(t, texts[0]); !strings.Contains(raw, "<FailedStatus>503</FailedStatus>") {
		t.Fatalf("envelope XML:\n%s", raw)
	}
}

// TestFailureInServiceBusProperties: on the machine's RabbitMQ the error action's message carries
// what failed as application properties.
func TestFailureInServiceBusProperties(t *testing.T) {
	rb := brokertest.UseRabbitMQ(t)
	queue, consumer := rb.NewQueue(t)
	e := busExecutor(rb, rb.Endpoint)
	defer e.Close()
	a := attempt("ServiceBusQueue", nil)
	a.ErrorAction(&wire.JobErrorAction{Type: "ServiceBusQueue", ServiceBusQueueMessage: &wire.ServiceBusQueueMessage{
		ServiceBusMessage: busMessage(rb, rb.Password, "m"), QueueName: queue}})
	a.Failure = failure
	if res := e.Do(t.Context(), a); !res.Success {
		t.Fatal(res.Message)
	}
	got := consumer.Receive(t, 10*time.Second)
	for k, v := range map[string]string{"x-ms-scheduler-failed-status": "503",
		"x-ms-scheduler-failed-reason": "HTTP/1.1 503 Service Unavailable", "x-ms-scheduler-attempts": "3"} {
		if got.ApplicationProperties[k] != v {
			t.Errorf("application property %s = %#v, want %q", k, got.ApplicationProperties[k], v)
		}
	}
}
