package dispatch

import (
	"sync"
	"testing"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
)

// TestWorkersStartedAsTasksAskForThem: an executor with nothing to do runs no worker; a task
// that finds no worker free starts one, up to the bound; a task whose lane is already in turn,
// or that a waiting worker takes, starts none.
func TestWorkersStartedAsTasksAskForThem(t *testing.T) {
	q := newTaskQueue(2)
	spawned := 0
	q.startWorkers(3, func() { spawned++ }) // workers that never come: the counts alone
	if n := q.started(); n != 0 || spawned != 0 {
		t.Fatalf("%d workers started (%d spawned) with nothing queued, want 0", n, spawned)
	}
	mk := func(id int64, target string) task { return task{exec: store.Execution{ID: id}, target: target} }
	steps := []struct {
		what string
		push task
		want int
	}{
		{"a task for a", mk(1, "a"), 1},
		{"a task for b", mk(2, "b"), 2},
		{"a second task for a, whose lane is in turn already", mk(3, "a"), 2},
		{"a task for c", mk(4, "c"), 3},
		{"a task for d, past the bound", mk(5, "d"), 3},
	}
	for _, s := range steps {
		q.push(s.push)
		if n := q.started(); n != s.want || spawned != s.want {
			t.Fatalf("after %s: %d workers started (%d spawned), want %d", s.what, n, spawned, s.want)
		}
	}
}

// TestWorkersStartedForWhatIsQueued: tasks queued before the workers start get theirs; a worker
// waiting for a task takes the next one without another being started.
func TestWorkersStartedForWhatIsQueued(t *testing.T) {
	q := newTaskQueue(8)
	q.waitingNow.Init()
	for i := range 3 {
		q.push(task{exec: store.Execution{ID: int64(i)}, target: string(rune('a' + i))})
	}
	var wg sync.WaitGroup
	took := make(chan int64, 16)
	waiting := make(chan struct{}, 16)
	worker := func() {
		for {
			tk, ok := q.pop()
			if !ok {
				return
			}
			took <- tk.exec.ID
			q.done(tk.target)
			waiting <- struct{}{}
		}
	}
	q.startWorkers(256, func() { wg.Go(worker) })
	if n := q.started(); n != 3 {
		t.Fatalf("%d workers started for 3 tasks queued in 3 lanes, want 3", n)
	}
	got := map[int64]bool{}
	for range 3 {
		got[<-took] = true
		<-waiting
	}
	if len(got) != 3 {
		t.Fatalf("took %v, want 3 tasks", got)
	}
	// Every worker is back in pop: wait until all three wait on the queue.
	if _, err := q.waitingNow.Wait(10*time.Second, func(n int) bool { return n == 3 }); err != nil {
		t.Fatal(err)
	}
	q.push(task{exec: store.Execution{ID: 9}, target: "z"})
	if id := <-took; id != 9 {
		t.Fatalf("took %d, want 9", id)
	}
	if n := q.started(); n != 3 {
		t.Fatalf("%d workers started after a task a waiting worker took, want 3", n)
	}
	q.close()
	wg.Wait()
}
