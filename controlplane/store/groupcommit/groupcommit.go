// Package groupcommit runs concurrent requests in groups (group commit): the first caller to find
// no group running leads; it lets the goroutines ready to run go first while they keep adding
// requests (gather), takes every request queued (up to Max), runs them together, hands the lead to
// the first request queued meanwhile, then wakes the requests it ran. The store drivers use it so
// that concurrent writes share one transaction and one commit.
package groupcommit

import (
	"runtime"
	"sync"
)

// maxYields bounds how often a leader yields to goroutines ready to run before it takes its group
// (gather).
const maxYields = 8

// Queue groups requests of type T. The zero value is ready; Max <= 0 means no bound.
type Queue[T any] struct {
	Max int

	mu      sync.Mutex
	pending []*waiter[T]
	busy    bool // a leader is running a group
}

type waiter[T any] struct {
	req  T
	lead bool          // set (under Queue.mu) when the request is to lead the next group
	wake chan struct{} // receives once: the result is ready, or lead is set
}

// Do queues req and returns once a group holding it has been run by run (called by one request
// of the group, the others waiting). run leaves each request's result in the request itself.
func (q *Queue[T]) Do(req T, run func(group []T)) {
	w := &waiter[T]{req: req, wake: make(chan struct{}, 1)}
	q.mu.Lock()
	q.pending = append(q.pending, w)
	lead := !q.busy
	q.busy = true
	q.mu.Unlock()
	if !lead {
		<-w.wake
		if !w.lead {
			return
		}
	}
	q.gather()
	q.mu.Lock()
	n := len(q.pending)
	if q.Max > 0 {
		n = min(n, q.Max)
	}
	group := q.pending[:n:n]
	q.pending = q.pending[n:]
	q.mu.Unlock()

	reqs := make([]T, len(group))
	for i, g := range group {
		reqs[i] = g.req
	}
	run(reqs)

	q.mu.Lock()
	var next *waiter[T]
	if len(q.pending) > 0 {
		next = q.pending[0]
		next.lead = true
	} else {
		q.busy = false
	}
	q.mu.Unlock()
	if next != nil {
		next.wake <- struct{}{}
	}
	for _, g := range group {
		if g != w {
			g.wake <- struct{}{}
		}
	}
}

// gather lets the goroutines ready to run go before the leader while the queue grows (each yield
// adds the requests they bring), at most maxYields times. A request's handler has done its work
// (decoding, checks) by the time it queues: under load, several are usually a few microseconds
// from queueing when a group is taken, and a group taken at once held about 3 of 32 concurrent job
// PUTs; with the yields it holds about 8, each transaction's fixed costs (its begin, the pages
// every write shares, the commit) shared by as many. When nothing else is ready to run a yield
// returns at once: a lone request waits for nothing.
func (q *Queue[T]) gather() {
	for i, before := 0, -1; i < maxYields; i++ {
		q.mu.Lock()
		n := len(q.pending)
		q.mu.Unlock()
		if n == before || (q.Max > 0 && n >= q.Max) {
			return
		}
		before = n
		runtime.Gosched()
	}
}

// Pending is how many requests wait for a group to take them.
func (q *Queue[T]) Pending() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.pending)
}
