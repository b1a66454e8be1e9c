package dispatch

// HeapForTest is what a test's heap reader answers in place of runtime/metrics (see heapState).
type HeapForTest struct{ Allocs, InUse, Live, Goal, Cycles uint64 }

// PaceGCForTest has d's executor read the heap with read and collect with collect instead of
// the runtime's, and measure the bytes per attempt over as few as one attempt. Call it before
// d runs.
func PaceGCForTest(d *Dispatcher, read func() HeapForTest, collect func()) {
	d.exec.gc.read = func() heapState {
		h := read()
		return heapState{allocs: h.Allocs, inUse: h.InUse, live: h.Live, goal: h.Goal, cycles: h.Cycles}
	}
	d.exec.gc.collect = collect
	d.exec.gc.minMeasured = 1
}
