package dispatch

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
)

// held is one execution waiting for its due time: an occurrence claimed (or taken) ahead, or a
// retry.
type held struct {
	timed  // in its set's heap until due (at: x.DueAt)
	exec   *store.Execution
	job    *store.Job // its job as last known (nil: the worker loads it)
	target string     // its attempt's target ("": from job)
	ahead  bool       // an occurrence claimed ahead, not started: a change of its job cancels it
	taken  bool       // taken by this executor and not started (counted in Executor.waiting)
	// started, when set, is where the scheduler learns that an occurrence it claimed ahead
	// started (the latest one's scheduled time, Unix ns).
	started *atomic.Int64
}

// heldSet is the executions waiting for their due time, safe for concurrent use: the executor
// holds what the scheduler claimed ahead, what it took and its retries; the leader's scheduler
// holds what it claimed ahead until due, so that a change of the job cancels it while no
// executor took it. An occurrence claimed ahead either is cancelled (cancelAhead) or starts
// (due), under one lock, and one that started tells the scheduler (held.started): a change that
// comes too late to cancel it must not schedule it again.
type heldSet struct {
	mu    sync.Mutex
	heap  timeHeap
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
	it := &held{exec: x, job: job, target: target, ahead: ahead, taken: taken, started: started}
	it.held = it
	s.heap.push(&it.timed, x.DueAt)
	s.byID[x.ID] = it
	if ahead {
		s.ahead[x.JobID] = append(s.ahead[x.JobID], it)
	}
}

// remove takes it out (the lock held).
func (s *heldSet) remove(it *held) {
	s.heap.remove(&it.timed)
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
	for s.heap.len() > 0 && !s.heap.peek().when().After(now) {
		it := s.heap.pop().held
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
	t, _ := s.nextAndLen()
	return t
}

// nextAndLen is when the earliest execution is due (zero: none held) and how many are held.
func (s *heldSet) nextAndLen() (time.Time, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.heap.len() == 0 {
		return time.Time{}, 0
	}
	return s.heap.peek().when(), s.heap.len()
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
