package dispatch_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/dispatch"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
)

// TestManyJobsWithConcurrentUpdatesRunEveryOccurrenceOnce: 40 jobs every minute for 10 minutes
// while the "API" rewrites a quarter of them each minute (forcing claim conflicts and reloads).
// Every job runs every occurrence exactly once, in order, and its status and history agree.
func TestManyJobsWithConcurrentUpdatesRunEveryOccurrenceOnce(t *testing.T) {
	const jobs, minutes = 40, 10
	tg := newTarget(t)
	e := newEnv(t, t0, func(c *dispatch.Config) { c.Workers = 8 })
	ids := make([]int64, jobs)
	for i := range jobs {
		props := everyMinute(t0.Add(time.Minute))
		props.Action = httpAction(fmt.Sprintf("%s/job/%d", tg.URL, i))
		ids[i] = e.putJob(fmt.Sprintf("job-%02d", i), props, "Enabled").ID
	}
	e.start()
	seen := map[string]int{}
	for m := 1; m <= minutes; m++ {
		// Rewrite a quarter of the jobs (as the API does: read, change, conditional put, tell).
		for i := m % 4; i < jobs; i += 4 {
			cur := e.job(ids[i])
			cur.Properties.Action.Request.Headers = map[string]string{"X-Rev": fmt.Sprint(m)}
			if _, _, err := e.store.JobPut(t.Context(), store.JobPutParams{Job: *cur, ExpectVersion: cur.Version, Now: e.clock.Now()}); err != nil {
				t.Fatal(err)
			}
			e.disp.JobChanged(ids[i])
		}
		e.clock.Set(t0.Add(time.Duration(m) * time.Minute))
		for range jobs {
			h := tg.next(t)
			key := h.Path + "@" + h.Header.Get("x-ms-scheduler-expected-execution-time")
			seen[key]++
			if seen[key] > 1 {
				t.Fatalf("%s ran twice", key)
			}
		}
		for range jobs {
			e.record()
		}
	}
	e.quiet(t0.Add((minutes+1)*time.Minute - lookahead))
	tg.noHit(t)
	for i := range jobs {
		for m := 1; m <= minutes; m++ {
			key := fmt.Sprintf("/job/%d@%s", i, t0.Add(time.Duration(m)*time.Minute).Format(time.RFC3339))
			if seen[key] != 1 {
				t.Fatalf("%s ran %d times", key, seen[key])
			}
		}
		j := e.job(ids[i])
		equal(t, "status", [2]any{j.Status.ExecutionCount, j.Status.NextExecutionTime}, [2]any{minutes, t0.Add((minutes + 1) * time.Minute)})
		equal(t, "history", len(e.history(j)), minutes)
	}
}

func TestBacklogGaugeCountsDueAttemptsNotStarted(t *testing.T) {
	tg := newTarget(t)
	block := make(chan struct{})
	tg.block = block
	e := newEnv(t, t0, func(c *dispatch.Config) { c.Workers = 1 })
	for i := range 3 {
		props := everyMinute(t0.Add(time.Minute))
		props.Action = httpAction(fmt.Sprintf("%s/b/%d", tg.URL, i))
		e.putJob(fmt.Sprintf("b%d", i), props, "Enabled")
	}
	e.start()
	e.clock.Set(t0.Add(time.Minute))
	tg.next(t) // the one worker is busy; two attempts wait
	deadline := time.Now().Add(wait)
	for metricValue(t, e.reg, "scheduler_due_backlog", "") != 2 {
		if time.Now().After(deadline) {
			t.Fatalf("backlog = %v, want 2", metricValue(t, e.reg, "scheduler_due_backlog", ""))
		}
		time.Sleep(5 * time.Millisecond)
	}
	close(block)
	tg.next(t)
	tg.next(t)
	for range 3 {
		e.record()
	}
	equal(t, "backlog after", metricValue(t, e.reg, "scheduler_due_backlog", ""), 0.0)
}
