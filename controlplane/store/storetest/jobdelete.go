package storetest

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/jobstate"
)

// testJobDeleteCollectionDisabledRace: deleting jobs while their collection is disabled (the
// disabling cancels their waiting backfills) and while others are backfilled succeeds, each
// write in turn: the writes lock a collection's row before its jobs' (PostgreSQL aborted one
// side of a deadlock when a job's delete locked the job and then its collection, for its count).
func testJobDeleteCollectionDisabledRace(t *testing.T, d store.Driver) {
	ctx := t.Context()
	for round := range 5 {
		name := fmt.Sprintf("c%d", round)
		c := putCollection(t, d, name, "Enabled")
		var jobs []*store.Job
		for i := range 12 {
			j := putJob(t, d, name, fmt.Sprintf("j%d", i), "Enabled", t0.Add(time.Hour))
			if i < 8 {
				if _, err := d.ExecutionBackfill(ctx, backfillParams(j, j.Key.Name+"-", 3, t0)); err != nil {
					t.Fatal(err)
				}
			}
			jobs = append(jobs, j)
		}
		errs := make(chan error, 2*len(jobs)+1)
		for i, j := range jobs {
			go func() {
				errs <- d.JobDelete(ctx, store.JobDeleteParams{Key: j.Key})
			}()
			if i >= 8 { // backfilled while deleted: refused, or not found, or stored and deleted
				go func() {
					_, err := d.ExecutionBackfill(ctx, backfillParams(j, j.Key.Name+"-", 3, t0))
					var refused *store.RunRefusedError
					if errors.Is(err, store.ErrNotFound) || errors.As(err, &refused) {
						err = nil
					}
					errs <- err
				}()
			} else {
				errs <- nil
			}
		}
		go func() {
			_, _, err := d.CollectionPut(ctx, store.CollectionPutParams{Collection: newCollection(name, "Disabled"), ExpectVersion: c.Version,
				Now: t0, CancelBackfillOf: jobstate.BackfillOnCollectionChange(jobstate.CollectionEnabled, "Disabled")})
			errs <- err
		}()
		for range 2*len(jobs) + 1 {
			if err := <-errs; err != nil {
				t.Fatalf("round %d: %v", round, err)
			}
		}
	}
	equal(t, "executions left", len(unfinished(t, d)), 0)
}
