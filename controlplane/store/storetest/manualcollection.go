package storetest

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/jobstate"
)

// testManualRunRefused: a manual claim is made only for a job that may run on request as its
// state and its collection's are in the claim's transaction (jobstate.ManualRunAllowed): in a
// collection disabled or suspended since the caller read it, or of a job that became final, it
// is refused (a *RunRefusedError, an ErrConflict) and nothing is stored or counted; the other
// claims of the call are made (a special one too); a Disabled job of an Enabled collection runs.
func testManualRunRefused(t *testing.T, d store.Driver) {
	ctx := t.Context()
	putCollection(t, d, "on", "Enabled")
	putCollection(t, d, "off", "Disabled")
	putCollection(t, d, "suspended", "Suspended")
	jobs := []*store.Job{
		putJob(t, d, "off", "enabled-in-off", jobstate.Enabled, time.Time{}),
		putJob(t, d, "on", "disabled", jobstate.Disabled, time.Time{}),
		putJob(t, d, "suspended", "disabled-in-suspended", jobstate.Disabled, time.Time{}),
		putJob(t, d, "on", "completed", jobstate.Completed, time.Time{}),
	}
	claims := make([]store.ExecutionClaim, len(jobs))
	for i, j := range jobs {
		claims[i] = manualClaim(j, j.Key.Name)
	}
	res, err := d.ExecutionClaimMany(ctx, store.ExecutionClaimManyParams{Now: t0, Claims: claims})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for i, r := range res {
		var refused *store.RunRefusedError
		switch {
		case r.Err == nil && r.Execution != nil:
			got[jobs[i].Key.Name] = fmt.Sprintf("claimed %s #%d", r.Execution.Tag, r.Execution.RepeatCount)
		case errors.As(r.Err, &refused) && errors.Is(r.Err, store.ErrConflict) && r.Execution == nil:
			got[jobs[i].Key.Name] = "refused: " + refused.State + " in " + refused.CollectionState
		default:
			t.Fatalf("claim %s: %+v", jobs[i].Key.Name, r)
		}
	}
	equal(t, "claims", got, map[string]string{
		"enabled-in-off":        "refused: Enabled in Disabled",
		"disabled":              "claimed disabled #1",
		"disabled-in-suspended": "refused: Disabled in Suspended",
		"completed":             "refused: Completed in Enabled",
	})
	var tags []string
	for _, x := range unfinished(t, d) {
		tags = append(tags, x.Tag)
	}
	equal(t, "stored", tags, []string{"disabled"})
	counts := make([]int, len(jobs))
	for i, j := range jobs {
		counts[i] = getJob(t, d, j.ID).Status.ExecutionCount
	}
	equal(t, "executionCount", counts, []int{0, 1, 0, 0})

	// With a special claim (a skip) in the same call, the manual claim is checked all the same.
	s := putJob(t, d, "on", "scheduled", jobstate.Enabled, t0.Add(time.Hour))
	res, err = d.ExecutionClaimMany(ctx, store.ExecutionClaimManyParams{Now: t0, Claims: []store.ExecutionClaim{
		{Execution: store.Execution{JobID: s.ID, Tag: "skip"}, ExpectVersion: s.Version, NextExecutionTime: t0.Add(2 * time.Hour),
			Skip: &store.HistoryEntry{Status: store.HistorySkipped}},
		manualClaim(jobs[0], "with-a-skip"),
	}})
	if err != nil {
		t.Fatal(err)
	}
	var refused *store.RunRefusedError
	equal(t, "a skip and a manual claim in a disabled collection", []any{res[0].Err, res[0].Skipped, errors.As(res[1].Err, &refused), res[1].Execution == nil},
		[]any{nil, true, true, true})
	equal(t, "executionCount, once skipped", getJob(t, d, jobs[0].ID).Status.ExecutionCount, 0)
}

// testManualRunCollectionDisabledRace: manual claims of a collection's jobs made at the same
// time as the collection's disabling (which also cancels the jobs' waiting backfills, locking
// them) either win, before it, or are refused (a *RunRefusedError); none fails otherwise (a
// deadlock between the two writes' locks), and every claim made after the disabling returned is
// refused.
func testManualRunCollectionDisabledRace(t *testing.T, d store.Driver) {
	ctx := t.Context()
	for round := range 5 {
		name := fmt.Sprintf("c%d", round)
		c := putCollection(t, d, name, "Enabled")
		var jobs []*store.Job
		for i := range 8 {
			j := putJob(t, d, name, fmt.Sprintf("j%d", i), "Enabled", t0.Add(time.Hour))
			if _, err := d.ExecutionBackfill(ctx, backfillParams(j, j.Key.Name+"-", 3, t0)); err != nil {
				t.Fatal(err)
			}
			jobs = append(jobs, j)
		}
		later := putJob(t, d, name, "later", "Enabled", t0.Add(time.Hour)) // claimed once disabled
		errs := make(chan error, len(jobs)+1)
		disabled := make(chan struct{})
		for _, j := range jobs {
			go func() {
				res, err := d.ExecutionClaimMany(ctx, store.ExecutionClaimManyParams{Now: t0, Claims: []store.ExecutionClaim{manualClaim(j, j.Key.Name)}})
				if err == nil {
					err = res[0].Err
				}
				var refused *store.RunRefusedError
				if errors.As(err, &refused) {
					err = nil
				}
				errs <- err
			}()
		}
		go func() {
			_, _, err := d.CollectionPut(ctx, store.CollectionPutParams{Collection: newCollection(name, "Disabled"), ExpectVersion: c.Version,
				Now: t0, CancelBackfillOf: jobstate.BackfillOnCollectionChange(jobstate.CollectionEnabled, "Disabled")})
			close(disabled)
			errs <- err
		}()
		for range len(jobs) + 1 {
			if err := <-errs; err != nil {
				t.Fatalf("round %d: %v", round, err)
			}
		}
		<-disabled
		res, err := d.ExecutionClaimMany(ctx, store.ExecutionClaimManyParams{Now: t0, Claims: []store.ExecutionClaim{manualClaim(later, "after")}})
		if err != nil {
			t.Fatal(err)
		}
		var refused *store.RunRefusedError
		if !errors.As(res[0].Err, &refused) {
			t.Fatalf("round %d: a manual claim after the disabling: %+v, want refused", round, res[0])
		}
	}
}
