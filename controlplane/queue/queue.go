// Package queue holds Bounded, a FIFO queue with a bound that holds memory only for what waits:
// the queues a daemon keeps for bursts most daemons never see (changes a replica must notify,
// last-success lookups) would otherwise hold their whole bound from the start, in every replica.
package queue

import "sync"

// Bounded is a FIFO queue of at most max values. Push waits while it is full, TryPush drops;
// Ready has a token when the queue turned non-empty. Its backing array is let go when drained.
type Bounded[T any] struct {
	max   int
	mu    sync.Mutex
	room  sync.Cond // signalled when values are taken from a full queue
	items []T       // waiting, oldest first; nil when none
	ready chan struct{}
}

// New returns an empty queue of at most max values.
func New[T any](maxLen int) *Bounded[T] {
	q := &Bounded[T]{max: maxLen, ready: make(chan struct{}, 1)}
	q.room.L = &q.mu
	return q
}

// Ready has a token when values were pushed to an empty queue: the consumer then takes until
// nothing is left.
func (q *Bounded[T]) Ready() <-chan struct{} { return q.ready }

// Push queues v, waiting while the queue is full.
func (q *Bounded[T]) Push(v T) {
	q.mu.Lock()
	for len(q.items) >= q.max {
		q.room.Wait()
	}
	q.items = append(q.items, v)
	q.mu.Unlock()
	q.signal()
}

// TryPush queues v; false (v dropped) when the queue is full.
func (q *Bounded[T]) TryPush(v T) bool {
	q.mu.Lock()
	if len(q.items) >= q.max {
		q.mu.Unlock()
		return false
	}
	q.items = append(q.items, v)
	q.mu.Unlock()
	q.signal()
	return true
}

func (q *Bounded[T]) signal() {
	select {
	case q.ready <- struct{}{}:
	default:
	}
}

// Take appends up to n waiting values to dst, oldest first, and removes them from the queue.
func (q *Bounded[T]) Take(dst []T, n int) []T {
	q.mu.Lock()
	defer q.mu.Unlock()
	n = min(n, len(q.items))
	if n == 0 {
		return dst
	}
	full := len(q.items) >= q.max
	dst = append(dst, q.items[:n]...)
	if n == len(q.items) {
		q.items = nil // the drained backing array goes
	} else {
		clear(q.items[:n])
		q.items = q.items[n:]
	}
	if full {
		q.room.Broadcast()
	}
	return dst
}

// Pop takes the oldest waiting value; false when none waits.
func (q *Bounded[T]) Pop() (T, bool) {
	var one [1]T
	if got := q.Take(one[:0], 1); len(got) == 1 {
		return got[0], true
	}
	return one[0], false
}

// Held is the capacity of the queue's backing array (what it holds in memory).
func (q *Bounded[T]) Held() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return cap(q.items)
}
