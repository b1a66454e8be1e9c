package action_test

import (
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/action"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"
)

// hanging is a server that never finishes answering: it writes the status line (when
// sendStatus) and then waits until the client goes away or the test ends.
func hanging(t *testing.T, sendStatus bool) *httptest.Server {
	t.Helper()
	done := make(chan struct{})
	var once sync.Once
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if sendStatus {
			w.WriteHeader(http.StatusCreated)
			_, _ = w.Write([]byte("partial"))
			if f, ok := w.(http.Flusher); ok {
				f.Flush()
			}
		}
		select {
		case <-r.Context().Done():
		case <-done:
		}
	}))
	t.Cleanup(func() { once.Do(func() { close(done) }); srv.Close() })
	return srv
}

// checkCancelled: the attempt failed at its 1 s deadline (not the executor's 30 s), saying so.
func checkCancelled(t *testing.T, res action.Result, took time.Duration, what string) {
	t.Helper()
	want := what + ": the attempt was cancelled: no complete answer within its timeout of 1s"
	if res.Success || !strings.HasPrefix(res.Message, want) {
		t.Fatalf("result %+v, want a failure starting %q", res, want)
	}
	if took < time.Second || took > 10*time.Second {
		t.Fatalf("the attempt took %v; its timeout is 1s", took)
	}
}

// TestTimeoutHTTP: a target that never answers, or sends a 2xx status and then hangs in its
// body, holds the attempt no longer than the action's timeout (PT1S), and the attempt fails.
// The error action's own timeout applies to it.
func TestTimeoutHTTP(t *testing.T) {
	e := action.New(action.Config{Timeout: 30 * time.Second})
	for _, tc := range []struct {
		name       string
		sendStatus bool
		errorPhase bool
	}{
		{"no answer", false, false},
		{"status then a hanging body", true, false},
		{"the error action's own timeout", false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := hanging(t, tc.sendStatus)
			a := attempt("Http", nil)
			req := &wire.HTTPRequest{URI: srv.URL + "/hook", Method: "GET"}
			if tc.errorPhase {
				a.MainAction(&wire.JobAction{Type: "Http", Request: req, Timeout: "PT20S",
					ErrorAction: &wire.JobErrorAction{Type: "Http", Request: req, Timeout: "PT1S"}})
				a.ErrorAction(&wire.JobErrorAction{Type: "Http", Request: req, Timeout: "PT1S"})
			} else {
				a.MainAction(&wire.JobAction{Type: "Http", Request: req, Timeout: "PT1S"})
			}
			start := time.Now()
			res := e.Do(t.Context(), a)
			checkCancelled(t, res, time.Since(start), "Http action")
			if tc.sendStatus && res.StatusCode != http.StatusCreated {
				t.Errorf("status %d, want the 201 that came before the deadline", res.StatusCode)
			}
		})
	}
}

// TestTimeoutStorageQueue: a queue service that never answers holds the attempt no longer than
// the action's timeout.
func TestTimeoutStorageQueue(t *testing.T) {
	srv := hanging(t, false)
	e := action.New(action.Config{Timeout: 30 * time.Second, StorageQueueEndpoint: srv.URL + "/{account}"})
	a := attempt("StorageQueue", nil)
	a.MainAction(&wire.JobAction{Type: "StorageQueue", Timeout: "PT1S", QueueMessage: &wire.StorageQueueMessage{
		StorageAccount: "acct", QueueName: "queue", SasToken: "sv=1&sig=x", Message: "m"}})
	start := time.Now()
	res := e.Do(t.Context(), a)
	checkCancelled(t, res, time.Since(start), "StorageQueue action")
}

// TestTimeoutServiceBus: a namespace that accepts the connection and never speaks AMQP holds the
// attempt no longer than the action's timeout.
func TestTimeoutServiceBus(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c) // held open, never answered
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		_ = ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			_ = c.Close()
		}
	})
	e := action.New(action.Config{Timeout: 30 * time.Second, ServiceBus: action.ServiceBusConfig{
		Endpoint: "amqp://" + ln.Addr().String(), Auth: action.ServiceBusAuthPlain}})
	defer e.Close()
	a := attempt("ServiceBusQueue", nil)
	a.MainAction(&wire.JobAction{Type: "ServiceBusQueue", Timeout: "PT1S", ServiceBusQueueMessage: &wire.ServiceBusQueueMessage{
		QueueName: "q", ServiceBusMessage: wire.ServiceBusMessage{Namespace: "localbus", Message: "m",
			Authentication: &wire.ServiceBusAuthentication{Type: "SharedAccessKey", SasKeyName: "k", SasKey: "v"}}}})
	start := time.Now()
	res := e.Do(t.Context(), a)
	checkCancelled(t, res, time.Since(start), "ServiceBusQueue action")
}
