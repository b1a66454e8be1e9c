package action_test

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/action"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"
)

// TestAttemptAllocations: what every Http attempt builds costs few allocations: its trace
// identifiers none (the hashed texts stay on the stack; 2 before), its traceparent one (the text),
// and a whole attempt answered 200 with an empty body (schedbench's sink) at most 100 in this
// process, client and server together (107 before the scheduler's headers shared one array and the
// empty answer was no longer read).
func TestAttemptAllocations(t *testing.T) {
	a := action.Attempt{
		ExecutionTag: "0f8fad5b-d9cb-469f-a165-70867728950e", ClientRequestID: "7c9e6679-7425-40de-944b-e07fc1f90ae7",
		JobID: "/subscriptions/8a1f0c2e-57f4-4d4b-9f3e-6f0c2d9b1a77/resourceGroups/scheduler-bench/providers/" +
			"Microsoft.Scheduler/jobCollections/bench-0001/jobs/job-000123",
	}
	ids := a.Trace()
	if n := testing.AllocsPerRun(100, func() { ids = a.Trace() }); n != 0 {
		t.Errorf("Trace: %v allocations, want 0", n)
	}
	want := ids.Traceparent()
	if !traceparentRE.MatchString(want) {
		t.Fatalf("traceparent %q", want)
	}
	if n := testing.AllocsPerRun(100, func() { want = ids.Traceparent() }); n != 1 {
		t.Errorf("Traceparent: %v allocations, want 1", n)
	}

	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	e := action.New(action.Config{})
	at := action.Attempt{Action: &wire.JobErrorAction{Type: "Http", Request: &wire.HTTPRequest{
		URI: srv.URL + "/hook", Method: "POST", Body: "hello",
	}}, ExecutionTag: "t", ClientRequestID: "c", JobID: "/j", JobCollectionID: "/c", Region: "local",
		ExpectedExecution: time.Date(2026, 11, 26, 4, 0, 0, 0, time.UTC)}
	var res action.Result
	n := testing.AllocsPerRun(200, func() { res = e.Do(t.Context(), at) })
	if !res.Success || res.StatusCode != http.StatusOK || res.Message != "HTTP/1.1 200 OK" {
		t.Fatalf("result %+v", res)
	}
	if n > 100 {
		t.Errorf("an attempt: %v allocations, want at most 100", n)
	}
	t.Logf("an attempt: %v allocations", n)
}
