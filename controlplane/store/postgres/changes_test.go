package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store/testdb"
)

// TestChangeCommittedLateIsRead: a change whose transaction began before a read of the feed and
// committed after it (a lower sequence number than a change the read returned) is returned by
// the next read; a change rolled back is never returned nor notified.
func TestChangeCommittedLateIsRead(t *testing.T) {
	d := testdb.Postgres(t)
	ctx := t.Context()
	heard := make(chan store.Change, 8)
	lctx, cancel := context.WithCancel(ctx)
	listening, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		_ = d.Listen(lctx, func() { close(listening) }, func(c store.Change) { heard <- c })
	}()
	t.Cleanup(func() { cancel(); <-done })
	<-listening

	_, cursor, err := d.ChangesSince(ctx, store.ChangeCursor{})
	if err != nil {
		t.Fatal(err)
	}
	insert := `INSERT INTO changes (kind, id, origin) VALUES ('job', $1, 'test')`
	late, err := d.Pool().Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = late.Rollback(ctx) }()
	if _, err := late.Exec(ctx, insert, 1); err != nil { // takes its sequence number and its transaction id now
		t.Fatal(err)
	}
	rolled, err := d.Pool().Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rolled.Exec(ctx, insert, 3); err != nil {
		t.Fatal(err)
	}
	if err := rolled.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Pool().Exec(ctx, insert, 2); err != nil {
		t.Fatal(err)
	}
	ids := func(cs []store.Change) []int64 {
		out := []int64{}
		for _, c := range cs {
			out = append(out, c.ID)
		}
		return out
	}
	cs, cursor, err := d.ChangesSince(ctx, cursor)
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(cs); len(got) != 1 || got[0] != 2 {
		t.Fatalf("first read: changes %v, want [2]", got)
	}
	if err := late.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	cs, cursor, err = d.ChangesSince(ctx, cursor)
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(cs); len(got) != 1 || got[0] != 1 || cs[0].Seq != 1 {
		t.Fatalf("second read: changes %+v, want the one committed late (id 1, seq 1)", cs)
	}
	if cs, _, err = d.ChangesSince(ctx, cursor); err != nil || len(cs) != 0 {
		t.Fatalf("third read: %+v, %v; want none", cs, err)
	}
	// Notified as they committed: 2, then 1; never 3.
	for _, want := range []int64{2, 1} {
		select {
		case c := <-heard:
			if c.ID != want || c.Kind != store.ChangeJob || c.Origin != "test" {
				t.Fatalf("notified %+v, want job %d from test", c, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("job %d never notified", want)
		}
	}
	if _, err := d.Pool().Exec(ctx, insert, 4); err != nil {
		t.Fatal(err)
	}
	select {
	case c := <-heard:
		if c.ID != 4 {
			t.Fatalf("notified %+v after the rolled back change, want job 4", c)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("job 4 never notified")
	}
}
