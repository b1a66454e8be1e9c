package api

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/dispatch"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/clock"
)

// TestWithTheDispatcher: the API and the real dispatcher on the fake clock. What the API writes
// (nextExecutionTime) and tells (JobChanged) is what the dispatcher fires on; what the dispatcher
// records is what the API reads back. No sleeping: the fake clock is moved when the dispatcher
// waits on a timer.
func TestWithTheDispatcher(t *testing.T) {
	hit := make(chan string, 8)
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hit <- r.Header.Get("x-ms-scheduler-expected-execution-time")
		w.WriteHeader(http.StatusOK)
	}))
	defer receiver.Close()
	recorded := make(chan store.AttemptRecordResult, 8)
	var fake *clock.Fake
	var disp *dispatch.Dispatcher
	h := newHarness(t, func(c *Config) {
		fake, _ = c.Clock.(*clock.Fake)
		d, err := dispatch.New(dispatch.Config{Store: c.Store, Clock: c.Clock, Secrets: c.Secrets, Workers: 2,
			OnRecord: func(_ store.AttemptRecord, res store.AttemptRecordResult) { recorded <- res }})
		if err != nil {
			t.Fatal(err)
		}
		disp = d
		c.Dispatcher = d
	})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- disp.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("dispatcher: %v", err)
		}
	}()

	h.collection(collPath, `{"sku":{"name":"Standard"}}`)
	// Every minute from 12:01:00, twice.
	h.must(201, http.MethodPut, jobPath, `{"properties":{"startTime":"2026-11-18T12:01:00Z","action":{"type":"Http","request":{"uri":"`+
		receiver.URL+`","method":"POST"}},"recurrence":{"frequency":"Minute","count":2}}}`)
	fire := func(at time.Time) {
		t.Helper()
		timeout := time.After(10 * time.Second)
		for {
			select {
			case exp := <-hit:
				if exp == "" {
					t.Errorf("no x-ms-scheduler-expected-execution-time")
				}
				select {
				case <-recorded:
				case <-timeout:
					t.Fatal("the attempt was not recorded")
				}
				return
			case <-fake.TimerCreated():
				fake.Set(at)
			case <-timeout:
				t.Fatalf("no execution at %v", at)
			}
		}
	}
	fire(time.Date(2026, 11, 18, 12, 1, 0, 0, time.UTC))
	r := h.must(200, http.MethodGet, jobPath, nil)
	st := get(r.json(t), "properties", "status")
	if get(st, "executionCount") != 1.0 || get(st, "lastExecutionTime") != "2026-11-18T12:01:00Z" || get(st, "nextExecutionTime") != "2026-11-18T12:02:00Z" {
		t.Fatalf("status after the first execution %v", st)
	}
	fire(time.Date(2026, 11, 18, 12, 2, 0, 0, time.UTC))
	r = h.must(200, http.MethodGet, jobPath, nil)
	if s := get(r.json(t), "properties", "state"); s != "Completed" || get(r.json(t), "properties", "status", "executionCount") != 2.0 {
		t.Fatalf("after the count: %s", r.body)
	}
	r = h.must(200, http.MethodGet, collPath+"/jobs/j1/history"+apiVersion, nil)
	if v := list(get(r.json(t), "value")); len(v) != 2 || get(v[0], "properties", "expectedExecutionTime") != "2026-11-18T12:02:00Z" ||
		get(v[0], "properties", "repeatCount") != 2.0 || get(v[1], "properties", "status") != "Completed" {
		t.Fatalf("history %s", r.body)
	}
}
