package dispatch_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/internal/jobstate"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/retry"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"
)

// TestExponentialRetriesOnTheFakeClock: an Exponential policy's retries are due when the
// rulebook's Backoff says (doubling from PT20S, capped at PT1M, jittered by the tag), on the
// fake clock; history records each attempt's time.
func TestExponentialRetriesOnTheFakeClock(t *testing.T) {
	tg := newTarget(t)
	tg.answer("/main", http.StatusServiceUnavailable)
	e := newEnv(t, t0, nil)
	props := wire.JobProperties{StartTime: t0.Add(time.Minute).Format(time.RFC3339), Action: httpAction(tg.URL + "/main")}
	props.Action.RetryPolicy = &wire.RetryPolicy{RetryType: "Exponential", RetryInterval: "PT20S", RetryCount: intp(3), MaxRetryInterval: "PT1M"}
	e.putJob("backoff", props, "Enabled")
	e.start()
	e.clock.Set(t0.Add(time.Minute))
	pol := retry.Policy{Type: retry.Exponential, Interval: 20 * time.Second, Count: 3, MaxInterval: time.Minute}
	var delays []time.Duration
	for i := range 4 {
		h := tg.next(t)
		tag := h.Header.Get("x-ms-execution-tag")
		r := e.record()
		equal(t, fmt.Sprintf("attempt %d retry count", i), r.History.RetryCount, i)
		if i == 3 {
			equal(t, "faulted after the retries", [2]bool{r.Finished, r.Faulted}, [2]bool{true, true})
			break
		}
		d := r.Next.Sub(r.History.EndTime)
		equal(t, fmt.Sprintf("retry %d due", i+1), d, jobstate.Backoff(pol, tag, i))
		delays = append(delays, d)
		e.clock.Set(r.Next)
	}
	// 20 s, 40 s, then the 60 s cap, each within ±20 % and never above the cap.
	for i, base := range []time.Duration{20 * time.Second, 40 * time.Second, time.Minute} {
		if lo, hi := base*8/10, min(base*12/10, time.Minute); delays[i] < lo || delays[i] > hi {
			t.Errorf("delay %d is %v, outside %v..%v", i, delays[i], lo, hi)
		}
	}
}

// TestAHangingTargetFailsAtTheJobsTimeout: a target that never answers holds an attempt only as
// long as the job's timeout (PT1S): the attempt is recorded Failed with a message saying it was
// cancelled, and is retried when the policy says, on the fake clock.
func TestAHangingTargetFailsAtTheJobsTimeout(t *testing.T) {
	release := make(chan struct{})
	hits := make(chan struct{}, 4)
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits <- struct{}{}
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer hang.Close()
	defer close(release)
	e := newEnv(t, t0, nil)
	props := wire.JobProperties{StartTime: t0.Add(time.Minute).Format(time.RFC3339), Action: httpAction(hang.URL + "/slow")}
	props.Action.Timeout = "PT1S"
	props.Action.RetryPolicy = &wire.RetryPolicy{RetryType: "Fixed", RetryInterval: "PT15S", RetryCount: intp(1)}
	e.putJob("hanging", props, "Enabled")
	e.start()
	waitHit := func() {
		t.Helper()
		select {
		case <-hits:
		case <-time.After(30 * time.Second):
			t.Fatal("the target was not called")
		}
	}
	e.clock.Set(t0.Add(time.Minute))
	waitHit()
	start := time.Now()
	r := e.record()
	if took := time.Since(start); took > 10*time.Second {
		t.Fatalf("the attempt took %v; its timeout is 1s", took)
	}
	equal(t, "status", r.History.Status, "Failed")
	equal(t, "message", r.History.Message, "Http action: the attempt was cancelled: no complete answer within its timeout of 1s")
	equal(t, "retried", [2]any{r.Next, r.Attempt}, [2]any{r.History.EndTime.Add(15 * time.Second), 1})
	e.clock.Set(r.Next)
	waitHit()
	r = e.record()
	equal(t, "second attempt", [3]any{r.History.Status, r.History.RetryCount, r.Finished}, [3]any{"Failed", 1, true})
}
