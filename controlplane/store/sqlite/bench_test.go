package sqlite_test

import (
	"testing"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store/storetest"
)

// BenchmarkStore is the drivers' shared benchmark suite (storetest.Bench) on a SQLite file.
func BenchmarkStore(b *testing.B) {
	storetest.Bench(b, func(b *testing.B) store.Driver { return openB(b) })
}
