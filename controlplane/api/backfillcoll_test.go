package api

import (
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/dispatch"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store/faulty"
)

// TestDisablingTheCollectionStopsTheBackfillInItsOwnWrite: a collection disabled while one of its job's
// backfill runs (the real dispatcher, over HTTP, on the fake clock) stops the backfill in the
// collection's own write, whatever happens after it: here every job write of the disable fails
// (as when the daemon dies between the collection's write and its jobs'), the disable answers
// 500, and still the execution under way finishes and makes nothing due, and a dispatcher
// started again on the store finds nothing of the backfill to run. History: the one that ran.
// Before, the jobs' writes cancelled the backfill: the next execution ran at once and every
// other one after it.
func TestDisablingTheCollectionStopsTheBackfillInItsOwnWrite(t *testing.T) {
	hit := make(chan http.Header, 16)
	release := make(chan struct{})
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hit <- r.Header.Clone()
		<-release
		w.WriteHeader(http.StatusOK)
	}))
	defer receiver.Close()
	released := false
	recorded := make(chan store.AttemptRecordResult, 16)
	var (
		raw   store.Driver
		fails *faulty.Driver
	)
	newDispatcher := func(st store.Driver, c *Config) *dispatch.Dispatcher {
		d, err := dispatch.New(dispatch.Config{Store: st, Clock: c.Clock, Secrets: c.Secrets, Workers: 2,
			OnRecord: func(_ store.AttemptRecord, res store.AttemptRecordResult) { recorded <- res }})
		if err != nil {
			t.Fatal(err)
		}
		d.TestSignals.Init()
		return d
	}
	var first *dispatch.Dispatcher
	var cfg Config
	h := newHarness(t, func(c *Config) {
		raw = c.Store
		fails = faulty.Wrap(c.Store)
		c.Store = fails // the API's writes; the dispatcher's go to the store itself
		first = newDispatcher(raw, c)
		c.Dispatcher = first
		cfg = *c
	})
	stop := runDispatcher(t, first)
	defer func() {
		if !released {
			close(release)
		}
		if stop != nil {
			stop()
		}
	}()

	h.collection(collPath, `{"sku":{"name":"Standard"}}`)
	h.must(http.StatusCreated, http.MethodPut, jobPath, `{"properties":{"startTime":"2026-11-18T09:00:00Z","action":{"type":"Http","request":{"uri":"`+
		receiver.URL+`","method":"POST"}},"recurrence":{"frequency":"Hour"}}}`)
	r := h.must(http.StatusAccepted, http.MethodPost, jobPath[:len(jobPath)-len(apiVersion)]+"/backfill"+apiVersion,
		`{"from":"2026-11-18T09:00:00Z","to":"2026-11-18T12:00:00Z"}`)
	if string(r.body) != `{"count":3,"first":"2026-11-18T09:00:00Z","last":"2026-11-18T11:00:00Z"}` {
		t.Fatalf("202 body %s", r.body)
	}
	var running http.Header
	select {
	case running = <-hit:
	case <-time.After(10 * time.Second):
		t.Fatal("the backfill's first execution did not start")
	}

	writes := fails.Calls("JobPut")
	fails.Fail("JobPut", -1)
	r = h.do(http.MethodPost, collPath+"/disable"+apiVersion, adminToken, nil)
	fails.Clear("JobPut")
	if r.status != http.StatusInternalServerError || fails.Calls("JobPut") != writes+1 {
		t.Fatalf("disable with the jobs' writes failing: %d %s, %d job writes", r.status, r.body, fails.Calls("JobPut")-writes)
	}
	if s := h.storedCollection().Properties.State; s != "Disabled" {
		t.Fatalf("collection %s after the disable, want Disabled", s)
	}

	close(release)
	released = true
	select {
	case res := <-recorded:
		if res.Gone || res.BackfillNext != 0 {
			t.Fatalf("the running one's record: gone %v, made due %d; want nothing made due", res.Gone, res.BackfillNext)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the running execution was not recorded")
	}
	stop()
	stop = nil

	// A start on the store after the crash: it loads nothing of the backfill and runs nothing.
	again := newDispatcher(raw, &cfg)
	stop = runDispatcher(t, again)
	if _, err := again.TestSignals.Quiet.Wait(10*time.Second, func(dispatch.Quiet) bool { return again.Ready() }); err != nil {
		t.Fatalf("the dispatcher started again did not settle: %v", err)
	}
	xs, err := raw.ExecutionListUnfinished(t.Context(), store.ExecutionListUnfinishedParams{})
	if err != nil {
		t.Fatal(err)
	}
	j := h.storedJob("j1")
	hs, err := raw.HistoryList(t.Context(), store.HistoryListParams{Job: j.Key})
	if err != nil {
		t.Fatal(err)
	}
	var history []string
	for _, e := range hs {
		history = append(history, e.ExecutionTag+" "+e.Status+" "+e.ExpectedExecutionTime.UTC().Format(time.RFC3339))
	}
	got := []any{len(xs), j.Status.ExecutionCount, history, len(hit)}
	want := []any{0, 1, []string{running.Get("x-ms-execution-tag") + " Completed 2026-11-18T09:00:00Z"}, 0}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("after the restart (unfinished, executionCount, history, requests): %v, want %v", got, want)
	}
}

