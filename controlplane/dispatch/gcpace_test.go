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
// gcLead before the burst, not when the burst's claims arrive (lookahead before it); not when the
// heap has room for the burst, not when a collection ran since the previous burst started (the
// one the claims' allocations started included: a check while it marks would make runtime.GC run
// a second), and once per burst.
func TestGarbageIsCollectedBeforeABurstNotInIt(t *testing.T) {
	const mb = 1 << 20
	tg := newTarget(t)
	e := newEnv(t, t0, func(cfg *dispatch.Config) { cfg.TargetConcurrency = 2 }) // both attempts under way at once
	var mu sync.Mutex
	// The trigger's floor: 10 + 0.7 * (20 - 10) = 17 MB.
	heap := dispatch.HeapForTest{Live: 10 * mb, Goal: 20 * mb, InUse: 10 * mb}
	collected := make(chan time.Time, 8)
	type look struct {
		at         time.Time
		collecting bool
	}
	looks := make(chan look, 8)
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
		}, func(collecting bool) { looks <- look{at: e.clock.Now(), collecting: collecting} })
	}
	for i := range 2 {
		props := everyMinute(t0.Add(time.Minute))
		props.Action = httpAction(tg.URL + "/burst")
		e.putJob(fmt.Sprintf("j%d", i), props, "Enabled")
	}
	e.start()
	// burst runs the minute's burst of both jobs (claimed ahead, held until due), after setting
	// the heap as it is before its claims, and reports what was collected before it started.
	// gcAfterClaims: a collection completes after the claims arrive, before gcLead ahead of the
	// burst (as one their allocations started does).
	burst := func(minute int, inUse uint64, gcSinceLastBurst, gcAfterClaims bool) []time.Time {
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
		if gcAfterClaims {
			mu.Lock()
			heap.Cycles++
			mu.Unlock()
		}
		at := due.Add(-dispatch.GCLead)
		e.clock.Set(at)
		var got []time.Time
		// From burst 2 on, a measure is known: the executor looks at the heap gcLead before
		// the burst, and no sooner.
		if minute > 1 {
			select {
			case l := <-looks:
				equal(t, fmt.Sprintf("burst %d: the look's time", minute), l.at, at)
				if l.collecting {
					select {
					case c := <-collected:
						got = append(got, c)
					case <-time.After(wait):
						t.Fatalf("burst %d: the collection started was not over within %s", minute, wait)
					}
				}
			case <-time.After(wait):
				t.Fatalf("burst %d: no look at the heap within %s of %s", minute, wait, at)
			}
		}
		equal(t, fmt.Sprintf("burst %d: other looks", minute), len(looks), 0)
		equal(t, fmt.Sprintf("burst %d: other collections", minute), len(collected), 0)
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
	equal(t, "collections before burst 1 (no measure yet)", len(burst(1, 16*mb, false, false)), 0)
	// Minute 2: 12 MB in use + 2 attempts of 3 MB reach 17 MB: collected before it, once.
	equal(t, "collections before burst 2 (12 + 6 MB >= 17 MB)", burst(2, 12*mb, false, false), []time.Time{t0.Add(2*time.Minute - dispatch.GCLead)})
	// Minute 3: the same heap, but a collection ran since burst 2 started: none.
	equal(t, "collections before burst 3 (one ran since burst 2 started)", len(burst(3, 12*mb, true, false)), 0)
	// Minute 4: 10 MB in use + 6 MB stay below 17 MB: none.
	equal(t, "collections before burst 4 (10 + 6 MB < 17 MB)", len(burst(4, 10*mb, false, false)), 0)
	// Minute 5: 11 MB + 6 MB reach it again.
	equal(t, "collections before burst 5 (11 + 6 MB >= 17 MB)", burst(5, 11*mb, false, false), []time.Time{t0.Add(5*time.Minute - dispatch.GCLead)})
	// Minute 6: the heap would reach it, but the claims' own collection completed before the
	// look (a look at the claims, while it marked, collected a second time): none.
	equal(t, "collections before burst 6 (the claims' collection ran before the look)", len(burst(6, 12*mb, false, true)), 0)
	// Minute 7: the same heap, nothing collected since burst 6 started: collected, once.
	equal(t, "collections before burst 7 (12 + 6 MB >= 17 MB)", burst(7, 12*mb, false, false), []time.Time{t0.Add(7*time.Minute - dispatch.GCLead)})
}
