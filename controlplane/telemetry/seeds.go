package telemetry

import (
	"sync"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
)

// seedQueue bounds the last-success lookups waiting for Run; more are dropped (and logged).
const seedQueue = 4096

// lookupQueue holds the jobs whose last success Run looks up. It holds memory only for the
// lookups waiting (a channel of seedQueue keys would hold 256 kB from the start, in every
// replica, most of which never see a job's first execution fail).
type lookupQueue struct {
	mu   sync.Mutex
	keys []store.JobKey // waiting, oldest first; nil when none
	wake chan struct{}  // a token when keys turned non-empty
}

func newLookupQueue() *lookupQueue { return &lookupQueue{wake: make(chan struct{}, 1)} }

// push queues k; false when seedQueue lookups already wait.
func (q *lookupQueue) push(k store.JobKey) bool {
	q.mu.Lock()
	if len(q.keys) >= seedQueue {
		q.mu.Unlock()
		return false
	}
	q.keys = append(q.keys, k)
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
	return true
}

// pop takes the oldest waiting key; false when none waits.
func (q *lookupQueue) pop() (store.JobKey, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.keys) == 0 {
		return store.JobKey{}, false
	}
	k := q.keys[0]
	q.keys[0] = store.JobKey{}
	q.keys = q.keys[1:]
	if len(q.keys) == 0 {
		q.keys = nil // the drained backing array goes
	}
	return k, true
}

// held is the capacity of the queue's backing array (tests).
func (q *lookupQueue) held() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return cap(q.keys)
}
