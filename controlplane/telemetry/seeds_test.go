package telemetry

import (
	"strconv"
	"testing"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/dispatch"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
)

// TestLookupQueueHoldsOnlyWhatWaits: a new collector holds no room for lookups; failed first
// executions queue theirs up to seedQueue, the next is dropped, and a drained queue lets its
// memory go.
func TestLookupQueueHoldsOnlyWhatWaits(t *testing.T) {
	c, _ := registered(t, true)
	if n := c.seeds.Held(); n != 0 {
		t.Fatalf("a new collector holds room for %d lookups, want 0", n)
	}
	key := func(i int) store.JobKey {
		return store.JobKey{CollectionKey: store.CollectionKey{Subscription: "s", ResourceGroup: "rg", Name: "c"}, Name: "j" + strconv.Itoa(i)}
	}
	for i := range seedQueue + 1 {
		c.Observe(dispatch.Outcome{Job: key(i), Outcome: dispatch.OutcomeFailed, End: time.Unix(3000, 0)})
	}
	for i := range seedQueue {
		k, ok := c.seeds.Pop()
		if !ok || k != key(i) {
			t.Fatalf("lookup %d: %v %v, want %v", i, k, ok, key(i))
		}
	}
	if k, ok := c.seeds.Pop(); ok {
		t.Fatalf("lookup past the bound queued: %v", k)
	}
	if n := c.seeds.Held(); n != 0 {
		t.Fatalf("a drained queue holds room for %d lookups, want 0", n)
	}
}
