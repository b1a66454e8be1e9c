package dispatch_test

import (
	"testing"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/dispatch"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
)

func TestPurgeRemovesOldHistoryAndFinalJobs(t *testing.T) {
	tg := newTarget(t)
	purged := make(chan [2]int64, 10)
	e := newEnv(t, t0, func(c *dispatch.Config) {
		c.OnPurge = func(h, j int64) { purged <- [2]int64{h, j} }
	})
	props := everyMinute(t0.Add(time.Minute))
	props.Recurrence.Count = intp(1)
	props.Action = httpAction(tg.URL + "/p")
	done := e.putJob("done", props, "Enabled")
	live := everyMinute(t0.Add(time.Minute))
	live.Action = httpAction(tg.URL + "/p")
	kept := e.putJob("kept", live, "Enabled")
	e.start()
	next := func() [2]int64 {
		t.Helper()
		select {
		case p := <-purged:
			return p
		case <-time.After(wait):
			t.Fatal("no purge")
			return [2]int64{}
		}
	}
	equal(t, "purge at start", next(), [2]int64{0, 0})

	e.clock.Set(t0.Add(time.Minute))
	tg.next(t)
	tg.next(t)
	e.record()
	e.record()
	equal(t, "completed", e.job(done.ID).State, "Completed")
	e.putJob("kept", live, "Disabled") // no more fires: its only history entry ages

	// 60 days on (the purge runs hourly): the history older than 60 days (one entry per job)
	// and the Completed job go; the disabled job stays.
	e.clock.Set(t0.Add(dispatch.DefaultRetention + 2*time.Minute))
	for {
		p := next()
		if p == [2]int64{} {
			continue // an hourly purge on the way with nothing to do
		}
		equal(t, "purged history entries and jobs", p, [2]int64{2, 1})
		break
	}
	_, err := e.store.JobGetByID(t.Context(), store.JobGetByIDParams{ID: done.ID})
	if err == nil {
		t.Fatal("the completed job was not purged")
	}
	equal(t, "kept job's history after 60 days", len(e.history(kept)), 0)
	equal(t, "kept job still there", e.job(kept.ID).Key.Name, "kept")
}
