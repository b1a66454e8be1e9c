package replica

import (
	"path/filepath"
	"testing"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/dispatch"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/secret"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store/sqlite"
)

// TestNewReplicaHoldsNoChangeQueue: a replica that has made no change holds no room for them.
func TestNewReplicaHoldsNoChangeQueue(t *testing.T) {
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "scheduler.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	box, err := secret.New(make([]byte, 32))
	if err != nil {
		t.Fatal(err)
	}
	r, err := New(Config{Store: st, Dispatch: dispatch.Config{Secrets: box}})
	if err != nil {
		t.Fatal(err)
	}
	if n := r.changes.Held(); n != 0 {
		t.Fatalf("a new replica holds room for %d changes, want 0", n)
	}
}
