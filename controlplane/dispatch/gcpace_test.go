package dispatch_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/dispatch"
)

// TestGarbageIsCollectedBeforeABurstNotInIt: when the executor waits, idle, for a burst held
// ahead whose allocations (its attempts times the bytes per attempt the previous burst allocated
// while its attempts were under way) would
// reach the collector's trigger (70 % of the way from the live heap to the goal), it collects
// then, before the burst; not when the heap has room for the burst, not when a collection ran
// since the previous burst started, and once per burst.
func TestGarbageIsCollectedBeforeABurstNotInIt(t *testing.T) {
	const mb = 1 << 20
	tg := newTarget(t)
	e := newEnv(t, t0, func(cfg *dispatch.Config) { cfg.TargetConcurrency = 2 }) // both attempts under way at once
	var mu sync.Mutex
	// The trigger's floor: 10 + 0.7 * (20 - 10) = 17 MB.
	heap := dispatch.HeapForTest{Live: 10 * mb, Goal: 20 * mb, InUse: 10 * mb}
	collected := make(chan time.Time, 8)
	e.setup = func(d *dispatch.Dispatcher) {
		dispatch.PaceGCForTest(d, func() dispatch.HeapForTest {
			mu.Lock()
			defer mu.Unlock()
			return heap
		}, func() {
			mu.Lock()
			heap.Cycles++
			heap.InUse = heap.Live
			mu.Unlock()
			collected <- e.clock.Now()
		})
	}
	for i := range 2 {
		props := everyMinute(t0.Add(time.Minute))
		props.Action = httpAction(tg.URL + "/burst")
		e.putJob(fmt.Sprintf("j%d", i), props, "Enabled")
	}
	e.start()
	// burst runs the minute's burst of both jobs (claimed ahead, held until due), after setting
	// the heap as it is before its claims, and reports what was collected before it started.
	burst := func(minute int, inUse uint64, gcSinceLastBurst bool) []time.Time {
		t.Helper()
		due := t0.Add(time.Duration(minute) * time.Minute)
		mu.Lock()
		heap.InUse = inUse
		if gcSinceLastBurst {
			heap.Cycles++
		}
		mu.Unlock()
		e.clock.Set(due.Add(-lookahead))
		e.quiet(due) // both claimed ahead, held until due
		var got []time.Time
		for len(collected) > 0 {
			got = append(got, <-collected)
		}
		// The burst allocates 3 MB per attempt while its attempts are under way.
		block := make(chan struct{})
		tg.mu.Lock()
		tg.block = block
		tg.mu.Unlock()
		e.clock.Set(due)
		tg.next(t)
		tg.next(t)
		mu.Lock()
		heap.Allocs += 6 * mb
		mu.Unlock()
		close(block)
		e.record()
		e.record()
		return got
	}
	// Minute 1: nothing measured yet.
	equal(t, "collections before burst 1 (no measure yet)", len(burst(1, 16*mb, false)), 0)
	// Minute 2: 12 MB in use + 2 attempts of 3 MB reach 17 MB: collected before it, once.
	equal(t, "collections before burst 2 (12 + 6 MB >= 17 MB)", burst(2, 12*mb, false), []time.Time{t0.Add(2*time.Minute - lookahead)})
	// Minute 3: the same heap, but a collection ran since burst 2 started: none.
	equal(t, "collections before burst 3 (one ran since burst 2 started)", len(burst(3, 12*mb, true)), 0)
	// Minute 4: 10 MB in use + 6 MB stay below 17 MB: none.
	equal(t, "collections before burst 4 (10 + 6 MB < 17 MB)", len(burst(4, 10*mb, false)), 0)
	// Minute 5: 11 MB + 6 MB reach it again.
	equal(t, "collections before burst 5 (11 + 6 MB >= 17 MB)", burst(5, 11*mb, false), []time.Time{t0.Add(5*time.Minute - lookahead)})
}
