package api

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/dispatch"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/clock"
)

// liveHarness is the API with the real dispatcher (one worker: attempts run one at a time, in
// due order) on the fake clock, and a real receiver that reports the path of every request.
type liveHarness struct {
	*harness
	fake     *clock.Fake
	hits     chan string
	receiver *httptest.Server
	disp     *dispatch.Dispatcher
}

func newLiveHarness(t *testing.T) *liveHarness {
	t.Helper()
	lh := &liveHarness{hits: make(chan string, 1000)}
	lh.receiver = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		lh.hits <- r.URL.Path
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(lh.receiver.Close)
	var disp *dispatch.Dispatcher
	lh.harness = newHarness(t, func(c *Config) {
		lh.fake, _ = c.Clock.(*clock.Fake)
		d, err := dispatch.New(dispatch.Config{Store: c.Store, Clock: c.Clock, Secrets: c.Secrets, Workers: 1})
		if err != nil {
			t.Fatal(err)
		}
		d.TestSignals.Init()
		disp = d
		c.Dispatcher = d
	})
	lh.disp = disp
	t.Cleanup(runDispatcher(t, disp))
	for !disp.Ready() {
		time.Sleep(time.Millisecond)
	}
	lh.collection(collPath, `{"sku":{"name":"Standard"}}`)
	lh.collection(sentinelColl, `{"sku":{"name":"Standard"}}`)
	return lh
}

// sentinelColl holds the sentinel job, whatever happens to jc1.
const sentinelColl = "/subscriptions/sub-a/resourceGroups/rg1/providers/Microsoft.Scheduler/jobCollections/sentinel"

// putOnce creates or replaces job j1: one execution at at, to the receiver's path.
func (lh *liveHarness) putOnce(want int, at time.Time, path string) {
	lh.t.Helper()
	lh.putOnceIn(want, collPath, "j1", at, path)
}

func (lh *liveHarness) putOnceIn(want int, coll, name string, at time.Time, path string) {
	lh.t.Helper()
	lh.must(want, http.MethodPut, coll+"/jobs/"+name+apiVersion, `{"properties":{"startTime":"`+at.Format(time.RFC3339Nano)+
		`","action":{"type":"Http","request":{"uri":"`+lh.receiver.URL+path+`","method":"POST"}}}}`)
}

// claimed waits until job name's occurrence is claimed (its executionCount reaches n).
func (lh *liveHarness) claimed(name string, n int) {
	lh.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for lh.storedJob(name).Status.ExecutionCount < n {
		if time.Now().After(deadline) {
			lh.t.Fatalf("job %s was not claimed", name)
		}
		time.Sleep(time.Millisecond)
	}
}

// unfinished returns the unfinished executions of a job.
func (lh *liveHarness) unfinished(jobID int64) []*store.Execution {
	lh.t.Helper()
	xs, err := lh.store.ExecutionListUnfinished(context.Background(), store.ExecutionListUnfinishedParams{})
	if err != nil {
		lh.t.Fatal(err)
	}
	var out []*store.Execution
	for _, x := range xs {
		if x.JobID == jobID {
			out = append(out, x)
		}
	}
	return out
}

// hitsUntilSentinel moves the clock to a sentinel job's due time (after every other) and returns
// the paths the receiver got before the sentinel's: with one worker, everything due earlier has
// been sent by then.
func (lh *liveHarness) hitsUntilSentinel(at time.Time) []string {
	lh.t.Helper()
	lh.putOnceIn(http.StatusCreated, sentinelColl, "sentinel", at, "/sentinel")
	lh.fake.Set(at)
	var got []string
	for {
		select {
		case p := <-lh.hits:
			if p == "/sentinel" {
				return got
			}
			got = append(got, p)
		case <-time.After(10 * time.Second):
			lh.t.Fatalf("the sentinel did not fire; got %v", got)
		}
	}
}

// due is when the jobs of these tests are due: 12:01:00, 30 s after the harness's t0.
var due = t0.Add(30 * time.Second)

