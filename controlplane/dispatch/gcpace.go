package dispatch

import (
	"runtime"
	rtmetrics "runtime/metrics"
	"sync"
	"sync/atomic"
	"time"
)

// heapState is what the garbage collector's pacing is decided on (runtime/metrics): bytes
// allocated since the start (allocs), in heap objects now (inUse), marked live by the last
// collection (live), the next collection's goal (goal), and the collections completed (cycles).
type heapState struct {
	allocs, inUse, live, goal, cycles uint64
}

// triggerFloor is the least heap at which the runtime may start a collection: its trigger lies
// between 70 % and 95 % of the way from the live heap to the goal (runtime/mgcpacer.go), 70 % at
// the earliest.
func (h heapState) triggerFloor() uint64 {
	if h.goal <= h.live {
		return h.goal
	}
	return h.live + (h.goal-h.live)*7/10
}

// gcPacer has the executor collect garbage before a burst of attempts instead of in it. Between
// bursts the heap grows (claims, records, the attempts themselves); the burst whose allocations
// cross the collector's trigger pays for the collection: its mark takes a quarter of the CPU and
// makes the allocating workers assist it. So when the executor waits, idle, for a burst held
// ahead, it predicts, gcLead before the burst, what the burst will allocate (its executions
// times the bytes per attempt the previous burst allocated, from its start until no attempt was
// left) and, when that would reach the trigger, collects then, in the idle time before the
// burst. At most one collection per burst is started here, and none when one completed since
// the last burst started (the claims' own, 500 ms ahead, included): collections move ahead of
// the bursts, they do not multiply.
type gcPacer struct {
	read    func() heapState
	collect func()
	// done, when set, is called when a collection started here is over (it wakes the
	// executor's loop: a test's quiet signal waits for the collection).
	done func()
	// looked, when set, is called after each look at the heap before a burst (tests), with
	// whether it started a collection.
	looked func(collecting bool)
	// minMeasured is how many attempts a measure of the bytes per attempt needs.
	minMeasured int
	// collecting is set while a collection started here runs (it runs on its own goroutine: the
	// loop does not wait for it).
	collecting atomic.Bool
	// Only the executor's loop goroutine touches the rest.
	inBurst     bool      // attempts held until due started and may still be under way
	started     int       // attempts the burst started
	startAllocs uint64    // allocs when the burst started
	startCycles uint64    // cycles when the last burst started
	perAttempt  uint64    // bytes the last burst measured allocated per attempt (0: none yet)
	lookedAt    time.Time // the burst the last look was for: one look per burst
}

// gcLead is how long before a burst held ahead the pacer looks at the heap and may start a
// collection (a collection of a heap of 25 to 60 MB takes 10 to 40 ms on two cores); gcLeadLeast
// is the least time before the burst it still does (the executor's timer may wake it late, and
// a burst may be taken later than gcLead before its time).
const (
	gcLead      = 100 * time.Millisecond
	gcLeadLeast = gcLead / 2
)

// minAttemptsMeasured is how many attempts a measure of the bytes per attempt needs (a few
// attempts say little about a burst).
const minAttemptsMeasured = 64

func newGCPacer() *gcPacer {
	samples := []rtmetrics.Sample{
		{Name: "/gc/heap/allocs:bytes"},
		{Name: "/memory/classes/heap/objects:bytes"},
		{Name: "/gc/heap/live:bytes"},
		{Name: "/gc/heap/goal:bytes"},
		{Name: "/gc/cycles/total:gc-cycles"},
	}
	var mu sync.Mutex
	return &gcPacer{
		read: func() heapState {
			mu.Lock()
			defer mu.Unlock()
			rtmetrics.Read(samples)
			var v [5]uint64
			for i, s := range samples {
				if s.Value.Kind() == rtmetrics.KindUint64 {
					v[i] = s.Value.Uint64()
				}
			}
			return heapState{allocs: v[0], inUse: v[1], live: v[2], goal: v[3], cycles: v[4]}
		},
		collect:     runtime.GC,
		minMeasured: minAttemptsMeasured,
	}
}

// heldStarting says the executor's loop is about to start an attempt held until due (of a
// burst): the burst's measure starts before its first attempt allocates.
func (p *gcPacer) heldStarting() {
	if !p.inBurst {
		h := p.read()
		p.inBurst, p.started, p.startAllocs, p.startCycles = true, 0, h.allocs, h.cycles
	}
	p.started++
}

// idle says no attempt is queued or under way: a burst started is over, and what it allocated
// per attempt is measured.
func (p *gcPacer) idle() {
	if !p.inBurst {
		return
	}
	p.inBurst = false
	if p.started < p.minMeasured {
		return
	}
	h := p.read()
	p.perAttempt = (h.allocs - p.startAllocs) / uint64(p.started) //nolint:gosec // started > 0
}

// mayCollect reports whether a check before a burst of held executions could start a collection
// (a measure is known and none started here is running): the executor then wakes gcLead before
// the burst for it.
func (p *gcPacer) mayCollect(held int, burst time.Time) bool {
	return held > 0 && p.perAttempt > 0 && !p.collecting.Load() && !burst.Equal(p.lookedAt)
}

// beforeBurst is called when the executor waits, with no attempt queued or under way, for held
// executions (held of them) due at burst, gcLeadLeast to gcLead later: it starts a collection
// when the burst they make would reach the collector's trigger. It looks once per burst.
func (p *gcPacer) beforeBurst(held int, burst time.Time) {
	if !p.mayCollect(held, burst) {
		return
	}
	p.lookedAt = burst
	h := p.read()
	if !shouldCollect(h, p.startCycles, p.perAttempt, held) || !p.collecting.CompareAndSwap(false, true) {
		if p.looked != nil {
			p.looked(false)
		}
		return
	}
	if p.looked != nil {
		p.looked(true)
	}
	p.startCycles = h.cycles // once per burst: cycles has moved on when it is over
	go func() {
		p.collect()
		p.collecting.Store(false)
		if p.done != nil {
			p.done()
		}
	}()
}

// shouldCollect decides whether to collect before a burst of held attempts, perAttempt bytes
// each, given the heap now and the collections completed when the last burst started.
func shouldCollect(h heapState, cyclesAtBurst, perAttempt uint64, held int) bool {
	if h.cycles > cyclesAtBurst {
		return false // a collection ran since the last burst started
	}
	return h.inUse+perAttempt*uint64(held) >= h.triggerFloor() //nolint:gosec // held > 0
}
