package dispatch_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/dispatch"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store/testdb"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/jobstate"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"
)

// disabledMidBackfill is what a disabling in the middle of a backfill leaves of each job: its
// state, executionCount and history, and its executions still stored. The same for a single
// process and for replicas.
var disabledMidBackfill = map[string]map[string][]any{
	"job": {"on": {store.JobStateDisabled, 1, []string{"Completed 09:00"}, 0}},
	"collection": {
		"on":  {store.JobStateEnabled, 1, []string{"Completed 09:00"}, 0},
		"off": {store.JobStateDisabled, 1, []string{"Completed 09:00"}, 0},
	},
}

// disableMidBackfill stores jobs every hour from 09:00, "on" (Enabled) and, when what is
// "collection", "off" (Disabled), starts a backfill of 09:00, 10:00 and 11:00 of each
// (backfill) and waits for each first execution to reach its target, where it hangs. Then it
// disables the job ("job") or its collection ("collection") with the write the API makes
// (CancelBackfill, CancelBackfillOf, as the rulebook says), tells the dispatcher (tell), checks
// that the store holds the running executions only, lets them finish and waits for their
// records. It returns what disabledMidBackfill says.
func disableMidBackfill(t *testing.T, e *env, tg *target, what string, backfill func(jobID int64), tell func(jobID, collectionID int64)) map[string][]any {
	t.Helper()
	release := make(chan struct{})
	released := false
	t.Cleanup(func() { // before the dispatcher stops: a request left hanging would hold its stop
		if !released {
			close(release)
		}
	})
	names := []string{"on"}
	if what == "collection" {
		names = append(names, "off")
	}
	jobs := map[string]*store.Job{}
	tg.blockPath = map[string]chan struct{}{}
	for _, name := range names {
		tg.blockPath["/"+name] = release
		state := store.JobStateEnabled
		if name == "off" {
			state = store.JobStateDisabled
		}
		jobs[name] = e.putJob(name, wire.JobProperties{
			StartTime:  t0.Format(time.RFC3339),
			Recurrence: &wire.JobRecurrence{Frequency: "Hour", Interval: intp(1)},
			Action:     httpAction(tg.URL + "/" + name),
		}, state)
	}
	running := map[string]string{}
	for _, name := range names {
		backfill(jobs[name].ID)
		h := tg.next(t)
		equal(t, "first expected time", h.Header.Get("x-ms-scheduler-expected-execution-time"), "2026-06-01T09:00:00Z")
		running[h.Path[1:]] = h.Header.Get("x-ms-execution-tag")
	}
	switch what {
	case "job":
		cur := e.job(jobs["on"].ID)
		off := *cur
		off.State, off.Properties.State, off.Status.NextExecutionTime = store.JobStateDisabled, store.JobStateDisabled, time.Time{}
		cancel := jobstate.BackfillOnChange(cur.State, cur.CollectionState, off.State, cur.CollectionState)
		if _, _, err := e.store.JobPut(t.Context(), store.JobPutParams{Job: off, ExpectVersion: cur.Version, Now: e.clock.Now(), CancelBackfill: cancel}); err != nil {
			t.Fatal(err)
		}
		tell(cur.ID, 0)
	case "collection":
		c := *e.coll
		c.Properties.State = "Disabled"
		cancel := jobstate.BackfillOnCollectionChange(e.coll.Properties.State, c.Properties.State)
		put, _, err := e.store.CollectionPut(t.Context(), store.CollectionPutParams{Collection: c, ExpectVersion: e.coll.Version, Now: e.clock.Now(), CancelBackfillOf: cancel})
		if err != nil {
			t.Fatal(err)
		}
		equal(t, "cancelled by the collection's write", len(put.Cancelled), 4)
		tell(0, c.ID)
	}
	var stored []string
	for _, x := range e.unfinished() {
		stored = append(stored, fmt.Sprintf("%s due=%t", x.Tag, !x.DueAt.Equal(store.BackfillWaiting)))
	}
	var want []string
	for _, name := range names {
		want = append(want, running[name]+" due=true")
	}
	equal(t, "after the disable: the running ones, none waiting", stored, want)

	close(release)
	released = true
	finished := map[string]bool{}
	for range names {
		finished[e.record().History.ExecutionTag] = true
	}
	for _, name := range names {
		equal(t, name+": the running one finished", finished[running[name]], true)
	}
	out := map[string][]any{}
	for _, name := range names {
		j := e.job(jobs[name].ID)
		lines, _ := summary(e.history(j))
		n := 0
		for _, x := range e.unfinished() {
			if x.JobID == j.ID {
				n++
			}
		}
		out[name] = []any{j.State, j.Status.ExecutionCount, lines, n}
	}
	return out
}

// Disabling a job or its collection while its backfill runs, with a single process: the
// execution under way finishes, none of those waiting starts.
func TestDisablingMidBackfill(t *testing.T) {
	for _, what := range []string{"job", "collection"} {
		t.Run(what, func(t *testing.T) {
			tg := newTarget(t)
			e := newEnv(t, t0.Add(5*time.Hour+30*time.Minute), func(c *dispatch.Config) { c.TargetConcurrency = 4 })
			e.start()
			got := disableMidBackfill(t, e, tg, what, func(jobID int64) {
				if err := e.disp.Backfill(t.Context(), jobID, hours(3)); err != nil {
					t.Fatal(err)
				}
			}, func(jobID, collectionID int64) {
				if jobID != 0 {
					e.disp.JobChanged(jobID)
				} else {
					e.disp.CollectionChanged(collectionID)
				}
			})
			e.quiet(time.Time{})
			tg.noHit(t)
			equal(t, "the jobs", got, disabledMidBackfill[what])
		})
	}
}

// Disabling a job or its collection while its backfill runs, with two replicas' executors on one
// PostgreSQL store, each job's backfill started by one of them: the execution under way
// finishes on the replica that runs it, none of those waiting starts on either, and the jobs are
// left as a single process leaves them (TestDisablingMidBackfill).
func TestDisablingMidBackfillAcrossReplicas(t *testing.T) {
	for _, what := range []string{"job", "collection"} {
		t.Run(what, func(t *testing.T) {
			st := testdb.Postgres(t)
			tg := newTarget(t)
			e := newEnvOn(t, st, t0.Add(5*time.Hour+30*time.Minute), nil)
			_, executors := e.replicas(0, time.Hour)
			n := 0
			got := disableMidBackfill(t, e, tg, what, func(jobID int64) {
				if _, err := executors[n%2].Backfill(t.Context(), jobID, hours(3)); err != nil {
					t.Fatal(err)
				}
				n++
			}, func(jobID, collectionID int64) {
				for _, x := range executors {
					if jobID != 0 {
						x.JobChanged(jobID)
					} else {
						x.CollectionChanged(collectionID)
					}
				}
			})
			// Nothing is left in the store for either executor to take.
			tg.noHit(t)
			equal(t, "the jobs", got, disabledMidBackfill[what])
		})
	}
}