// TestAChangeWinsOverAClaim: an occurrence claimed ahead (up to half a second before it is due)
// and not started is cancelled by a DELETE, a disable of its job or collection; an update makes
// it run once, as updated.
func TestAChangeWinsOverAClaim(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(lh *liveHarness)
		want   []string
	}{
		{"deleted", func(lh *liveHarness) {
			lh.must(http.StatusOK, http.MethodDelete, jobPath, nil)
		}, nil},
		{"disabled", func(lh *liveHarness) {
			lh.must(http.StatusOK, http.MethodPatch, jobPath, `{"properties":{"state":"Disabled"}}`)
		}, nil},
		{"collection disabled", func(lh *liveHarness) {
			lh.must(http.StatusOK, http.MethodPost, collPath+"/disable"+apiVersion, nil)
		}, nil},
		{"collection suspended", func(lh *liveHarness) {
			lh.must(http.StatusOK, http.MethodPatch, collPath+apiVersion, `{"properties":{"state":"Suspended"}}`)
		}, nil},
		{"updated", func(lh *liveHarness) {
			lh.putOnce(http.StatusOK, due, "/updated")
		}, []string{"/updated"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lh := newLiveHarness(t)
			lh.putOnce(http.StatusCreated, due, "/j1")
			lh.fake.Set(due.Add(-400 * time.Millisecond))
			lh.claimed("j1", 1)
			first := lh.unfinished(lh.storedJob("j1").ID)
			if len(first) != 1 {
				t.Fatalf("claimed executions: %d", len(first))
			}
			lh.fake.Set(due.Add(-300 * time.Millisecond))
			tc.change(lh)
			// The claim is cancelled: the dispatcher dropped it from what it holds (the signal
			// comes after that; the store's execution may be gone before it, by the change's own
			// write) and its execution is gone; after an update the occurrence is claimed again,
			// with a new tag.
			if _, err := lh.disp.TestSignals.Cancelled.Wait(10*time.Second, func(c dispatch.Cancelled) bool { return c.Tag == first[0].Tag }); err != nil {
				t.Fatalf("the claim ahead was not cancelled: %v", err)
			}
			deadline := time.Now().Add(10 * time.Second)
			for {
				xs := lh.unfinished(first[0].JobID)
				if (tc.want == nil && len(xs) == 0) || (tc.want != nil && len(xs) == 1 && xs[0].Tag != first[0].Tag) {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("executions of the job after the change: %+v", xs)
				}
				time.Sleep(time.Millisecond)
			}
			got := lh.hitsUntilSentinel(due.Add(time.Second))
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Fatalf("requests before the sentinel: %v, want %v", got, tc.want)
			}
		})
	}
}

// TestAJobDeletedAndRecreated200TimesFiresOnce: in the last half second before it is due, a job
// is created, claimed ahead and deleted 200 times, then created once more: it fires once.
func TestAJobDeletedAndRecreated200TimesFiresOnce(t *testing.T) {
	lh := newLiveHarness(t)
	lh.fake.Set(due.Add(-500 * time.Millisecond))
	for i := range 200 {
		lh.putOnce(http.StatusCreated, due, "/j1")
		lh.claimed("j1", 1)
		lh.fake.Advance(2 * time.Millisecond)
		if i < 199 {
			lh.must(http.StatusOK, http.MethodDelete, jobPath, nil)
		}
	}
	got := lh.hitsUntilSentinel(due.Add(time.Second))
	if fmt.Sprint(got) != "[/j1]" {
		t.Fatalf("requests: %d %v, want one", len(got), got)
	}
}

