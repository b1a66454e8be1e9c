package postgres_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store/postgres"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store/testdb"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"
)

// roundTrips is a pgx tracer that logs every round trip the driver makes: a statement of its
// own ("query" and its first words), a pipelined batch ("batch of N") or a prepare.
type roundTrips struct {
	mu  sync.Mutex
	log []string
}

func (r *roundTrips) add(s string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.log = append(r.log, s)
}

// take returns the log and empties it.
func (r *roundTrips) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.log
	r.log = nil
	if out == nil {
		out = []string{}
	}
	return out
}

func (r *roundTrips) TraceQueryStart(ctx context.Context, _ *pgx.Conn, data pgx.TraceQueryStartData) context.Context {
	f := strings.Fields(data.SQL)
	r.add("query " + strings.Join(f[:min(len(f), 3)], " "))
	return ctx
}

func (r *roundTrips) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

func (r *roundTrips) TraceBatchStart(ctx context.Context, _ *pgx.Conn, data pgx.TraceBatchStartData) context.Context {
	r.add(fmt.Sprintf("batch of %d", data.Batch.Len()))
	return ctx
}

func (r *roundTrips) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}
func (r *roundTrips) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData)     {}

func (r *roundTrips) TracePrepareStart(ctx context.Context, _ *pgx.Conn, _ pgx.TracePrepareStartData) context.Context {
	r.add("prepare")
	return ctx
}

func (r *roundTrips) TracePrepareEnd(context.Context, *pgx.Conn, pgx.TracePrepareEndData) {}

// openTraced opens the driver on a fresh schema with one pooled connection (so that statements
// are prepared once), no liveness pings, and a round-trip log; it returns the schema's URL and
// the application name its connections carry.
func openTraced(t *testing.T) (*postgres.Driver, *roundTrips, string, string) {
	t.Helper()
	u := testdb.PostgresSchema(t, testdb.PostgresURL(t))
	cfg, err := pgxpool.ParseConfig(u)
	if err != nil {
		t.Fatal(err)
	}
	raw := make([]byte, 6)
	_, _ = rand.Read(raw)
	app := "roundtrips-" + hex.EncodeToString(raw)
	rt := &roundTrips{}
	cfg.MaxConns = 1
	cfg.ShouldPing = func(context.Context, pgxpool.ShouldPingParams) bool { return false }
	cfg.ConnConfig.Tracer = rt
	cfg.ConnConfig.RuntimeParams["application_name"] = app
	d, err := postgres.OpenConfig(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	return d, rt, u, app
}

func rtJob(coll, name string, now time.Time) store.Job {
	return store.Job{
		Key:   store.JobKey{CollectionKey: store.CollectionKey{Subscription: "s", ResourceGroup: "rg", Name: coll}, Name: name},
		State: "Enabled",
		Properties: wire.JobProperties{Action: &wire.JobAction{Type: "Http", Request: &wire.HTTPRequest{
			URI: "http://127.0.0.1:1/hook", Method: "POST"}}},
		Status: store.JobStatus{NextExecutionTime: now.Add(time.Minute)},
	}
}

// waitFor calls cond until it is true (or the test's context ends).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for !cond() {
		select {
		case <-t.Context().Done():
			t.Fatalf("waiting for %s: %v", what, t.Context().Err())
		case <-time.After(2 * time.Millisecond):
		}
	}
}

