package sqlite_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store/sqlite"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store/storetest"
)

// TestJobQuotaCountKeptByTriggers checks the job count JobPut checks quotas against (a column
// of collections kept by triggers): initialized from the jobs of a file written by an older
// version, then moved by creates, replaces (not at all), deletes and purges.
func TestJobQuotaCountKeptByTriggers(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "scheduler.db")
	v1, err := os.ReadFile("migration/0001_initial.sql")
	if err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	stmts := []string{`CREATE TABLE schema_version (version INTEGER NOT NULL)`, `INSERT INTO schema_version VALUES (1)`, string(v1),
		`INSERT INTO collections (id, subscription, resource_group, name, sub_key, rg_key, name_key, location, tags, properties, state, created_at, updated_at, version)
		 VALUES (7, 's', 'rg', 'c', 's', 'rg', 'c', '', '{}', '{}', 'Enabled', 1, 1, 1)`}
	for i := range 3 {
		stmts = append(stmts, fmt.Sprintf(`INSERT INTO jobs (collection_id, name, name_key, properties, state, created_at, updated_at, version)
			VALUES (7, 'old-%d', 'old-%d', '{}', 'Enabled', 1, 1, 1)`, i, i))
	}
	for _, q := range stmts {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	d, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatalf("open of a version 1 file: %v", err)
	}
	defer func() { _ = d.Close() }()

	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ck := store.CollectionKey{Subscription: "S", ResourceGroup: "RG", Name: "C"}
	put := func(name string, maxJobs int) error {
		t.Helper()
		_, _, err := d.JobPut(ctx, store.JobPutParams{Job: storetest.APIJob(ck, name, now), MaxJobs: maxJobs, Now: now})
		return err
	}
	wantQuota := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, store.ErrQuota) {
			t.Fatalf("%s: error = %v, want ErrQuota", what, err)
		}
	}
	wantQuota("create beside the 3 jobs of the old file, at most 3", put("new-0", 3))
	if err := put("new-0", 4); err != nil {
		t.Fatalf("create with room for a 4th: %v", err)
	}
	wantQuota("a 5th, at most 4", put("new-1", 4))
	if err := put("old-0", 4); err != nil {
		t.Fatalf("replace at the quota: %v", err)
	}
	wantQuota("a 5th after a replace, at most 4", put("new-1", 4))

	if err := d.JobDelete(ctx, store.JobDeleteParams{Key: store.JobKey{CollectionKey: ck, Name: "OLD-1"}}); err != nil {
		t.Fatal(err)
	}
	if err := put("new-1", 4); err != nil {
		t.Fatalf("create after a delete: %v", err)
	}
	wantQuota("a 5th after the delete and create", put("new-2", 4))

	final := storetest.APIJob(ck, "old-2", now)
	final.State = store.JobStateCompleted
	if _, _, err := d.JobPut(ctx, store.JobPutParams{Job: final, Now: now}); err != nil {
		t.Fatal(err)
	}
	if n, err := d.JobPurgeFinal(ctx, store.JobPurgeFinalParams{Before: now.Add(time.Second)}); err != nil || n != 1 {
		t.Fatalf("purge: %d, %v; want 1 job", n, err)
	}
	if err := put("new-2", 4); err != nil {
		t.Fatalf("create after a purge: %v", err)
	}
	wantQuota("a 5th after the purge and create", put("new-3", 4))
	got, err := d.JobCount(ctx, store.JobCountParams{Collection: ck})
	if err != nil || got != 4 {
		t.Fatalf("JobCount = %d, %v; want 4", got, err)
	}
}

