package dispatch_test

import (
	"fmt"
	"net/http"
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
