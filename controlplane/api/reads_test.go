package api

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/dispatch"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store/faulty"
)

// jobReads are the store's reads of a job or its collection, by method.
var jobReads = []string{"JobGet", "JobGetByID", "JobGetMany", "JobGetWithCollection", "CollectionGet"}

// TestPutAndRunNowReadTheJobOnce: a job PUT and a POST .../run each read the job and its
// collection in one lookup, and the dispatcher takes the job from the API without reading it
// again (issue 21, result 4: a PUT read the collection, the job, and the job again in the
// dispatcher; run-now read the job three times).
func TestPutAndRunNowReadTheJobOnce(t *testing.T) {
	hits := make(chan string, 10)
	receiver := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) { hits <- r.URL.Path }))
	t.Cleanup(receiver.Close)
	var f *faulty.Driver
	var disp *dispatch.Dispatcher
	h := newHarness(t, func(c *Config) {
		f = faulty.Wrap(c.Store)
		c.Store = f
		d, err := dispatch.New(dispatch.Config{Store: f, Clock: c.Clock, Secrets: c.Secrets, Workers: 1})
		if err != nil {
			t.Fatal(err)
		}
		disp, c.Dispatcher = d, d
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- disp.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("dispatcher: %v", err)
		}
	})
	for !disp.Ready() {
		time.Sleep(time.Millisecond)
	}
	h.collection(collPath, `{"sku":{"name":"Standard"}}`)
	// reads are the reads since the last call.
	last := map[string]int{}
	reads := func() map[string]int {
		m := map[string]int{}
		for _, method := range jobReads {
			if n := f.Calls(method) - last[method]; n > 0 {
				m[method] = n
			}
			last[method] = f.Calls(method)
		}
		return m
	}
	reads()
	// Disabled: the schedule does not fire it; the manual run does.
	h.must(http.StatusCreated, http.MethodPut, jobPath, `{"properties":{"state":"Disabled","action":{"type":"Http","request":{"uri":"`+
		receiver.URL+`/now","method":"POST"}},"recurrence":{"frequency":"Hour"}}}`)
	if got := reads(); !reflect.DeepEqual(got, map[string]int{"JobGetWithCollection": 1}) {
		t.Fatalf("reads of the PUT: %v, want JobGetWithCollection once", got)
	}
	h.must(http.StatusOK, http.MethodPost, collPath+"/jobs/j1/run"+apiVersion, nil)
	if got := reads(); !reflect.DeepEqual(got, map[string]int{"JobGetWithCollection": 1}) {
		t.Fatalf("reads of the run: %v, want JobGetWithCollection once", got)
	}
	select {
	case p := <-hits:
		if p != "/now" {
			t.Fatalf("the manual run called %s, want /now", p)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the manual run did not reach its target")
	}
}
