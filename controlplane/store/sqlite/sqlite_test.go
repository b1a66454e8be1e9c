package sqlite_test

import (
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store/sqlite"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store/storetest"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store/testdb"
)

func open(t *testing.T) *sqlite.Driver { return testdb.SQLite(t) }

func openB(b *testing.B) *sqlite.Driver { return testdb.SQLite(b) }

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Driver { return open(t) })
}

func TestReopenKeepsDataAndSchemaVersion(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "scheduler.db")
	d, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	key := store.CollectionKey{Subscription: "s", ResourceGroup: "rg", Name: "c"}
	if _, _, err := d.CollectionPut(ctx, store.CollectionPutParams{Collection: store.Collection{Key: key}}); err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	d2, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer func() { _ = d2.Close() }()
	v, err := d2.SchemaVersion(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if v != 9 {
		t.Fatalf("schema version = %d, want 7", v)
	}
	c, err := d2.CollectionGet(ctx, store.CollectionGetParams{Key: key})
	if err != nil {
		t.Fatalf("get after reopen: %v", err)
	}
	if c.Version != 1 || c.Key != key {
		t.Fatalf("after reopen: %+v", c)
	}
}

func TestOpenRefusesNewerSchema(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "scheduler.db")
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{`CREATE TABLE schema_version (version INTEGER NOT NULL)`, `INSERT INTO schema_version VALUES (99)`} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	_, err = sqlite.Open(ctx, path)
	if err == nil || !strings.Contains(err.Error(), "schema version 99 is newer than this binary's 9") {
		t.Fatalf("open of a newer schema: err = %v", err)
	}
}

func TestOpenUpgradesAnOlderSchema(t *testing.T) {
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
	for _, q := range []string{`CREATE TABLE schema_version (version INTEGER NOT NULL)`, `INSERT INTO schema_version VALUES (1)`, string(v1),
		`INSERT INTO collections (subscription, resource_group, name, sub_key, rg_key, name_key, location, tags, properties, state, created_at, updated_at, version)
		 VALUES ('s', 'rg', 'Old', 's', 'rg', 'old', '', '{}', '{}', 'Enabled', 1, 1, 1)`} {
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
	if v, err := d.SchemaVersion(ctx); err != nil || v != 9 {
		t.Fatalf("schema version = %d, %v; want 9 (0009 is the index of the count of jobs by state)", v, err)
	}
	c, err := d.CollectionGet(ctx, store.CollectionGetParams{Key: store.CollectionKey{Subscription: "S", ResourceGroup: "RG", Name: "old"}})
	if err != nil || c.Key.Name != "Old" {
		t.Fatalf("data of the version 1 file: %+v, %v", c, err)
	}
}

// TestDumpCoversSchema: every table and column of the file is copied by a move or named as left
// behind.
func TestDumpCoversSchema(t *testing.T) {
	storetest.DumpCoversSchema(t, open(t))
}
