package postgres_test

import (
	"testing"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store/storetest"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store/testdb"
)

func TestConformance(t *testing.T) {
	testdb.PostgresURL(t) // without a database, skip here once rather than in every case
	storetest.Run(t, func(t *testing.T) store.Driver { return testdb.Postgres(t) })
}

// TestDumpCoversSchema: every table and column of the schema is copied by a move or named as
// left behind.
func TestDumpCoversSchema(t *testing.T) {
	storetest.DumpCoversSchema(t, testdb.Postgres(t))
}
