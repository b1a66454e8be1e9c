package dispatch

import (
	"math"
	"time"
)

// timed is a place in a timeHeap, embedded in what waits for a time: a loop entry (when to claim
// its job's next occurrence) or a held execution (when it is due). Exactly one of entry and held
// points back to its owner. Embedding it, rather than allocating a heap item per wait, costs no
// allocation per occurrence scheduled.
type timed struct {
	at    int64  // when, in Unix ns (see unixNanos)
	seq   uint64 // arrival order among equal times (first in, first out)
	entry *entry
	held  *held
	index int32 // its position in the heap's slice while in it
}

// when is the time t waits for.
func (t *timed) when() time.Time { return time.Unix(0, t.at) }

// unixNanos is t in Unix ns, clamped to what an int64 holds (an instant after 2262 waits
// forever, one before 1678 is due at once): 8 bytes per wait instead of a time.Time's 24.
func unixNanos(t time.Time) int64 {
	const limit = math.MaxInt64/int64(time.Second) - 1
	switch s := t.Unix(); {
	case s > limit:
		return math.MaxInt64
	case s < -limit:
		return math.MinInt64
	}
	return t.UnixNano()
}

// timeHeap is the one indexed min-heap of the package: the scheduler's loop orders its entries
// by when to claim, a heldSet its executions by when they are due. It is written out for its one
// element type (no container/heap: an interface call per comparison and swap, and an allocation
// per push through any).
type timeHeap struct {
	s   []*timed
	seq uint64
}

func (h *timeHeap) len() int { return len(h.s) }

// peek is the earliest element (the heap must not be empty).
func (h *timeHeap) peek() *timed { return h.s[0] }

// contains reports whether t is in the heap.
func (h *timeHeap) contains(t *timed) bool {
	return t.index >= 0 && int(t.index) < len(h.s) && h.s[t.index] == t
}

// push adds t, due at at, after the elements already due at the same time.
func (h *timeHeap) push(t *timed, at time.Time) {
	h.seq++
	t.at, t.seq, t.index = unixNanos(at), h.seq, int32(len(h.s)) //nolint:gosec // a heap holds fewer than 2^31 waits
	h.s = append(h.s, t)
	h.up(len(h.s) - 1)
}

// pop takes out the earliest element (the heap must not be empty).
func (h *timeHeap) pop() *timed {
	t := h.s[0]
	h.removeAt(0)
	return t
}

// remove takes t out; nothing when it is not in the heap.
func (h *timeHeap) remove(t *timed) {
	if h.contains(t) {
		h.removeAt(int(t.index))
	}
}

func (h *timeHeap) removeAt(i int) {
	t := h.s[i]
	n := len(h.s) - 1
	if i != n {
		h.s[i] = h.s[n]
		h.s[i].index = int32(i) //nolint:gosec // below len(h.s)
	}
	h.s[n] = nil
	h.s = h.s[:n]
	t.index = -1
	if i != n {
		if !h.down(i) {
			h.up(i)
		}
	}
}

func (h *timeHeap) less(a, b *timed) bool {
	if a.at != b.at {
		return a.at < b.at
	}
	return a.seq < b.seq
}

func (h *timeHeap) up(i int) {
	s := h.s
	t := s[i]
	for i > 0 {
		p := (i - 1) / 2
		if !h.less(t, s[p]) {
			break
		}
		s[i] = s[p]
		s[i].index = int32(i) //nolint:gosec // below len(h.s)
		i = p
	}
	s[i] = t
	t.index = int32(i) //nolint:gosec // below len(h.s)
}

// down moves the element at i down to its place and reports whether it moved.
func (h *timeHeap) down(i0 int) bool {
	s := h.s
	n := len(s)
	t := s[i0]
	i := i0
	for {
		c := 2*i + 1
		if c >= n {
			break
		}
		if r := c + 1; r < n && h.less(s[r], s[c]) {
			c = r
		}
		if !h.less(s[c], t) {
			break
		}
		s[i] = s[c]
		s[i].index = int32(i) //nolint:gosec // below len(h.s)
		i = c
	}
	s[i] = t
	t.index = int32(i) //nolint:gosec // below len(h.s)
	return i > i0
}