// TestJobPutRoundTrips: a job write is one round trip (no BEGIN, no COMMIT, no separate read or
// lock), and writes that queue while one is committed go together as one statement, quota
// included; a create that finds its job existing replaces it on its own after the group.
func TestJobPutRoundTrips(t *testing.T) {
	ctx := t.Context()
	d, rt, u, app := openTraced(t)
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	if _, _, err := d.CollectionPut(ctx, store.CollectionPutParams{Now: now, Collection: store.Collection{
		Key: store.CollectionKey{Subscription: "s", ResourceGroup: "rg", Name: "c"}, Properties: wire.JobCollectionProperties{State: "Enabled"},
	}}); err != nil {
		t.Fatal(err)
	}
	// Prepare each statement on the one connection.
	w, _, err := d.JobPut(ctx, store.JobPutParams{Job: rtJob("c", "warm", now), MaxJobs: 8, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := d.JobPut(ctx, store.JobPutParams{Job: rtJob("c", "warm", now), ExpectVersion: w.Version, Now: now}); err != nil {
		t.Fatal(err)
	}
	rt.take()

	a, created, err := d.JobPut(ctx, store.JobPutParams{Job: rtJob("c", "a", now), MaxJobs: 8, Now: now})
	if err != nil || !created {
		t.Fatalf("create a: created=%v err=%v", created, err)
	}
	equal(t, "a create", rt.take(), []string{"query WITH c AS"})
	if _, created, err := d.JobPut(ctx, store.JobPutParams{Job: rtJob("c", "a", now), ExpectVersion: a.Version, Now: now}); err != nil || created {
		t.Fatalf("replace a: created=%v err=%v", created, err)
	}
	equal(t, "a replace", rt.take(), []string{"query WITH c AS"})

	type result struct {
		created bool
		err     error
	}
	results := map[string]*result{}
	put := func(coll, name string) func() {
		r := &result{}
		results[coll+"/"+name] = r
		return func() {
			_, r.created, r.err = d.JobPut(ctx, store.JobPutParams{Job: rtJob(coll, name, now), MaxJobs: 8, Now: now})
		}
	}
	// Queued in this order behind b: c0..c7 (the collection holds warm, a and b: five fit under
	// MaxJobs 8), a (exists: replaced on its own), and one in an absent collection.
	var queued []func()
	for _, n := range []string{"c0", "c1", "c2", "c3", "c4", "c5", "c6", "c7", "a"} {
		queued = append(queued, put("c", n))
	}
	queued = append(queued, put("nope", "x"))
	holdThenQueue(t, d, u, app, put("c", "b"), queued...)
	// The ten queued writes are one statement (prepared at its first use on the connection).
	equal(t, "round trips of 11 writes", rt.take(), []string{"query WITH c AS", "query WITH r AS", "prepare", "query WITH c AS"})

	for key, r := range results {
		var want result
		switch key {
		case "c/b", "c/c0", "c/c1", "c/c2", "c/c3", "c/c4":
			want.created = true
		case "c/a":
		case "c/c5", "c/c6", "c/c7":
			want.err = store.ErrQuota
		case "nope/x":
			want.err = store.ErrNotFound
		}
		if r.created != want.created || !errors.Is(r.err, want.err) || (want.err == nil && r.err != nil) {
			t.Errorf("%s: created=%v err=%v, want created=%v err=%v", key, r.created, r.err, want.created, want.err)
		}
	}
	n, err := d.JobCount(ctx, store.JobCountParams{Collection: store.CollectionKey{Subscription: "s", ResourceGroup: "rg", Name: "c"}})
	if err != nil {
		t.Fatal(err)
	}
	equal(t, "jobs in the collection", n, 8)
}

// holdThenQueue holds every collection's row from a connection of its own, starts first (it
// leads a group of one, which waits in the database for the row), queues rest behind it in
// order, then releases the rows and returns when every write has returned: rest are one group.
func holdThenQueue(t *testing.T, d *postgres.Driver, u, app string, first func(), rest ...func()) {
	t.Helper()
	ctx := t.Context()
	blocker, err := pgx.Connect(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = blocker.Close(context.WithoutCancel(ctx)) }()
	tx, err := blocker.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `SELECT 1 FROM collections FOR UPDATE`); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	wg.Go(first)
	waitFor(t, "the first write to wait for the lock", func() bool {
		var n int
		err := blocker.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE application_name = $1 AND wait_event_type = 'Lock'`, app).Scan(&n)
		return err == nil && n == 1
	})
	for i, w := range rest {
		wg.Go(w)
		waitFor(t, fmt.Sprintf("write %d to queue", i), func() bool { return d.PendingPuts() == i+1 })
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestJobPutGroupOutcomes: in one group, the second write of the same new job replaces it on
// its own after the group; a create only of an existing job and a create expecting another
// version of its collection fail with ErrConflict, and a create expecting the collection as it
// is succeeds, all without a statement of their own.
func TestJobPutGroupOutcomes(t *testing.T) {
	ctx := t.Context()
	d, rt, u, app := openTraced(t)
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ck := store.CollectionKey{Subscription: "s", ResourceGroup: "rg", Name: "c"}
	c, _, err := d.CollectionPut(ctx, store.CollectionPutParams{Now: now, Collection: store.Collection{
		Key: ck, Properties: wire.JobCollectionProperties{State: "Enabled"}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := d.JobPut(ctx, store.JobPutParams{Job: rtJob("c", "old", now), Now: now}); err != nil {
		t.Fatal(err)
	}
	rt.take()
	type result struct {
		created bool
		version int64
		err     error
	}
	var (
		names   []string
		results []*result
	)
	put := func(name string, p store.JobPutParams) func() {
		r := &result{}
		names, results = append(names, name), append(results, r)
		p.Job, p.Now = rtJob("c", name, now), now
		return func() {
			var j *store.Job
			if j, r.created, r.err = d.JobPut(ctx, p); j != nil {
				r.version = j.Version
			}
		}
	}
	first := put("first", store.JobPutParams{})
	right := store.CollectionVersion{ID: c.ID, Version: c.Version}
	wrong := store.CollectionVersion{ID: c.ID, Version: c.Version + 1}
	holdThenQueue(t, d, u, app, first,
		put("twice", store.JobPutParams{MaxJobs: 10}),
		put("twice", store.JobPutParams{MaxJobs: 10}),
		put("old", store.JobPutParams{CreateOnly: true, ExpectCollection: right}),
		put("blind", store.JobPutParams{CreateOnly: true, ExpectCollection: wrong}),
		put("known", store.JobPutParams{CreateOnly: true, ExpectCollection: right}))
	equal(t, "round trips", rt.take(), []string{"query WITH c AS", "query WITH r AS", "prepare", "query WITH c AS"})
	got := []string{}
	for i, r := range results {
		e := "ok"
		switch {
		case errors.Is(r.err, store.ErrConflict):
			e = "conflict"
		case r.err != nil:
			e = r.err.Error()
		}
		got = append(got, fmt.Sprintf("%s created=%v version=%d %s", names[i], r.created, r.version, e))
	}
	equal(t, "outcomes", got, []string{"first created=true version=1 ok", "twice created=true version=1 ok",
		"twice created=false version=2 ok", "old created=false version=0 conflict", "blind created=false version=0 conflict",
		"known created=true version=1 ok"})
	n, err := d.JobCount(ctx, store.JobCountParams{Collection: ck})
	if err != nil {
		t.Fatal(err)
	}
	equal(t, "jobs in the collection", n, 4)
}

// TestNotifyOneRoundTrip: changes notified together are one statement, and every listener gets
// them in order.
func TestNotifyOneRoundTrip(t *testing.T) {
	ctx := t.Context()
	d, rt, u, _ := openTraced(t)
	listener, err := postgres.Open(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = listener.Close() }()
	lctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ready := make(chan struct{})
	got := make(chan store.Change, 10)
	go func() {
		_ = listener.Listen(lctx, func() { close(ready) }, func(c store.Change) { got <- c })
	}()
	<-ready
	rt.take()
	want := []store.Change{{Kind: store.ChangeJob, ID: 3, Origin: "r1"}, {Kind: store.ChangeCollection, ID: 1, Origin: "r1"},
		{Kind: store.ChangeJob, ID: 2, Origin: "r1"}}
	if err := d.Notify(ctx, want...); err != nil {
		t.Fatal(err)
	}
	equal(t, "round trips", rt.take(), []string{"query SELECT pg_notify($1, p)", "prepare"})
	for i, w := range want {
		select {
		case c := <-got:
			equal(t, fmt.Sprintf("change %d", i), c, w)
		case <-ctx.Done():
			t.Fatalf("change %d not received", i)
		}
	}
}

func equal[T any](t *testing.T, what string, got, want T) {
	t.Helper()
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("%s: got %v, want %v", what, got, want)
	}
}