// TestACollectionDisabledAsTheBackfillIsStoredRunsNothing: a collection disabled after the API
// read it for a backfill, before the backfill is stored (the real dispatcher, over HTTP), leaves
// nothing to run: the store checks the job and its collection again in the backfill's
// transaction, and the backfill is the 409 the API answers for a disabled collection. Before, it
// was stored (202) and ran, every occurrence, in the disabled collection.
func TestACollectionDisabledAsTheBackfillIsStoredRunsNothing(t *testing.T) {
	hit := make(chan http.Header, 16)
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hit <- r.Header.Clone()
		w.WriteHeader(http.StatusOK)
	}))
	defer receiver.Close()
	var (
		fails *faulty.Driver
		disp  *dispatch.Dispatcher
	)
	h := newHarness(t, func(c *Config) {
		fails = faulty.Wrap(c.Store)
		c.Store = fails
		d, err := dispatch.New(dispatch.Config{Store: fails, Clock: c.Clock, Secrets: c.Secrets, Workers: 2})
		if err != nil {
			t.Fatal(err)
		}
		disp = d
		c.Dispatcher = d
	})
	defer runDispatcher(t, disp)()

	h.collection(collPath, `{"sku":{"name":"Standard"}}`)
	h.must(http.StatusCreated, http.MethodPut, jobPath, `{"properties":{"startTime":"2026-11-18T09:00:00Z","action":{"type":"Http","request":{"uri":"`+
		receiver.URL+`","method":"POST"}},"recurrence":{"frequency":"Hour"}}}`)
	disabled := make(chan int, 1)
	fails.Before("ExecutionBackfill", func() {
		disabled <- h.do(http.MethodPost, collPath+"/disable"+apiVersion, adminToken, nil).status
	})
	r := h.do(http.MethodPost, jobPath[:len(jobPath)-len(apiVersion)]+"/backfill"+apiVersion, adminToken,
		`{"from":"2026-11-18T09:00:00Z","to":"2026-11-18T12:00:00Z"}`)
	code, msg := "", ""
	if r.status != http.StatusAccepted {
		code, msg = r.errorBody(t)
	}
	xs, err := h.store.ExecutionListUnfinished(t.Context(), store.ExecutionListUnfinishedParams{})
	if err != nil {
		t.Fatal(err)
	}
	got := []any{<-disabled, r.status, code, msg, len(xs), h.storedJob("j1").Status.ExecutionCount, len(hit)}
	want := []any{http.StatusOK, http.StatusConflict, "Conflict", "job collection jc1 is Disabled: its jobs do not run, not even on request", 0, 0, 0}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("(disable, backfill status, code, message, stored, executionCount, requests) %v, want %v", got, want)
	}
}
