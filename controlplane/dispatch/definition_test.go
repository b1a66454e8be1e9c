package dispatch

import (
	"testing"
	"time"
	"unsafe"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"
)

// TestEntriesShareTheirDefinitionAndDecodeItOnce: jobs that do the same thing share one
// definition in the loop, decoded once for all their occurrences (a claim allocates the job it
// hands over and nothing else); jobs of a collection share its key; what is shared is released
// with the last entry that uses it. Before, every entry kept its own JSON and every claim
// decoded it (about 30 allocations).
func TestEntriesShareTheirDefinitionAndDecodeItOnce(t *testing.T) {
	s := newScheduler(Config{}, executorRunner{ex: &Executor{tasks: newTaskQueue(8)}}, nil)
	s.target = func(wire.JobProperties, string) string { return "http://t:80" }
	l := newLoop(s)
	now := time.Date(2026, 11, 26, 1, 0, 0, 0, time.UTC)
	interval := 1
	ck := store.CollectionKey{Subscription: "s", ResourceGroup: "rg", Name: "c"}
	job := func(id int64, uri string) *store.Job {
		return &store.Job{
			ID: id, CollectionID: 7, Key: store.JobKey{CollectionKey: ck, Name: "j" + uri[len(uri)-1:] + string(rune('0'+id))},
			State: store.JobStateEnabled, CollectionState: store.CollectionStateEnabled, Version: 1,
			Status: store.JobStatus{NextExecutionTime: now},
			Properties: wire.JobProperties{
				StartTime:  now.Add(-time.Duration(id) * time.Second).Format(time.RFC3339),
				Recurrence: &wire.JobRecurrence{Frequency: "Minute", Interval: &interval},
				Action: &wire.JobAction{Type: "Http", Request: &wire.HTTPRequest{URI: uri, Method: "POST", Body: "x"},
					RetryPolicy: &wire.RetryPolicy{RetryType: "None"}},
				State: "Enabled", Note: "job " + string(rune('0'+id)),
			},
		}
	}
	l.put(job(1, "http://t/a"))
	l.put(job(2, "http://t/a"))
	l.put(job(3, "http://t/b"))
	e1, e2, e3 := l.entries[1], l.entries[2], l.entries[3]
	if e1 == nil || e2 == nil || e3 == nil {
		t.Fatalf("entries %v %v %v: want all three scheduled", e1, e2, e3)
	}
	if e1.def != e2.def || e1.def == e3.def || len(l.defs) != 2 {
		t.Fatalf("definitions: 1 and 2 share %v, 1 and 3 share %v, %d in all; want 1 and 2 sharing one, 3 its own, 2 in all",
			e1.def == e2.def, e1.def == e3.def, len(l.defs))
	}
	if e1.coll != e3.coll || len(l.colls) != 1 {
		t.Fatalf("collections: %d, shared %v; want 1, shared", len(l.colls), e1.coll == e3.coll)
	}
	j1, j2 := l.job(e1), l.job(e2)
	if j1.Properties.Action != j2.Properties.Action {
		t.Fatal("the shared definition was decoded for each job")
	}
	if want := (store.JobKey{CollectionKey: ck, Name: "ja1"}); j1.Key != want || j1.ID != 1 || j1.CollectionID != 7 || j1.Version != 1 {
		t.Fatalf("job 1: key %+v id %d collection %d version %d; want %+v, 1, 7, 1", j1.Key, j1.ID, j1.CollectionID, j1.Version, want)
	}
	if got := j1.Properties.Action.Request.URI; got != "http://t/a" || j1.Properties.Recurrence != nil {
		t.Fatalf("job 1 decoded with URI %q, recurrence %v; want http://t/a, none (it is in the rule)", got, j1.Properties.Recurrence)
	}
	if j3 := l.job(e3); j3.Properties.Action.Request.URI != "http://t/b" {
		t.Fatalf("job 3 decoded with URI %q, want http://t/b", j3.Properties.Action.Request.URI)
	}
	if allocs := testing.AllocsPerRun(100, func() { l.job(e1) }); allocs != 1 {
		t.Fatalf("handing over a job of a shared definition took %v allocations, want 1 (the job)", allocs)
	}
	l.drop(1)
	if len(l.defs) != 2 || e2.def.refs != 1 {
		t.Fatalf("after dropping job 1: %d definitions, job 2's used %d times; want 2, 1", len(l.defs), e2.def.refs)
	}
	l.drop(2)
	l.drop(3)
	if len(l.defs) != 0 || len(l.colls) != 0 {
		t.Fatalf("after dropping every job: %d definitions, %d collections left; want none", len(l.defs), len(l.colls))
	}
}

// TestAnEntryStaysSmall: the loop keeps one entry per schedulable job, a million of them on a
// node; at 144 bytes it takes the allocator's 144-byte class (it was 184 after definitions were
// shared, and about 200 plus a 48-byte heap item before).
func TestAnEntryStaysSmall(t *testing.T) {
	if size := unsafe.Sizeof(entry{}); size > 144 {
		t.Fatalf("an entry takes %d bytes, want at most 144", size)
	}
}
