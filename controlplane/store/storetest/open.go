package storetest

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store/sqlite"
)

// EnvStore names the environment variable that chooses the driver the api, dispatch and daemon
// tests run on: empty, a SQLite file in the test's temporary directory; a postgres:// URL, a
// fresh schema in that database, dropped when the test ends.
const EnvStore = "SCHEDULER_TEST_STORE"

// Open opens a fresh, empty store of the driver EnvStore chooses and closes it when tb ends.
func Open(tb testing.TB) store.Driver {
	tb.Helper()
	url := os.Getenv(EnvStore)
	if url == "" {
		d, err := sqlite.Open(tb.Context(), filepath.Join(tb.TempDir(), "scheduler.db"))
		if err != nil {
			tb.Fatalf("open sqlite: %v", err)
		}
		tb.Cleanup(func() { _ = d.Close() })
		return d
	}
	return openPostgres(tb, url)
}
