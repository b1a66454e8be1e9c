package replica

import (
	"testing"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/dispatch"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/secret"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store/testdb"
)

// TestNewReplicaHoldsNoChangeQueue: a replica that has made no change holds no room for them.
func TestNewReplicaHoldsNoChangeQueue(t *testing.T) {
	box, err := secret.New(make([]byte, 32))
	if err != nil {
		t.Fatal(err)
	}
	r, err := New(Config{Store: testdb.SQLite(t), Dispatch: dispatch.Config{Secrets: box}})
	if err != nil {
		t.Fatal(err)
	}
	if n := r.changes.Held(); n != 0 {
		t.Fatalf("a new replica holds room for %d changes, want 0", n)
	}
}
