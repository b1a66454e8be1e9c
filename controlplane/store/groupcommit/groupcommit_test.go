package groupcommit_test

import (
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store/groupcommit"
)

// request is a test request: run marks it done with the group it ran in.
type request struct {
	id    int
	group int // 0 until run
}

// harness runs a Queue whose groups are recorded, never overlap, and can be held.
type harness struct {
	t       *testing.T
	q       groupcommit.Queue[*request]
	mu      sync.Mutex
	groups  [][]int
	running atomic.Int32
	started chan int           // receives the index of each group as it starts
	hold    chan chan struct{} // a group takes one and waits on it when one is offered
	wg      sync.WaitGroup
}

func newHarness(t *testing.T, maxGroup int) *harness {
	h := &harness{t: t, started: make(chan int, 64), hold: make(chan chan struct{}, 1)}
	h.q.Max = maxGroup
	return h
}

func (h *harness) run(group []*request) {
	if n := h.running.Add(1); n != 1 {
		h.t.Errorf("%d groups run at once", n)
	}
	defer h.running.Add(-1)
	h.mu.Lock()
	ids := make([]int, len(group))
	for i, r := range group {
		ids[i] = r.id
	}
	h.groups = append(h.groups, ids)
	idx := len(h.groups)
	h.mu.Unlock()
	h.started <- idx
	select {
	case release := <-h.hold:
		<-release
	default:
	}
	for _, r := range group {
		r.group = idx
	}
}

// do calls Do in a goroutine; the returned channel receives the request once Do returned.
func (h *harness) do(id int) <-chan *request {
	out := make(chan *request, 1)
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		r := &request{id: id}
		h.q.Do(r, h.run)
		out <- r
	}()
	return out
}

// waitPending waits until n requests wait for a group.
func (h *harness) waitPending(n int) {
	h.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for h.q.Pending() != n {
		if time.Now().After(deadline) {
			h.t.Fatalf("%d requests pending, want %d", h.q.Pending(), n)
		}
		time.Sleep(time.Millisecond)
	}
}

func (h *harness) waitStarted(want int) {
	h.t.Helper()
	select {
	case got := <-h.started:
		if got != want {
			h.t.Fatalf("group %d started, want %d", got, want)
		}
	case <-time.After(10 * time.Second):
		h.t.Fatalf("group %d never started", want)
	}
}

// returned waits for a request's Do to return and checks the group it ran in.
func (h *harness) returned(c <-chan *request, group int) {
	h.t.Helper()
	select {
	case r := <-c:
		if r.group != group {
			h.t.Fatalf("request %d returned having run in group %d, want %d", r.id, r.group, group)
		}
	case <-time.After(10 * time.Second):
		h.t.Fatalf("a request of group %d never returned", group)
	}
}

// TestAlone: a request finding no group running leads one of its own and returns once it ran.
func TestAlone(t *testing.T) {
	h := newHarness(t, 0)
	r := &request{id: 1}
	h.q.Do(r, h.run)
	if r.group != 1 || !slices.Equal(h.groups[0], []int{1}) || h.q.Pending() != 0 {
		t.Fatalf("group %d, groups %v, pending %d", r.group, h.groups, h.q.Pending())
	}
}

// TestRequestsQueuedDuringAGroupRunTogether: while a group runs, the requests that come wait;
// they then run as one group, in the order they came, led by the first of them, and each Do
// returns only once its group ran. Groups never overlap.
func TestRequestsQueuedDuringAGroupRunTogether(t *testing.T) {
	h := newHarness(t, 0)
	release := make(chan struct{})
	h.hold <- release
	first := h.do(1)
	h.waitStarted(1)
	later := make([]<-chan *request, 0, 3)
	for i := range 3 {
		later = append(later, h.do(2+i))
		h.waitPending(i + 1)
	}
	close(release)
	h.returned(first, 1)
	h.waitStarted(2)
	for _, c := range later {
		h.returned(c, 2)
	}
	h.wg.Wait()
	if want := [][]int{{1}, {2, 3, 4}}; !slices.EqualFunc(h.groups, want, slices.Equal) {
		t.Fatalf("groups %v, want %v", h.groups, want)
	}
	if h.q.Pending() != 0 {
		t.Fatalf("%d pending after the last group", h.q.Pending())
	}
}

// TestMaxBoundsAGroup: with Max 2, five queued requests run as groups of 2, 2 and 1, each led
// in turn by the first request left waiting.
func TestMaxBoundsAGroup(t *testing.T) {
	h := newHarness(t, 2)
	release := make(chan struct{})
	h.hold <- release
	first := h.do(1)
	h.waitStarted(1)
	later := make([]<-chan *request, 0, 5)
	for i := range 5 {
		later = append(later, h.do(2+i))
		h.waitPending(i + 1)
	}
	close(release)
	h.returned(first, 1)
	for i, c := range later {
		h.returned(c, 2+i/2)
	}
	h.wg.Wait()
	if want := [][]int{{1}, {2, 3}, {4, 5}, {6}}; !slices.EqualFunc(h.groups, want, slices.Equal) {
		t.Fatalf("groups %v, want %v", h.groups, want)
	}
}

// TestManyConcurrentRequestsRunOnceEach: under load every request runs exactly once, in no more
// than one group at a time (checked by run), and no group exceeds Max.
func TestManyConcurrentRequestsRunOnceEach(t *testing.T) {
	const n, maxGroup = 2000, 16
	h := newHarness(t, maxGroup)
	h.started = make(chan int, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := &request{id: i}
			h.q.Do(r, h.run)
			if r.group == 0 {
				t.Errorf("request %d returned before its group ran", i)
			}
		}()
	}
	wg.Wait()
	seen := make([]int, n)
	for _, g := range h.groups {
		if len(g) > maxGroup {
			t.Fatalf("a group of %d, Max is %d", len(g), maxGroup)
		}
		for _, id := range g {
			seen[id]++
		}
	}
	for id, c := range seen {
		if c != 1 {
			t.Fatalf("request %d ran %d times", id, c)
		}
	}
}

// runReady runs n requests on one P, each in a goroutine of its own started before any runs, and
// returns once each Do returned.
func runReady(h *harness, n int) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { h.q.Do(&request{id: i}, h.run) })
	}
	wg.Wait()
}

// TestLeaderLetsReadyRequestsJoin: requests whose goroutines are ready to run when a leader is
// about to take its group join that group (gather) rather than wait for the next one. With one P
// the goroutines run one at a time: the first to run leads, and without the leader's yields it
// would take a group of itself alone while the other 15 have not yet queued.
func TestLeaderLetsReadyRequestsJoin(t *testing.T) {
	const n = 16
	h := newHarness(t, 0)
	runReady(h, n)
	sizes := make([]int, len(h.groups))
	for i, g := range h.groups {
		sizes[i] = len(g)
	}
	if !slices.Equal(sizes, []int{n}) {
		t.Fatalf("groups of %v requests, want one group of %d", sizes, n)
	}
}

// TestGatherStopsAtMax: gathering does not stretch a group past Max: with Max 4, 16 ready
// requests run as groups of 4.
func TestGatherStopsAtMax(t *testing.T) {
	h := newHarness(t, 4)
	runReady(h, 16)
	for _, g := range h.groups {
		if len(g) != 4 {
			t.Fatalf("groups %v, want groups of 4", h.groups)
		}
	}
}
