package dispatch_test

import (
	"testing"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/dispatch"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store/faulty"
)

// TestFailedReloadLosesNoChange: a job written while the loop runs, whose reload fails (the
// database unreachable a moment), is read again a second later and fires when due; dropped, the
// change would wait for the next full load of the schedule.
func TestFailedReloadLosesNoChange(t *testing.T) {
	tg := newTarget(t)
	var f *faulty.Driver
	e := newEnv(t, t0, func(c *dispatch.Config) {
		f = faulty.Wrap(c.Store)
		c.Store = f
	})
	e.start()
	f.Fail("JobGetByID", 2)
	due := t0.Add(time.Minute)
	props := everyMinute(due)
	props.Action = httpAction(tg.URL + "/r")
	e.changeJob("j", props, "Enabled")
	// The fake clock moves on in small steps until the loop is quiet with the job's occurrence
	// next: the two failed reads were each followed by another a second later.
	for i := 0; ; i++ {
		if _, err := e.disp.TestSignals.Quiet.Wait(20*time.Millisecond, func(q dispatch.Quiet) bool {
			return q.Next.Equal(due.Add(-lookahead))
		}); err == nil {
			break
		}
		if i == 100 {
			t.Fatalf("the job is not scheduled %s after its change (reads: %d)", e.clock.Now().Sub(t0), f.Calls("JobGetByID"))
		}
		e.clock.Advance(100 * time.Millisecond)
	}
	equal(t, "reads of the job", f.Calls("JobGetByID"), 3)
	if e.clock.Now().Before(t0.Add(2 * time.Second)) {
		t.Fatalf("the job was read again %s after its change, want two retries a second apart", e.clock.Now().Sub(t0))
	}
	e.clock.Set(due)
	h := tg.next(t)
	equal(t, "expected time", h.Header.Get("x-ms-scheduler-expected-execution-time"), "2026-06-01T09:01:00Z")
}
