package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
)

// changesSince reads the feed after cursor, with the changes' sequence numbers checked
// increasing and then cleared (they are the driver's to choose).
func changesSince(t *testing.T, f store.ChangeFeed, cursor store.ChangeCursor) ([]store.Change, store.ChangeCursor) {
	t.Helper()
	cs, next, err := f.ChangesSince(t.Context(), cursor)
	if err != nil {
		t.Fatalf("ChangesSince: %v", err)
	}
	var last int64
	for i := range cs {
		if cs[i].Seq <= last {
			t.Fatalf("change %d of %+v: sequence numbers not increasing", i, cs)
		}
		last, cs[i].Seq = cs[i].Seq, 0
	}
	return cs, next
}

// testChangeFeed: the writes the leader's schedule depends on each record one change, stamped
// with the driver's origin, returned once by ChangesSince and notified to a listener as it is
// committed; writes refused and writes that change no schedule record none. A driver without a
// feed (a single process) skips it.
func testChangeFeed(t *testing.T, d store.Driver) {
	f, ok := d.(store.ChangeFeed)
	if !ok {
		t.Skip("the driver keeps no change feed: a single process's changes reach its dispatcher in memory")
	}
	ctx := t.Context()
	cs, cursor := changesSince(t, f, store.ChangeCursor{})
	equal(t, "changes from the zero cursor", len(cs), 0)
	if cursor.Next == 0 {
		t.Fatal("the zero cursor's read returned the zero cursor")
	}
	// Notifications, heard as the writes commit.
	var heard chan store.Change
	if n, ok := d.(store.Notifier); ok {
		heard = make(chan store.Change, 64)
		lctx, cancel := context.WithCancel(ctx)
		listening, done := make(chan struct{}), make(chan struct{})
		go func() {
			defer close(done)
			_ = n.Listen(lctx, func() { close(listening) }, func(c store.Change) { heard <- c })
		}()
		t.Cleanup(func() { cancel(); <-done })
		select {
		case <-listening:
		case <-time.After(10 * time.Second):
			t.Fatal("Listen never ready")
		}
	}

	o := f.Origin()
	c := putCollection(t, d, "c", "Enabled") // a new collection: no job, no schedule changed
	j := putJob(t, d, "c", "a", "Enabled", t0)
	if _, _, err := d.JobPut(ctx, store.JobPutParams{Job: newJob("c", "b", "Enabled", t0), MaxJobs: 1, Now: t0}); err == nil {
		t.Fatal("a job over the quota was written")
	}
	upd := newJob("c", "a", "Disabled", time.Time{})
	if _, _, err := d.JobPut(ctx, store.JobPutParams{Job: upd, ExpectVersion: j.Version, Now: t0}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := d.JobPut(ctx, store.JobPutParams{Job: upd, ExpectVersion: j.Version, Now: t0}); err == nil {
		t.Fatal("a write expecting a stale version succeeded")
	}
	// The collection rewritten in its state: no change; disabled: a change.
	same := newCollection("c", "Enabled")
	same.Tags = map[string]string{"team": "dev"}
	if _, _, err := d.CollectionPut(ctx, store.CollectionPutParams{Collection: same, Now: t0}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := d.CollectionPut(ctx, store.CollectionPutParams{Collection: newCollection("c", "Disabled"), Now: t0}); err != nil {
		t.Fatal(err)
	}
	if err := d.JobDelete(ctx, store.JobDeleteParams{Key: j.Key}); err != nil {
		t.Fatal(err)
	}
	if err := d.CollectionDelete(ctx, store.CollectionDeleteParams{Key: c.Key}); err != nil {
		t.Fatal(err)
	}
	want := []store.Change{
		{Kind: store.ChangeJob, ID: j.ID, Origin: o},
		{Kind: store.ChangeJob, ID: j.ID, Origin: o},
		{Kind: store.ChangeCollection, ID: c.ID, Origin: o},
		{Kind: store.ChangeJob, ID: j.ID, Origin: o},
		{Kind: store.ChangeCollection, ID: c.ID, Origin: o},
	}
	cs, cursor = changesSince(t, f, cursor)
	equal(t, "changes", cs, want)
	cs, _ = changesSince(t, f, cursor)
	equal(t, "changes read again", len(cs), 0)
	if heard != nil {
		var got []store.Change
		for range want {
			select {
			case c := <-heard:
				if c.Seq == 0 {
					t.Fatalf("notification %+v carries no sequence number", c)
				}
				c.Seq = 0
				got = append(got, c)
			case <-time.After(10 * time.Second):
				t.Fatalf("notified %d changes of %d: %+v", len(got), len(want), got)
			}
		}
		equal(t, "notified", got, want)
	}
	n, err := f.ChangesPrune(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	equal(t, "pruned", n, int64(len(want)))
}
