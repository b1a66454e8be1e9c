package sqlite_test

import (
	"database/sql"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store/sqlite"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store/sqlstore"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"
)

// stateCountFile opens a store file with one collection holding n jobs (every tenth Disabled)
// and a second connection to the file.
func stateCountFile(tb testing.TB, n int) (*sqlite.Driver, *sql.DB) {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "scheduler.db")
	d, err := sqlite.Open(tb.Context(), path)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = d.Close() })
	c, _, err := d.CollectionPut(tb.Context(), store.CollectionPutParams{Collection: store.Collection{
		Key:      store.CollectionKey{Subscription: "s", ResourceGroup: "rg", Name: "c"},
		Location: "westeurope", Properties: wire.JobCollectionProperties{Sku: &wire.Sku{Name: "Standard"}, State: store.CollectionStateEnabled},
	}, Now: time.Unix(0, 0)})
	if err != nil {
		tb.Fatal(err)
	}
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = db.Close() })
	// Rows shaped as JobPut writes them (a properties document of about 700 bytes).
	if _, err := db.ExecContext(tb.Context(), `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < ?)
		INSERT INTO jobs (collection_id, name, name_key, properties, state, created_at, updated_at, version)
		SELECT ?, 'job-'||i, 'job-'||i, printf('%.700c', 'x'), CASE WHEN i % 10 = 0 THEN 'Disabled' ELSE 'Enabled' END, 0, 0, 1 FROM n`,
		n, c.ID); err != nil {
		tb.Fatal(err)
	}
	return d, db
}

// TestJobStateCountReadsItsIndexAlone: the count of every job by collection and state (each
// /metrics scrape's) scans the covering index and nothing else. Without migration 0009 it
// scans the table through the (collection, name) index and sorts for the GROUP BY.
func TestJobStateCountReadsItsIndexAlone(t *testing.T) {
	d, db := stateCountFile(t, 100)
	rows, err := db.QueryContext(t.Context(), "EXPLAIN QUERY PLAN "+sqlstore.JobStateCount)
	if err != nil {
		t.Fatal(err)
	}
	var plan []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, detail)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if want := "SCAN jobs USING COVERING INDEX jobs_state_count"; strings.Join(plan, "; ") != want {
		t.Errorf("plan of the count: %q, want %q", plan, want)
	}
	counts, err := d.JobStateCount(t.Context(), store.JobStateCountParams{})
	if err != nil || len(counts) != 2 || counts[0].State != store.JobStateDisabled || counts[0].N != 10 ||
		counts[1].State != store.JobStateEnabled || counts[1].N != 90 {
		t.Errorf("counts %+v, %v; want 10 Disabled, 90 Enabled", counts, err)
	}
}

// BenchmarkJobStateCount counts 100,000 jobs by state, with the index of migration 0009
// ("index") and with it dropped ("table", the count before it), alternating with -count.
func BenchmarkJobStateCount(b *testing.B) {
	for _, name := range []string{"index", "table"} {
		b.Run(name, func(b *testing.B) {
			d, db := stateCountFile(b, 100_000)
			if name == "table" {
				if _, err := db.ExecContext(b.Context(), `DROP INDEX jobs_state_count`); err != nil {
					b.Fatal(err)
				}
			}
			for b.Loop() {
				if _, err := d.JobStateCount(b.Context(), store.JobStateCountParams{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
