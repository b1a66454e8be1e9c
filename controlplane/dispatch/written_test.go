package dispatch_test

import (
	"testing"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/dispatch"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store/faulty"
)

// TestJobWrittenIsNotReadBack: a job the API wrote and handed over as written (JobWritten) is
// scheduled without reading it back from the store (issue 21, result 4: each job decoded once),
// and fires at its time with its definition.
func TestJobWrittenIsNotReadBack(t *testing.T) {
	tg := newTarget(t)
	var f *faulty.Driver
	e := newEnv(t, t0, func(c *dispatch.Config) { f = faulty.Wrap(c.Store); c.Store = f })
	e.start()
	props := everyMinute(t0.Add(time.Minute))
	props.Action = httpAction(tg.URL + "/written")
	e.putJob("j", props, "Enabled")
	e.quiet(t0.Add(time.Minute - lookahead))
	equal(t, "jobs read by ID", f.Calls("JobGetByID"), 0)
	equal(t, "jobs read in batches", f.Calls("JobGetMany"), 0)
	e.clock.Set(t0.Add(time.Minute))
	equal(t, "path", tg.next(t).Path, "/written")
	e.record()
}

// TestLateJobWrittenNeverRuns: a write handed over after a later change of the same job (the
// job disabled, or deleted) leaves at most an entry whose claim the store refuses (the claim
// expects the job at the late write's version): the occurrence never runs, nothing is stored,
// and the loop ends with nothing scheduled.
func TestLateJobWrittenNeverRuns(t *testing.T) {
	for _, later := range []string{"disabled", "deleted"} {
		t.Run(later, func(t *testing.T) {
			tg := newTarget(t)
			e := newEnv(t, t0, nil)
			e.start()
			props := everyMinute(t0.Add(time.Minute))
			props.Action = httpAction(tg.URL + "/late")
			first := e.storeJob("j", props, "Enabled")
			switch later {
			case "disabled":
				e.putJob("j", props, "Disabled")
			case "deleted":
				if err := e.store.JobDelete(t.Context(), store.JobDeleteParams{Key: first.Key}); err != nil {
					t.Fatal(err)
				}
				e.disp.JobChanged(first.ID)
			}
			e.disp.JobWritten(first) // late: the change above reached the scheduler first
			e.quiet(t0.Add(time.Minute - lookahead))
			e.clock.Set(t0.Add(time.Minute))
			e.quiet(time.Time{})
			tg.noHit(t)
			equal(t, "unfinished executions", len(e.unfinished()), 0)
			if later == "disabled" {
				equal(t, "history", len(e.history(first)), 0)
			}
		})
	}
}
