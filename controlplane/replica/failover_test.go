package replica_test

import (
	"context"
	"testing"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/dispatch"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/replica"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/secret"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store/testdb"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/clock"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/testsignal"
)

// fakeReplica runs a replica whose election, dispatchers and leadership expiry all run on clk,
// with its test signals on.
func fakeReplica(t *testing.T, st store.Driver, id string, ttl time.Duration, clk *clock.Fake) *replica.Replica {
	t.Helper()
	box, err := secret.New(make([]byte, 32))
	if err != nil {
		t.Fatal(err)
	}
	r, err := replica.New(replica.Config{Store: st, ID: id, TTL: ttl, Clock: clk, LeaseClock: clk, Dispatch: dispatch.Config{Secrets: box}})
	if err != nil {
		t.Fatal(err)
	}
	r.TestSignals.Init()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("replica %s: %v", id, err)
		}
	})
	return r
}

// round waits for a replica's next election round.
func round(t *testing.T, sig *testsignal.Signal[replica.Elected], id string) replica.Elected {
	t.Helper()
	e, err := sig.Wait(10*time.Second, func(replica.Elected) bool { return true })
	if err != nil {
		t.Fatalf("replica %s: %v", id, err)
	}
	return e
}

// TestFailoverOnTheFakeClock: the election runs on the injected clock. A leader cut off from the
// database steps down at its lease's end less the margin (TTL/4), while its last lease still
// runs; the other replica takes over at the first round at or after that lease's end, in the
// next term. The clock only moves to the replicas' next rounds, as their signals announce them.
func TestFailoverOnTheFakeClock(t *testing.T) {
	const ttl = 2 * time.Second
	t0 := time.Date(2026, 6, 1, 9, 0, 0, 0, time.UTC)
	clk := clock.NewFake(t0)
	st := testdb.Open(t)
	cut := &cutOff{Driver: st, replica: "a"}
	a := fakeReplica(t, cut, "a", ttl, clk)
	ea := round(t, &a.TestSignals.Elected, "a")
	if !ea.Leading || !ea.At.Equal(t0) {
		t.Fatalf("a's first round: %+v, want leading at %s", ea, t0)
	}
	b := fakeReplica(t, st, "b", ttl, clk)
	eb := round(t, &b.TestSignals.Elected, "b")
	if eb.Leading {
		t.Fatalf("b leads beside a: %+v", eb)
	}

	cut.cut()
	leaseEnd := ea.At.Add(ttl) // a's last successful round
	var stepped, took time.Time
	next := map[string]time.Time{"a": ea.At.Add(ea.Wait), "b": eb.At.Add(eb.Wait)}
	for took.IsZero() {
		at := next["b"]
		if next["a"].Before(at) {
			at = next["a"]
		}
		if at.Sub(t0) > 10*ttl {
			t.Fatalf("no failover by %s", at)
		}
		clk.Set(at)
		for _, r := range []struct {
			id  string
			rep *replica.Replica
		}{{"a", a}, {"b", b}} {
			if next[r.id].After(at) {
				continue
			}
			e := round(t, &r.rep.TestSignals.Elected, r.id)
			if !e.At.Equal(at) {
				t.Fatalf("replica %s's round at %s, want at %s", r.id, e.At, at)
			}
			next[r.id] = e.At.Add(e.Wait)
			switch {
			case r.id == "a" && e.Leading && !stepped.IsZero():
				t.Fatalf("a leads again at %s, cut off", e.At)
			case r.id == "a" && !e.Leading && stepped.IsZero():
				stepped = e.At
			case r.id == "b" && e.Leading:
				took = e.At
			}
		}
	}
	if want := leaseEnd.Add(-ttl / 4); !stepped.Equal(want) {
		t.Fatalf("a stepped down at %s, want at %s (its lease's end less TTL/4)", stepped.Sub(t0), want.Sub(t0))
	}
	if took.Before(leaseEnd) {
		t.Fatalf("b led at %s, before a's lease ended at %s", took.Sub(t0), leaseEnd.Sub(t0))
	}
	if took.After(leaseEnd.Add(ttl / 3)) {
		t.Fatalf("b led at %s, more than a renewal interval after a's lease ended at %s", took.Sub(t0), leaseEnd.Sub(t0))
	}
	l, err := st.LeaderElect(t.Context(), store.LeaderElectParams{Replica: "observer", TTL: ttl, Now: clk.Now()})
	if err != nil {
		t.Fatal(err)
	}
	if l.Replica != "b" || l.Term != 2 {
		t.Fatalf("leader %+v, want b in term 2", l)
	}
	t.Logf("a stepped down at +%s, its lease ended at +%s, b led at +%s", stepped.Sub(t0), leaseEnd.Sub(t0), took.Sub(t0))
}
