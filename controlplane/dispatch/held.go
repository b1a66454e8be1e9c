package dispatch

import (
	"container/heap"
	"sync"
	"sync/atomic"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
)

// held is one execution waiting for its due time: an occurrence claimed (or taken) ahead, or a
// retry.
type held struct {
	at     time.Time
	seq    uint64
	exec   *store.Execution
	job    *store.Job // its job as last known (nil: the worker loads it)
	target string     // its attempt's target ("": from job)
	ahead  bool       // an occurrence claimed ahead, not started: a change of its job cancels it
	taken  bool       // taken by this executor and not started (counted in Executor.waiting)
	// started, when set, is where the scheduler learns that an occurrence it claimed ahead
	// started (the latest one's scheduled time, Unix ns).
	started *atomic.Int64
	index   int
}

type heldHeap []*held

func (h heldHeap) Len() int { return len(h) }
func (h heldHeap) Less(i, j int) bool {
	if h[i].at.Equal(h[j].at) {
		return h[i].seq < h[j].seq
	}
	return h[i].at.Before(h[j].at)
}
func (h heldHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index, h[j].index = i, j
}
func (h *heldHeap) Push(x any) {
	it, ok := x.(*held)
	if !ok {
		panic("heldHeap: not a *held")
	}
	it.index = len(*h)
	*h = append(*h, it)
}
func (h *heldHeap) Pop() any {
	old := *h
	n := len(old)
	it := old[n-1]
	old[n-1] = nil
	it.index = -1
	*h = old[:n-1]
	return it
}

// heldSet is the executions waiting for their due time, safe for concurrent use: the executor
// holds what the scheduler claimed ahead, what it took and its retries; the leader's scheduler
// holds what it claimed ahead until due, so that a change of the job cancels it while no
// executor took it. An occurrence claimed ahead either is cancelled (cancelAhead) or starts
// (due), under one lock, and one that started tells the scheduler (held.started): a change that
// comes too late to cancel it must not schedule it again.
type heldSet struct {
	mu    sync.Mutex
	heap  heldHeap
	seq   uint64
	ahead map[int64][]*held // by job: occurrences claimed ahead, not started
	byID  map[int64]*held   // by execution (an executor's: what it took can be lost)
}

func newHeldSet() *heldSet {
	return &heldSet{ahead: map[int64][]*held{}, byID: map[int64]*held{}}
}

// push holds x until x.DueAt; started (ahead only) learns when it starts.
func (s *heldSet) push(x *store.Execution, job *store.Job, target string, ahead, taken bool, started *atomic.Int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	it := &held{at: x.DueAt, seq: s.seq, exec: x, job: job, target: target, ahead: ahead, taken: taken, started: started}
	heap.Push(&s.heap, it)
	s.byID[x.ID] = it
	if ahead {
		s.ahead[x.JobID] = append(s.ahead[x.JobID], it)
	}
}

// remove takes it out (the lock held).
func (s *heldSet) remove(it *held) {
	heap.Remove(&s.heap, it.index)
	if s.byID[it.exec.ID] == it {
		delete(s.byID, it.exec.ID)
	}
	if it.ahead {
		s.unahead(it)
	}
}

func (s *heldSet) unahead(it *held) {
	it.ahead = false
	list := s.ahead[it.exec.JobID]
	for i, o := range list {
		if o == it {
			list = append(list[:i], list[i+1:]...)
			break
		}
	}
	if len(list) == 0 {
		delete(s.ahead, it.exec.JobID)
	} else {
		s.ahead[it.exec.JobID] = list
	}
}

// due takes out the executions due by now, in due order; an occurrence claimed ahead counts as
// started.
func (s *heldSet) due(now time.Time) []*held {
	var out []*held
	s.start(now, func(it *held) { out = append(out, it) }, nil)
	return out
}

// start takes out the executions due by now and calls fn for each, in due order, then then (if
// set), all under the set's lock: what another goroutine starts with then comes after what was
// held and due (an occurrence claimed ahead starts before one claimed due later, as the clock
// jumps over both).
func (s *heldSet) start(now time.Time, fn func(*held), then func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if then != nil {
		defer then()
	}
	for len(s.heap) > 0 && !s.heap[0].at.After(now) {
		it, ok := heap.Pop(&s.heap).(*held)
		if !ok {
			continue
		}
		if s.byID[it.exec.ID] == it {
			delete(s.byID, it.exec.ID)
		}
		if it.ahead {
			s.unahead(it)
			if it.started != nil {
				at := it.exec.Scheduled.UnixNano()
				for cur := it.started.Load(); at > cur && !it.started.CompareAndSwap(cur, at); cur = it.started.Load() {
				}
			}
		}
		fn(it)
	}
}

// next is when the earliest execution is due (zero: none held).
func (s *heldSet) next() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.heap) == 0 {
		return time.Time{}
	}
	return s.heap[0].at
}

// cancelAhead takes out the occurrences of a job claimed ahead that have not started.
func (s *heldSet) cancelAhead(jobID int64) []*held {
	s.mu.Lock()
	defer s.mu.Unlock()
	list := s.ahead[jobID]
	delete(s.ahead, jobID)
	for _, it := range list {
		it.ahead = false
		s.remove(it)
	}
	return list
}

// aheadJobsOfCollection lists the jobs of a collection that have occurrences held ahead.
func (s *heldSet) aheadJobsOfCollection(collectionID int64) []int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []int64
	for jobID, list := range s.ahead {
		if len(list) > 0 && list[0].job != nil && list[0].job.CollectionID == collectionID {
			out = append(out, jobID)
		}
	}
	return out
}

// lose takes out the executions of ids that are held (an executor's: no longer its own).
func (s *heldSet) lose(ids []int64) []*held {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*held
	for _, id := range ids {
		if it := s.byID[id]; it != nil {
			s.remove(it)
			out = append(out, it)
		}
	}
	return out
}
