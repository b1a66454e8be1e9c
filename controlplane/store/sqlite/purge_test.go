package sqlite

import (
	"path/filepath"
	"testing"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store/sqlstore"
)

// TestPurgeBeyondSearchesEachJobsBound: the purge beyond the last executions kept walks the jobs
// of its range by their IDs and, for each, searches only the entries at or below its bound in the
// (job_id, repeat_count) index. Joined the other way round (history first), SQLite scanned that
// index from its start for every chunk, every kept entry of every job before the chunk's: at the
// bound (1,000 kept per job) a purge's work grew with the square of the job count.
func TestPurgeBeyondSearchesEachJobsBound(t *testing.T) {
	d, err := Open(t.Context(), filepath.Join(t.TempDir(), "scheduler.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = d.Close() }()
	rows, err := d.w.QueryContext(t.Context(), "EXPLAIN QUERY PLAN "+sqlstore.HistoryPurgeBeyond, 1000, 0, 1000, 500)
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
	want := []string{
		"SEARCH history USING INTEGER PRIMARY KEY (rowid=?)",
		"LIST SUBQUERY 1",
		"SEARCH j USING INTEGER PRIMARY KEY (rowid>? AND rowid<?)",
		"SEARCH h USING COVERING INDEX history_job_repeat (job_id=? AND repeat_count<?)",
	}
	if len(plan) != len(want) {
		t.Fatalf("plan:\n got  %q\n want %q", plan, want)
	}
	for i := range want {
		if plan[i] != want[i] {
			t.Fatalf("plan:\n got  %q\n want %q", plan, want)
		}
	}
}
