package sqlite_test

import (
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store/sqlite"
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
		_, _, err := d.JobPut(ctx, store.JobPutParams{Job: crudJob(ck, name, now), MaxJobs: maxJobs, Now: now})
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

	final := crudJob(ck, "old-2", now)
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
