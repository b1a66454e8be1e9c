package api

import (
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/dispatch"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
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
	t.Cleanup(runDispatcher(t, disp))
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

// TestJobCreateInAKnownCollectionReadsNothing: a job PUT in a collection the API read before
// creates the job without reading (knownCollections); the store refuses that blind create when
// the job exists or the collection changed (its limits, or another collection of the same name),
// and the PUT then reads and answers as it always did.
func TestJobCreateInAKnownCollectionReadsNothing(t *testing.T) {
	var f *faulty.Driver
	h := newHarness(t, func(c *Config) { f = faulty.Wrap(c.Store); c.Store = f })
	last, lastWrites := 0, 0
	reads := func() int {
		n := 0
		for _, method := range jobReads {
			n += f.Calls(method)
		}
		n, last = n-last, n
		return n
	}
	writes := func() int {
		n := f.Calls("JobPut")
		n, lastWrites = n-lastWrites, n
		return n
	}
	job := func(name string) string { return collPath + "/jobs/" + name + apiVersion }
	body := func(frequency string) string {
		return `{"properties":{"startTime":"2026-12-01T10:00:00Z","action":{"type":"Http","request":{"uri":"http://example.com/x","method":"GET"}},` +
			`"recurrence":{"frequency":"` + frequency + `"}}}`
	}
	h.collection(collPath, `{"sku":{"name":"Standard"}}`)
	reads()
	h.must(http.StatusCreated, http.MethodPut, job("a"), body("Minute"))
	if n := reads(); n != 1 {
		t.Fatalf("reads of the first PUT in the collection: %d, want 1", n)
	}
	h.must(http.StatusCreated, http.MethodPut, job("b"), body("Minute"))
	if n := reads(); n != 0 {
		t.Fatalf("reads of a create in a known collection: %d, want 0", n)
	}
	writes()
	// A replace: the blind create is refused (the job exists), the PUT reads and replaces.
	h.must(http.StatusOK, http.MethodPut, job("a"), body("Hour"))
	if r, w := reads(), writes(); r != 1 || w != 2 {
		t.Fatalf("reads and writes of a replace: %d and %d, want 1 and 2 (the refused create)", r, w)
	}
	if j, err := h.store.JobGet(t.Context(), store.JobGetParams{Key: store.JobKey{
		CollectionKey: store.CollectionKey{Subscription: "sub-a", ResourceGroup: "rg1", Name: "jc1"}, Name: "a"}}); err != nil || j.Version != 2 || j.Properties.Recurrence.Frequency != "Hour" {
		t.Fatalf("replaced job: %+v, %v", j, err)
	}
	// After a replace, the next PUT is not tried blind: it reads, and writes once.
	h.must(http.StatusOK, http.MethodPut, job("a"), body("Hour"))
	if r, w := reads(), writes(); r != 1 || w != 1 {
		t.Fatalf("reads and writes of a replace after a replace: %d and %d, want 1 and 1", r, w)
	}
	h.must(http.StatusCreated, http.MethodPut, job("a2"), body("Minute")) // its read finds no job: blind again
	// The collection's limits changed: the blind create is refused, the PUT reads the new limits.
	h.must(http.StatusOK, http.MethodPut, collPath+apiVersion, `{"location":"local","properties":{"sku":{"name":"Standard"},"quota":{"maxRecurrence":{"frequency":"Hour"}}}}`)
	r := h.do(http.MethodPut, job("c"), adminToken, body("Minute"))
	if _, msg := r.errorBody(t); r.status != http.StatusConflict || !strings.Contains(msg, "maxRecurrence (1 Hour)") {
		t.Fatalf("create under the changed limits: %d %s", r.status, r.body)
	}
	// Another collection of the same name (deleted and created again, its version 1 again).
	h.must(http.StatusOK, http.MethodDelete, collPath+apiVersion, nil)
	h.collection(collPath, `{"sku":{"name":"Standard"}}`)
	h.must(http.StatusCreated, http.MethodPut, job("d"), body("Minute")) // known again: version 1
	h.must(http.StatusOK, http.MethodDelete, collPath+apiVersion, nil)
	h.collection(collPath, `{"sku":{"name":"Standard"},"quota":{"maxRecurrence":{"frequency":"Hour"}}}`)
	r = h.do(http.MethodPut, job("e"), adminToken, body("Minute"))
	if _, msg := r.errorBody(t); r.status != http.StatusConflict || !strings.Contains(msg, "maxRecurrence (1 Hour)") {
		t.Fatalf("create in the collection created again: %d %s", r.status, r.body)
	}
	// Gone: 404 as before.
	h.must(http.StatusOK, http.MethodDelete, collPath+apiVersion, nil)
	r = h.do(http.MethodPut, job("f"), adminToken, body("Minute"))
	if r.status != http.StatusNotFound {
		t.Fatalf("create in a deleted collection: %d %s", r.status, r.body)
	}
}