// TestJobPutConcurrentEachKeepsItsResult sends 96 job writes at once, so that they are committed
// in shared transactions, and checks that each got its own answer: creates under a quota of 40
// (exactly 40 win), replaces of an existing job with a stale version (conflicts) and with the
// current one (exactly one per version wins), writes to an absent collection, and writes whose
// context is already cancelled (not stored).
func TestJobPutConcurrentEachKeepsItsResult(t *testing.T) {
	d := open(t)
	ctx := t.Context()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ck := store.CollectionKey{Subscription: "s", ResourceGroup: "rg", Name: "c"}
	if _, _, err := d.CollectionPut(ctx, store.CollectionPutParams{Now: now, Collection: store.Collection{Key: ck}}); err != nil {
		t.Fatal(err)
	}
	shared, _, err := d.JobPut(ctx, store.JobPutParams{Job: storetest.APIJob(ck, "shared", now), Now: now})
	if err != nil {
		t.Fatal(err)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()

	const creates, quota, replaces, absent, dropped = 48, 40, 16, 16, 16
	type result struct {
		job     *store.Job
		created bool
		err     error
	}
	results := make([]result, creates+replaces+absent+dropped)
	var wg sync.WaitGroup
	for i := range results {
		wg.Go(func() {
			var p store.JobPutParams
			c := ctx
			switch {
			case i < creates:
				p = store.JobPutParams{Job: storetest.APIJob(ck, fmt.Sprintf("new-%02d", i), now), MaxJobs: quota + 1} // + "shared"
			case i < creates+replaces:
				p = store.JobPutParams{Job: storetest.APIJob(ck, "shared", now), ExpectVersion: shared.Version}
				p.Job.Status.ExecutionCount = i
			case i < creates+replaces+absent:
				p = store.JobPutParams{Job: storetest.APIJob(store.CollectionKey{Subscription: "s", ResourceGroup: "rg", Name: "absent"}, "j", now)}
			default:
				p = store.JobPutParams{Job: storetest.APIJob(ck, fmt.Sprintf("dropped-%02d", i), now)}
				c = cancelled
			}
			p.Now = now
			j, created, err := d.JobPut(c, p)
			results[i] = result{j, created, err}
		})
	}
	wg.Wait()

	won, full := 0, 0
	for i, r := range results[:creates] {
		switch {
		case r.err == nil && r.created && r.job.Key.Name == fmt.Sprintf("new-%02d", i) && r.job.Version == 1 &&
			r.job.Properties.Action.Request.URI == "http://127.0.0.1:1/hook":
			won++
		case errors.Is(r.err, store.ErrQuota) && r.job == nil:
			full++
		default:
			t.Errorf("create %d: %+v", i, r)
		}
	}
	if won != quota || full != creates-quota {
		t.Errorf("creates: %d stored and %d over the quota, want %d and %d", won, full, quota, creates-quota)
	}
	winner := -1
	for i, r := range results[creates : creates+replaces] {
		switch {
		case r.err == nil && !r.created && r.job.Version == shared.Version+1 && r.job.Status.ExecutionCount == creates+i:
			if winner >= 0 {
				t.Errorf("replaces %d and %d both won version %d", winner, creates+i, shared.Version)
			}
			winner = creates + i
		case errors.Is(r.err, store.ErrConflict) && r.job == nil:
		default:
			t.Errorf("replace %d: %+v", creates+i, r)
		}
	}
	for i, r := range results[creates+replaces : creates+replaces+absent] {
		if !errors.Is(r.err, store.ErrNotFound) || r.job != nil {
			t.Errorf("write to an absent collection %d: %+v", i, r)
		}
	}
	for i, r := range results[creates+replaces+absent:] {
		if !errors.Is(r.err, context.Canceled) || r.job != nil {
			t.Errorf("write with a cancelled context %d: %+v", i, r)
		}
	}

	got, err := d.JobGet(ctx, store.JobGetParams{Key: shared.Key})
	if err != nil {
		t.Fatal(err)
	}
	if winner < 0 || got.Version != shared.Version+1 || got.Status.ExecutionCount != winner {
		t.Errorf("shared job: version %d, executionCount %d; want %d and the winner's %d", got.Version, got.Status.ExecutionCount, shared.Version+1, winner)
	}
	jobs, err := d.JobList(ctx, store.JobListParams{Collection: ck})
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != quota+1 {
		t.Errorf("%d jobs stored, want %d (the creates that fit and shared)", len(jobs), quota+1)
	}
}
