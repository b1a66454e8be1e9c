package replica

import (
	"path/filepath"
	"testing"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/dispatch"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/secret"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store/sqlite"
)

// TestChangeQueueHoldsOnlyWhatWaits: an empty queue holds no room for changes; changes come out
// in the order pushed, at most n at a time; a push to a full queue waits until changes are
// taken; a drained queue lets its memory go.
func TestChangeQueueHoldsOnlyWhatWaits(t *testing.T) {
	q := newChangeQueue()
	if n := q.held(); n != 0 {
		t.Fatalf("a new queue holds room for %d changes, want 0", n)
	}
	for i := range maxQueued {
		q.push(store.Change{Kind: store.ChangeJob, ID: int64(i)})
	}
	pushed := make(chan struct{})
	go func() {
		q.push(store.Change{Kind: store.ChangeJob, ID: maxQueued})
		close(pushed)
	}()
	got := q.take(nil, 1000)
	if len(got) != 1000 || got[0].ID != 0 || got[999].ID != 999 {
		t.Fatalf("took %d changes, %v .. %v; want 1000, ids 0 .. 999", len(got), got[0], got[len(got)-1])
	}
	<-pushed // the waiting push went in once there was room
	var rest []store.Change
	for len(rest) < maxQueued+1-1000 {
		n := len(rest)
		if rest = q.take(rest, maxQueued); len(rest) == n {
			t.Fatalf("queue empty after %d of the %d changes left", n, maxQueued+1-1000)
		}
	}
	for i, c := range rest {
		if c.ID != int64(1000+i) {
			t.Fatalf("change %d of the rest has id %d, want %d", i, c.ID, 1000+i)
		}
	}
	if n := q.held(); n != 0 {
		t.Fatalf("a drained queue holds room for %d changes, want 0", n)
	}
	if got := q.take(nil, 10); len(got) != 0 {
		t.Fatalf("took %d changes from an empty queue", len(got))
	}
}

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
	if n := r.changes.held(); n != 0 {
		t.Fatalf("a new replica holds room for %d changes, want 0", n)
	}
}
