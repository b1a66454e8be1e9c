package dispatch_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/dispatch"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"
)

// TestAHangingTargetDoesNotDelayTheOthers: 300 attempts due together on a target that never
// answers take at most TargetConcurrency workers; occurrences due meanwhile on another target
// start when due (the fake clock does not move: they start at their due time or never), and the
// hanging target's later occurrences are not claimed while it is saturated: they wait in the
// store, unclaimed, and are coalesced when it recovers.
func TestAHangingTargetDoesNotDelayTheOthers(t *testing.T) {
	release := make(chan struct{})
	var hung atomic.Int64
	hangs := make(chan struct{}, 1000)
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hung.Add(1)
		hangs <- struct{}{}
		<-release
		w.WriteHeader(http.StatusOK)
	}))
	defer slow.Close()
	var once sync.Once
	unblock := func() { once.Do(func() { close(release) }) }
	defer unblock()
	other := newTarget(t)

	e := newEnv(t, t0, func(c *dispatch.Config) {
		c.Workers, c.TargetConcurrency, c.BatchSize, c.MisfireThreshold = 16, 4, 8, 10*time.Second
	})
	due := t0.Add(time.Minute)
	for i := range 300 {
		p := wire.JobProperties{StartTime: due.Format(time.RFC3339), Action: httpAction(fmt.Sprintf("%s/hang/%d", slow.URL, i))}
		e.putJob(fmt.Sprintf("hang-%03d", i), p, "Enabled")
	}
	// A recurring job on the hanging target: its occurrences wait while the target is saturated.
	rec := everyMinute(due.Add(time.Minute))
	rec.Action = httpAction(slow.URL + "/recurring")
	recurring := e.putJob("recurring", rec, "Enabled")
	e.start()
	e.clock.Set(due)
	for range 4 {
		select {
		case <-hangs:
		case <-time.After(wait):
			t.Fatal("the hanging target got fewer than 4 requests")
		}
	}

	// Jobs due meanwhile on another target start when due, one after the other.
	for i := range 5 {
		at := due.Add(time.Duration(i+1) * 10 * time.Second)
		p := wire.JobProperties{StartTime: at.Format(time.RFC3339), Action: httpAction(fmt.Sprintf("%s/other/%d", other.URL, i))}
		e.putJob(fmt.Sprintf("other-%d", i), p, "Enabled")
		e.clock.Set(at)
		h := other.next(t)
		equal(t, "request to the other target", h.Path, fmt.Sprintf("/other/%d", i))
		r := e.recordWhileBusy()
		equal(t, "started when due", r.History.StartTime, at)
	}
	equal(t, "attempts under way on the hanging target", hung.Load(), int64(4))

	// The recurring job's occurrences fall due at 09:02, 09:03, 09:04: none is claimed.
	e.clock.Set(due.Add(3*time.Minute + 30*time.Second))
	if _, err := e.disp.TestSignals.Parked.Wait(wait, func(p dispatch.Parked) bool { return p.JobID == recurring.ID }); err != nil {
		t.Fatal(err) // the loop left it unclaimed for want of capacity
	}
	j := e.job(recurring.ID)
	equal(t, "recurring job while its target is saturated", [2]any{j.Status.ExecutionCount, j.Status.NextExecutionTime},
		[2]any{0, due.Add(time.Minute)})
	equal(t, "backlog gauge: 300-4 claimed waiting for the target, 1 unclaimed",
		metricValue(t, e.reg, "scheduler_due_backlog", ""), 297.0)
	equal(t, "attempts under way on the hanging target", hung.Load(), int64(4))

	// The target recovers: the claimed ones run, then the recurring job's three missed
	// occurrences (more than MisfireThreshold late) run as one.
	unblock()
	for {
		r := e.recordWhileBusy()
		if r.JobID != recurring.ID {
			continue
		}
		equal(t, "coalesced", [2]any{r.History.ExpectedExecutionTime, strings.HasPrefix(r.History.Message, "2 missed occurrence(s) before")},
			[2]any{due.Add(3 * time.Minute), true})
		break
	}
	equal(t, "attempts on the hanging target", hung.Load(), int64(301))
}

// recordWhileBusy waits for the next record while attempts are under way: records then wait up
// to 250 ms (of the fake clock, moved 50 ms at a time here) before they are committed.
func (e *env) recordWhileBusy() store.AttemptRecord {
	e.t.Helper()
	deadline := time.After(wait)
	for {
		select {
		case r := <-e.records:
			return r
		case <-deadline:
			e.t.Fatal("no attempt was recorded")
		case <-time.After(20 * time.Millisecond):
			e.clock.Advance(50 * time.Millisecond)
		}
	}
}
