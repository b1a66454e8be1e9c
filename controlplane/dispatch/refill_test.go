package dispatch

import (
	"testing"
	"time"
)

// TestABacklogWaitsForARefill: while due occurrences are parked for want of room, the loop
// claims again only once half a batch of room is free, for the workers and for the target; one
// slot freed at a time made one claim transaction per slot (TestABacklogIsClaimedInBatches,
// BenchmarkFires). Without a backlog the room is handed out as it is.
func TestABacklogWaitsForARefill(t *testing.T) {
	ex := &Executor{tasks: newTaskQueue(8)}
	cfg := Config{Workers: 8, BatchSize: 32, TargetConcurrency: 8}
	s := newScheduler(cfg, executorRunner{ex: ex}, nil)
	l := newLoop(s)
	now := time.Unix(1_800_000_000, 0)
	e := &entry{id: 1, def: &sharedDef{target: "http://t:80"}, next: now}
	for range 8 + 32 - 1 { // one slot of room left, for the workers and for the target
		ex.tasks.push(task{target: e.def.target})
	}
	if free := l.capacity().free; free != 1 {
		t.Fatalf("without a backlog the room is %d, want 1", free)
	}
	if !l.capacity().admit(e, now) {
		t.Fatal("without a backlog the last slot was not admitted")
	}
	l.park(&entry{id: 2, def: e.def, next: now})
	if free := l.capacity().free; free != 0 {
		t.Fatalf("with a backlog and 1 slot free the room is %d, want 0 until 16 are free", free)
	}
	if l.capacity().admit(e, now) {
		t.Fatal("with a backlog one free slot was admitted")
	}
	// Attempts end one by one: at 15 free slots the backlog still waits; at 16 (half a batch)
	// it is claimed again.
	for n := 1; n <= 15; n++ {
		if _, ok := ex.tasks.pop(); !ok {
			t.Fatal("pop")
		}
		ex.tasks.done(e.def.target)
		want := 0
		if n == 15 {
			want = 16 // the slot left before and the 15 freed
		}
		if free := l.capacity().free; free != want {
			t.Fatalf("with a backlog and %d slots free the room is %d, want %d", n+1, free, want)
		}
	}
	if !l.capacity().admit(e, now) {
		t.Fatal("with a backlog and 16 slots free (for the workers and the target) nothing was admitted")
	}
}
