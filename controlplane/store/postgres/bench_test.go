package postgres_test

import (
	"testing"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store/storetest"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store/testdb"
)

// BenchmarkStore is the drivers' shared benchmark suite (storetest.Bench) on a fresh schema of
// the PostgreSQL database SCHEDULER_TEST_POSTGRES names: a batch is one statement, one round trip.
func BenchmarkStore(b *testing.B) {
	testdb.PostgresURL(b)
	storetest.Bench(b, func(b *testing.B) store.Driver { return testdb.Postgres(b) })
}
