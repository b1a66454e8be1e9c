package api

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/secret"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
)

// concurrentWriteStore wraps the real store: armed, it runs a function just before the next
// JobPut reaches the store, to make a concurrent write happen between the API's read of a job
// and its conditional write.
type concurrentWriteStore struct {
	store.Driver
	mu     sync.Mutex
	before func()
	puts   int
}

func (s *concurrentWriteStore) JobPut(ctx context.Context, params store.JobPutParams) (*store.Job, bool, error) {
	s.mu.Lock()
	fn := s.before
	s.before = nil
	s.puts++
	s.mu.Unlock()
	if fn != nil {
		fn()
	}
	return s.Driver.JobPut(ctx, params)
}

// TestPutRetriesAfterAConcurrentWrite: a PUT whose conditional write loses to a concurrent
// write (as a claim by the dispatcher) reads the job again and writes the body it was sent,
// decoded again (the first attempt's copy was normalized and sealed), on top of the concurrent
// write's status. (Reusing the first attempt's copy would lose the state it was sent: the first
// attempt moves it out of the properties.)
func TestPutRetriesAfterAConcurrentWrite(t *testing.T) {
	var ws *concurrentWriteStore
	h := newHarness(t, func(c *Config) {
		ws = &concurrentWriteStore{Driver: c.Store}
		c.Store = ws
	})
	h.collection(collPath, `{"sku":{"name":"Standard"}}`)
	h.must(http.StatusCreated, http.MethodPut, jobPath, `{"properties":{"action":{"type":"Https","request":{"uri":"https://e.com/first","method":"GET",`+
		`"authentication":{"type":"basic","username":"alice","password":"first-secret"}}},"recurrence":{"frequency":"hour"}}}`)
	created := h.storedJob("j1")

	ws.mu.Lock()
	ws.before = func() {
		j := *created
		j.Status.ExecutionCount = 5
		if _, _, err := h.store.JobPut(t.Context(), store.JobPutParams{Job: j, ExpectVersion: created.Version, Now: t0}); err != nil {
			t.Errorf("concurrent write: %v", err)
		}
	}
	ws.mu.Unlock()
	r := h.must(http.StatusOK, http.MethodPut, jobPath, `{"properties":{"action":{"type":"Https","request":{"uri":"https://e.com/second","method":"POST",`+
		`"authentication":{"type":"basic","username":"bob","password":"second-secret"}}},"recurrence":{"frequency":"minute"},"state":"disabled"}}`)
	if strings.Contains(string(r.body), "second-secret") {
		t.Fatalf("secret in the response: %s", r.body)
	}
	if got := get(r.json(t), "properties", "status", "executionCount"); got != float64(5) {
		t.Errorf("executionCount in the response = %v, want 5 (the concurrent write's)", got)
	}
	if ws.puts != 3 {
		t.Errorf("JobPut called %d times, want 3 (create, the attempt that lost, the retry)", ws.puts)
	}

	j := h.storedJob("j1")
	if j.Version != created.Version+2 || j.Status.ExecutionCount != 5 || j.State != store.JobStateDisabled {
		t.Errorf("stored version %d, executionCount %d, state %s; want %d, 5, Disabled", j.Version, j.Status.ExecutionCount, j.State, created.Version+2)
	}
	p := j.Properties
	stored := p.Action.Request.Authentication.Password
	if !secret.IsSealed(stored) {
		t.Fatalf("stored password %q is not sealed", stored)
	}
	if err := h.box.OpenJob(&p, j.Key); err != nil {
		t.Fatal(err)
	}
	rq := p.Action.Request
	if rq.URI != "https://e.com/second" || rq.Method != "POST" || rq.Authentication.Username != "bob" ||
		rq.Authentication.Password != "second-secret" || p.Recurrence.Frequency != "Minute" {
		t.Errorf("stored after the retry: %s %s %+v, frequency %s", rq.Method, rq.URI, *rq.Authentication, p.Recurrence.Frequency)
	}
}
