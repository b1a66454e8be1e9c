// Package testdb opens the fresh, empty stores tests run on: the driver SCHEDULER_TEST_STORE
// chooses (Open), a SQLite file in the test's temporary directory (SQLite), or a fresh schema of
// the PostgreSQL database SCHEDULER_TEST_POSTGRES names (Postgres). Tests that need PostgreSQL
// skip, naming the variable to set, when none is named; make test names the machine's.
package testdb

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store/sqlite"
)

// EnvStore names the environment variable that chooses the driver the api, dispatch, replica
// and daemon tests run on: empty, a SQLite file in the test's temporary directory; a postgres://
// URL, a fresh schema in that database, dropped when the test ends.
const EnvStore = "SCHEDULER_TEST_STORE"

// Open opens a fresh, empty store of the driver EnvStore chooses and closes it when tb ends.
func Open(tb testing.TB) store.Driver {
	tb.Helper()
	if url := os.Getenv(EnvStore); isPostgres(url) {
		return openPostgres(tb, url)
	}
	return SQLite(tb)
}

// SQLite opens the SQLite driver on a new file in tb's temporary directory and closes it when tb
// ends (an error closing it fails tb).
func SQLite(tb testing.TB) *sqlite.Driver {
	tb.Helper()
	d, err := sqlite.Open(tb.Context(), filepath.Join(tb.TempDir(), "scheduler.db"))
	if err != nil {
		tb.Fatalf("open sqlite: %v", err)
	}
	tb.Cleanup(func() {
		if err := d.Close(); err != nil {
			tb.Errorf("close sqlite: %v", err)
		}
	})
	return d
}

func isPostgres(url string) bool {
	return strings.HasPrefix(url, "postgres://") || strings.HasPrefix(url, "postgresql://")
}