// TestARunInADisabledOrSuspendedCollectionIsRefused: 409 naming the collection's state; nothing
// runs.
func TestARunInADisabledOrSuspendedCollectionIsRefused(t *testing.T) {
	lh := newLiveHarness(t)
	lh.putOnce(http.StatusCreated, due.Add(time.Hour), "/j1")
	for _, st := range []string{"Disabled", "Suspended"} {
		lh.must(http.StatusOK, http.MethodPatch, collPath+apiVersion, `{"properties":{"state":"`+st+`"}}`)
		r := lh.do(http.MethodPost, collPath+"/jobs/j1/run"+apiVersion, adminToken, nil)
		code, msg := r.errorBody(t)
		if r.status != http.StatusConflict || code != "Conflict" || !strings.Contains(msg, "job collection jc1 is "+st) {
			t.Fatalf("run in a %s collection: %d %s %q", st, r.status, code, msg)
		}
	}
	got := lh.hitsUntilSentinel(due.Add(time.Second))
	if len(got) != 0 {
		t.Fatalf("requests: %v", got)
	}
	if n := lh.storedJob("j1").Status.ExecutionCount; n != 0 {
		t.Fatalf("executionCount %d", n)
	}
}

// TestAJobThatRunsItselfCannotMultiply: a job whose action calls its own /run through the API
// runs once per request from outside: the call it makes is refused by the collection's
// maxRecurrence (it ran a moment ago), and, when the clock has moved past the period (a relay
// that moves it), because its manual run is still in flight.
func TestAJobThatRunsItselfCannotMultiply(t *testing.T) {
	lh := newLiveHarness(t)
	runURL := lh.srv.URL + collPath + "/jobs/%s/run" + apiVersion
	relay := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		lh.fake.Advance(61 * time.Second)
		req, err := http.NewRequestWithContext(r.Context(), http.MethodPost, fmt.Sprintf(runURL, "relayed"), nil)
		if err != nil {
			t.Error(err)
			return
		}
		req.Header.Set("Authorization", r.Header.Get("Authorization"))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Error(err)
			return
		}
		b, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		w.WriteHeader(resp.StatusCode)
		_, _ = w.Write(b)
	}))
	defer relay.Close()
	put := func(name, uri string) {
		lh.must(http.StatusCreated, http.MethodPut, collPath+"/jobs/"+name+apiVersion, `{"properties":{"startTime":"2027-01-01T00:00:00Z",`+
			`"action":{"type":"Http","retryPolicy":{"retryType":"None"},"request":{"uri":"`+uri+`","method":"POST",`+
			`"headers":{"Authorization":"Bearer `+adminToken+`"}}}}}`)
	}
	put("direct", fmt.Sprintf(runURL, "direct"))
	put("relayed", relay.URL)

	for _, tc := range []struct{ job, refusal string }{
		{"direct", "the collection's maxRecurrence (1 Minute) allows its next run from"},
		{"relayed", "already has a manual run in flight"},
	} {
		lh.must(http.StatusOK, http.MethodPost, collPath+"/jobs/"+tc.job+"/run"+apiVersion, nil)
		deadline := time.Now().Add(10 * time.Second)
		var hs []*store.HistoryEntry
		for {
			xs, err := lh.store.ExecutionListUnfinished(t.Context(), store.ExecutionListUnfinishedParams{})
			if err != nil {
				t.Fatal(err)
			}
			j := lh.storedJob(tc.job)
			if hs, err = lh.store.HistoryList(t.Context(), store.HistoryListParams{Job: j.Key}); err != nil {
				t.Fatal(err)
			}
			if len(xs) == 0 && len(hs) > 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: still running: %d executions in flight, %d history entries", tc.job, len(xs), len(hs))
			}
			time.Sleep(5 * time.Millisecond)
		}
		if len(hs) != 1 || !strings.HasPrefix(hs[0].Message, "HTTP/1.1 409 Conflict") || !strings.Contains(hs[0].Message, tc.refusal) {
			t.Fatalf("%s: history %d entries, the first %+v", tc.job, len(hs), hs[0])
		}
		if n := lh.storedJob(tc.job).Status.ExecutionCount; n != 1 {
			t.Fatalf("%s: executionCount %d, want 1", tc.job, n)
		}
		if tc.job == "direct" {
			// From outside, a second run within the period is refused too.
			r := lh.do(http.MethodPost, collPath+"/jobs/direct/run"+apiVersion, adminToken, nil)
			if _, msg := r.errorBody(t); r.status != http.StatusConflict || !strings.Contains(msg, "maxRecurrence") {
				t.Fatalf("second run: %d %s", r.status, msg)
			}
		}
	}
}
