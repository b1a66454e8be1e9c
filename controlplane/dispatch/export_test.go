package dispatch

// HeapForTest is what a test's heap reader answers in place of runtime/metrics (see heapState).
type HeapForTest struct{ Allocs, InUse, Live, Goal, Cycles uint64 }

// GCLead is how long before a burst the pacer looks at the heap.
const GCLead = gcLead

// PaceGCForTest has d's executor read the heap with read and collect with collect instead of
// the runtime's, call looked after each look at the heap before a burst (with whether it started
// a collection), and measure the bytes per attempt over as few as one attempt. Call it before d
// runs.
func PaceGCForTest(d *Dispatcher, read func() HeapForTest, collect func(), looked func(collecting bool)) {
	d.exec.gc.looked = looked
	d.exec.gc.read = func() heapState {
		h := read()
		return heapState{allocs: h.Allocs, inUse: h.InUse, live: h.Live, goal: h.Goal, cycles: h.Cycles}
	}
	d.exec.gc.collect = collect
	d.exec.gc.minMeasured = 1
}
