package storetest

import (
	"testing"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
)

func openPostgres(tb testing.TB, url string) store.Driver {
	tb.Fatalf("%s=%s: no PostgreSQL driver yet", EnvStore, url)
	return nil
}
