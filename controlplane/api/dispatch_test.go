package api

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
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
	defer runDispatcher(t, disp)()

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

// TestBackfillWithTheDispatcher: POST .../backfill over HTTP with the real dispatcher on the fake
// clock: 202 with the count, the occurrences run one after the other with their expected times,
// a second backfill while the first is unfinished is a 409 naming its execution tag, and the
// history reads back one entry per occurrence, each its own execution.
func TestBackfillWithTheDispatcher(t *testing.T) {
	hit := make(chan http.Header, 16)
	release := make(chan struct{})
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hit <- r.Header.Clone()
		<-release
		w.WriteHeader(http.StatusOK)
	}))
	defer receiver.Close()
	recorded := make(chan struct{}, 16)
	var disp *dispatch.Dispatcher
	h := newHarness(t, func(c *Config) {
		d, err := dispatch.New(dispatch.Config{Store: c.Store, Clock: c.Clock, Secrets: c.Secrets, Workers: 4, TargetConcurrency: 4,
			OnRecord: func(store.AttemptRecord, store.AttemptRecordResult) { recorded <- struct{}{} }})
		if err != nil {
			t.Fatal(err)
		}
		disp = d
		c.Dispatcher = d
	})
	defer runDispatcher(t, disp)()
	released := false
	defer func() {
		if !released {
			close(release)
		}
	}()
	next := func() http.Header {
		t.Helper()
		select {
		case hd := <-hit:
			return hd
		case <-time.After(10 * time.Second):
			t.Fatal("no request reached the receiver")
			return nil
		}
	}

	h.collection(collPath, `{"sku":{"name":"Standard"}}`)
	// Every 15 minutes from 09:00 today (t0 is 12:00:30): [09:00, 10:00) holds four occurrences.
	h.must(201, http.MethodPut, jobPath, `{"properties":{"startTime":"2026-11-18T09:00:00Z","action":{"type":"Http","request":{"uri":"`+
		receiver.URL+`","method":"POST"}},"recurrence":{"frequency":"Minute","interval":15}}}`)
	r := h.must(http.StatusAccepted, http.MethodPost, jobPath[:len(jobPath)-len(apiVersion)]+"/backfill"+apiVersion,
		`{"from":"2026-11-18T09:00:00Z","to":"2026-11-18T10:00:00Z"}`)
	if string(r.body) != `{"count":4,"first":"2026-11-18T09:00:00Z","last":"2026-11-18T09:45:00Z"}` {
		t.Fatalf("202 body %s", r.body)
	}
	first := next()
	r = h.do(http.MethodPost, jobPath[:len(jobPath)-len(apiVersion)]+"/backfill"+apiVersion, adminToken,
		`{"from":"2026-11-18T11:00:00Z","to":"2026-11-18T12:00:00Z"}`)
	if _, msg := r.errorBody(t); r.status != http.StatusConflict ||
		msg != "job j1 has a backfill that is unfinished (execution tag "+first.Get("x-ms-execution-tag")+"): a job runs one backfill at a time" {
		t.Fatalf("second backfill: %d %s", r.status, r.body)
	}
	close(release)
	released = true
	got := []string{first.Get("x-ms-scheduler-expected-execution-time")}
	for range 3 {
		got = append(got, next().Get("x-ms-scheduler-expected-execution-time"))
	}
	want := []string{"2026-11-18T09:00:00Z", "2026-11-18T09:15:00Z", "2026-11-18T09:30:00Z", "2026-11-18T09:45:00Z"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("expected times %v, want %v", got, want)
	}
	for range 4 {
		select {
		case <-recorded:
		case <-time.After(10 * time.Second):
			t.Fatal("an attempt was not recorded")
		}
	}
	r = h.must(200, http.MethodGet, collPath+"/jobs/j1/history"+apiVersion, nil)
	v := list(get(r.json(t), "value"))
	var times []string
	for _, e := range v {
		times = append(times, fmt.Sprintf("#%v %s", get(e, "properties", "repeatCount"), get(e, "properties", "expectedExecutionTime")))
	}
	if strings.Join(times, " ") != "#4 2026-11-18T09:45:00Z #3 2026-11-18T09:30:00Z #2 2026-11-18T09:15:00Z #1 2026-11-18T09:00:00Z" {
		t.Fatalf("history %s", r.body)
	}
	// Finished: the job is backfilled again.
	h.must(http.StatusAccepted, http.MethodPost, jobPath[:len(jobPath)-len(apiVersion)]+"/backfill"+apiVersion,
		`{"from":"2026-11-18T11:00:00Z","to":"2026-11-18T11:10:00Z"}`)
	if e := next().Get("x-ms-scheduler-expected-execution-time"); e != "2026-11-18T11:00:00Z" {
		t.Fatalf("the next backfill's expected time %s", e)
	}
	<-recorded
}
