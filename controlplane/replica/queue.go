package replica

import (
	"sync"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
)

// maxQueued bounds the changes made through this replica waiting to be notified; a full queue
// holds the API back (push waits).
const maxQueued = 4096

// changeQueue holds the changes made through this replica until sendChanges notifies them, in
// the order pushed. It holds memory only for the changes waiting: a channel of maxQueued
// changes would hold 192 kB from the start, in every replica, for bursts of API writes that most
// replicas never see.
type changeQueue struct {
	mu     sync.Mutex
	room   sync.Cond      // signalled when changes are taken from a full queue
	items  []store.Change // waiting, oldest first; nil when none
	queued chan struct{}  // a token when items turned non-empty
}

func newChangeQueue() *changeQueue {
	q := &changeQueue{queued: make(chan struct{}, 1)}
	q.room.L = &q.mu
	return q
}

// push queues c, waiting while maxQueued changes wait.
func (q *changeQueue) push(c store.Change) {
	q.mu.Lock()
	for len(q.items) >= maxQueued {
		q.room.Wait()
	}
	q.items = append(q.items, c)
	q.mu.Unlock()
	select {
	case q.queued <- struct{}{}:
	default:
	}
}

// take appends up to n waiting changes to dst, oldest first, and removes them from the queue.
func (q *changeQueue) take(dst []store.Change, n int) []store.Change {
	q.mu.Lock()
	defer q.mu.Unlock()
	n = min(n, len(q.items))
	if n == 0 {
		return dst
	}
	full := len(q.items) >= maxQueued
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

// held is the capacity of the queue's backing array (tests).
func (q *changeQueue) held() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return cap(q.items)
}
