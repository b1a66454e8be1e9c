package dispatch

import (
	"container/heap"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// TestTimeHeapOrdersByTimeThenArrival: random pushes, removals and pops come out in the order of
// their times, equal times first in first out, against a sorted reference; removing what is not
// in the heap changes nothing.
func TestTimeHeapOrdersByTimeThenArrival(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	base := time.Unix(1_800_000_000, 0)
	var h timeHeap
	var in []*timed // the reference: what is in the heap
	for round := range 20_000 {
		switch op := rng.IntN(10); {
		case op < 5:
			it := &timed{}
			h.push(it, base.Add(time.Duration(rng.IntN(50))*time.Second))
			in = append(in, it)
		case op < 7 && len(in) > 0:
			i := rng.IntN(len(in))
			h.remove(in[i])
			h.remove(in[i]) // again: not in the heap any more
			in = slices.Delete(in, i, i+1)
		case len(in) > 0:
			want := slices.MinFunc(in, func(a, b *timed) int {
				if c := a.when().Compare(b.when()); c != 0 {
					return c
				}
				return int(a.seq) - int(b.seq)
			})
			if got := h.pop(); got != want {
				t.Fatalf("round %d: popped %v #%d, want %v #%d", round, got.when(), got.seq, want.when(), want.seq)
			}
			in = slices.DeleteFunc(in, func(x *timed) bool { return x == want })
		}
		if h.len() != len(in) {
			t.Fatalf("round %d: %d in the heap, want %d", round, h.len(), len(in))
		}
	}
	for _, it := range in {
		if !h.contains(it) {
			t.Fatal("an element pushed and not taken out is not in the heap")
		}
	}
}

// TestTimeHeapAllocatesNothingPerWait: pushing and popping what waits (an entry, a held
// execution) allocates nothing once the heap's slice has grown; container/heap's Push took an
// allocation per item, through any.
func TestTimeHeapAllocatesNothingPerWait(t *testing.T) {
	var h timeHeap
	es := make([]entry, 1000)
	at := time.Unix(1_800_000_000, 0)
	for i := range es {
		h.push(&es[i].slot, at.Add(time.Duration(i%7)*time.Second))
	}
	allocs := testing.AllocsPerRun(1000, func() {
		it := h.pop()
		h.push(it, it.when().Add(7*time.Second))
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per pop and push, want 0", allocs)
	}
}

// refItem and refHeap are the container/heap form the loop and the held set each had before
// timeHeap, kept here to measure against.
type refItem struct {
	at    time.Time
	seq   uint64
	index int
}

type refHeap []*refItem

func (h refHeap) Len() int { return len(h) }
func (h refHeap) Less(i, j int) bool {
	if h[i].at.Equal(h[j].at) {
		return h[i].seq < h[j].seq
	}
	return h[i].at.Before(h[j].at)
}
func (h refHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index, h[j].index = i, j
}
func (h *refHeap) Push(x any) {
	it := x.(*refItem) //nolint:forcetypeassert // the benchmark's own type
	it.index = len(*h)
	*h = append(*h, it)
}
func (h *refHeap) Pop() any {
	old := *h
	n := len(old)
	it := old[n-1]
	old[n-1] = nil
	it.index = -1
	*h = old[:n-1]
	return it
}

// BenchmarkTimeHeap: a schedule of 100,000 waits, each op the earliest taken out and scheduled
// again a cycle later (what a fire does to the loop's heap), with timeHeap and with the
// container/heap form it replaced (a new item per push, as the loop made them).
func BenchmarkTimeHeap(b *testing.B) {
	const n = 100_000
	at := time.Unix(1_800_000_000, 0)
	b.Run("timeHeap", func(b *testing.B) {
		var h timeHeap
		es := make([]entry, n)
		for i := range es {
			h.push(&es[i].slot, at.Add(time.Duration(i%600)*time.Second))
		}
		b.ReportAllocs()
		b.ResetTimer()
		for range b.N {
			it := h.pop()
			h.push(it, it.when().Add(600*time.Second))
		}
	})
	b.Run("containerHeap", func(b *testing.B) {
		var h refHeap
		var seq uint64
		for i := range n {
			seq++
			heap.Push(&h, &refItem{at: at.Add(time.Duration(i%600) * time.Second), seq: seq})
		}
		b.ReportAllocs()
		b.ResetTimer()
		for range b.N {
			it := heap.Pop(&h).(*refItem) //nolint:forcetypeassert // the benchmark's own type
			seq++
			heap.Push(&h, &refItem{at: it.at.Add(600 * time.Second), seq: seq})
		}
	})
}

// TestTimeHeapKeepsInstantsBeyondNanoseconds: a wait is kept in Unix ns; an instant past what
// that holds (after 2262) sorts after every other and never falls due, one before 1678 is due
// at once, rather than wrapping around.
func TestTimeHeapKeepsInstantsBeyondNanoseconds(t *testing.T) {
	var h timeHeap
	far, late, early := &timed{}, &timed{}, &timed{}
	h.push(far, time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC))
	h.push(late, time.Date(2100, 1, 1, 0, 0, 0, 1, time.UTC))
	h.push(early, time.Date(1000, 1, 1, 0, 0, 0, 0, time.UTC))
	for i, want := range []*timed{early, late, far} {
		if got := h.pop(); got != want {
			t.Fatalf("pop %d: %v, want %v", i, got.when(), want.when())
		}
	}
	if got := late.when(); !got.Equal(time.Date(2100, 1, 1, 0, 0, 0, 1, time.UTC)) {
		t.Fatalf("2100-01-01T00:00:00.000000001Z kept as %v", got)
	}
	if !far.when().After(time.Date(2262, 1, 1, 0, 0, 0, 0, time.UTC)) || !early.when().Before(time.Date(1678, 1, 1, 0, 0, 0, 0, time.UTC)) {
		t.Fatalf("far and early kept as %v and %v, want after 2262 and before 1678", far.when(), early.when())
	}
}
