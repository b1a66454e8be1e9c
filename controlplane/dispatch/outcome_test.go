package dispatch_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/dispatch"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"
)

// TestOnOutcomeTellsEachFinishedExecution: Config.OnOutcome hears once of each finished
// execution, after its last attempt is recorded, with its job, tag, outcome and the occurrences
// coalesced into it; not of an attempt that leads to the error action.
func TestOnOutcomeTellsEachFinishedExecution(t *testing.T) {
	tg := newTarget(t)
	tg.answer("/main", http.StatusNotFound)
	outcomes := make(chan dispatch.Outcome, 10)
	e := newEnv(t, t0, func(c *dispatch.Config) { c.OnOutcome = func(o dispatch.Outcome) { outcomes <- o } })
	next := func() dispatch.Outcome {
		t.Helper()
		select {
		case o := <-outcomes:
			return o
		case <-time.After(wait):
			t.Fatal("no outcome")
			return dispatch.Outcome{}
		}
	}
	late := everyMinute(t0)
	late.Action = httpAction(tg.URL + "/m")
	lj := e.putJob("late", late, "Enabled") // next = t0
	rescued := wire.JobProperties{StartTime: t0.Add(10*time.Minute + 45*time.Second).Format(time.RFC3339), Action: httpAction(tg.URL + "/main")}
	rescued.Action.RetryPolicy = &wire.RetryPolicy{RetryType: "None"}
	rescued.Action.ErrorAction = &wire.JobErrorAction{Type: "Http", Request: &wire.HTTPRequest{URI: tg.URL + "/error", Method: "POST"}}
	rj := e.putJob("rescued", rescued, "Enabled")
	// The daemon was down for 10.5 minutes: "late" coalesces 10 occurrences.
	e.clock.Set(t0.Add(10*time.Minute + 30*time.Second))
	e.start()
	tg.next(t)
	e.record()
	o := next()
	hs := e.history(lj)
	equal(t, "coalesced execution", o, dispatch.Outcome{JobID: lj.ID, Job: lj.Key, Tag: hs[0].ExecutionTag, Outcome: dispatch.OutcomeCompleted,
		Missed: 10, Scheduled: t0.Add(10 * time.Minute), End: hs[0].EndTime})

	e.clock.Set(t0.Add(10*time.Minute + 45*time.Second)) // before late's next, at 09:11
	for range 2 {
		tg.next(t)
		e.record()
	}
	o = next()
	hs = e.history(rj)
	equal(t, "execution rescued by its error action", [4]any{o.Job.Name, o.Outcome, o.Tag, o.Missed}, [4]any{"rescued", dispatch.OutcomeFailed, hs[0].ExecutionTag, 0})
	select {
	case o := <-outcomes:
		t.Errorf("one outcome too many: %+v", o)
	default:
	}
}
