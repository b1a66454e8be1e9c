package queue

import "testing"

// TestBoundedHoldsOnlyWhatWaits: an empty queue holds no room; values come out in the order
// pushed, at most n at a time; a Push to a full queue waits until values are taken, a TryPush
// is refused; a drained queue lets its memory go.
func TestBoundedHoldsOnlyWhatWaits(t *testing.T) {
	const maxLen = 4096
	q := New[int](maxLen)
	if n := q.Held(); n != 0 {
		t.Fatalf("a new queue holds room for %d values, want 0", n)
	}
	for i := range maxLen {
		q.Push(i)
	}
	if q.TryPush(-1) {
		t.Fatal("TryPush to a full queue took the value")
	}
	pushed := make(chan struct{})
	go func() {
		q.Push(maxLen)
		close(pushed)
	}()
	got := q.Take(nil, 1000)
	if len(got) != 1000 || got[0] != 0 || got[999] != 999 {
		t.Fatalf("took %d values, %v .. %v; want 1000, 0 .. 999", len(got), got[0], got[len(got)-1])
	}
	<-pushed // the waiting push went in once there was room
	var rest []int
	for len(rest) < maxLen+1-1000 {
		n := len(rest)
		if rest = q.Take(rest, maxLen); len(rest) == n {
			t.Fatalf("queue empty after %d of the %d values left", n, maxLen+1-1000)
		}
	}
	for i, v := range rest {
		if v != 1000+i {
			t.Fatalf("value %d of the rest is %d, want %d", i, v, 1000+i)
		}
	}
	if n := q.Held(); n != 0 {
		t.Fatalf("a drained queue holds room for %d values, want 0", n)
	}
	if v, ok := q.Pop(); ok {
		t.Fatalf("popped %d from an empty queue", v)
	}
}

// TestBoundedReady: a push to an empty queue leaves one token, however many values follow.
func TestBoundedReady(t *testing.T) {
	q := New[string](4)
	q.Push("a")
	q.TryPush("b")
	<-q.Ready()
	select {
	case <-q.Ready():
		t.Fatal("a second token for one non-empty spell")
	default:
	}
	if v, ok := q.Pop(); !ok || v != "a" {
		t.Fatalf("Pop: %q %v, want a", v, ok)
	}
}
