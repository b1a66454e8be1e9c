package replica_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/dispatch"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/replica"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/secret"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store/postgres"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store/testdb"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"
)

// cutOff is a real store whose LeaderElect can be made to fail, as when the replica loses the
// database; it remembers when the last successful renewal of replica started (the lease is
// counted from no earlier than that).
type cutOff struct {
	store.Driver
	replica string

	mu      sync.Mutex
	failing bool
	lastOK  time.Time
}

var errCut = errors.New("database unreachable (cut off by the test)")

func (c *cutOff) LeaderElect(ctx context.Context, p store.LeaderElectParams) (*store.Leader, error) {
	c.mu.Lock()
	failing := c.failing
	c.mu.Unlock()
	if failing {
		return nil, errCut
	}
	start := time.Now()
	l, err := c.Driver.LeaderElect(ctx, p)
	if err == nil && l.Replica == c.replica {
		c.mu.Lock()
		c.lastOK = start
		c.mu.Unlock()
	}
	return l, err
}

func (c *cutOff) cut() {
	c.mu.Lock()
	c.failing = true
	c.mu.Unlock()
}

func newReplica(t *testing.T, st store.Driver, id string, ttl time.Duration) *replica.Replica {
	t.Helper()
	box, err := secret.New(make([]byte, 32))
	if err != nil {
		t.Fatal(err)
	}
	r, err := replica.New(replica.Config{Store: st, ID: id, TTL: ttl, Dispatch: dispatch.Config{Secrets: box}})
	if err != nil {
		t.Fatal(err)
	}
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

// openPostgres opens a driver (a pool of its own) on the database at u.
func openPostgres(t *testing.T, u string) *postgres.Driver {
	t.Helper()
	d, err := postgres.Open(t.Context(), u)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	return d
}

// waitFor polls cond (the replicas' state, which they change on their own timers) until it holds.
func waitFor(t *testing.T, what string, within time.Duration, cond func() bool) time.Time {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s", what, within)
		}
		time.Sleep(5 * time.Millisecond)
	}
	return time.Now()
}

// TestLeaderCutOffStepsDownBeforeItsLeaseEnds: a leader whose renewals fail stops its
// dispatcher before the lease it last renewed ends, so that the replica that takes over once the
// lease ended never acts beside it; the other replica then leads in the next term.
func TestLeaderCutOffStepsDownBeforeItsLeaseEnds(t *testing.T) {
	const ttl = 900 * time.Millisecond
	st := testdb.Open(t)
	a := &cutOff{Driver: st, replica: "a"}
	ra := newReplica(t, a, "a", ttl)
	waitFor(t, "a leads", 10*time.Second, ra.Leading)
	rb := newReplica(t, st, "b", ttl)
	if rb.Leading() {
		t.Fatal("b leads beside a")
	}

	a.cut()
	stepped := waitFor(t, "a steps down", 5*time.Second, func() bool { return !ra.Leading() })
	a.mu.Lock()
	leaseEnd := a.lastOK.Add(ttl)
	a.mu.Unlock()
	if !stepped.Before(leaseEnd) {
		t.Fatalf("a stepped down %s after its lease ended", stepped.Sub(leaseEnd))
	}
	took := waitFor(t, "b takes over", 10*time.Second, rb.Leading)
	if took.Before(leaseEnd) {
		t.Fatalf("b led %s before a's lease ended", leaseEnd.Sub(took))
	}
	l, err := st.LeaderElect(t.Context(), store.LeaderElectParams{Replica: "observer", TTL: ttl})
	if err != nil {
		t.Fatal(err)
	}
	if l.Replica != "b" || l.Term != 2 {
		t.Fatalf("leader %+v, want b in term 2", l)
	}
	t.Logf("a stepped down %s before its lease ended; b led %s after it", leaseEnd.Sub(stepped), took.Sub(leaseEnd))
}

// TestChangeThroughFollowerReachesLeader: a job written through a follower (its API calls the
// follower's JobChanged) reaches the leader's dispatcher through the database's notifications and
// fires there, within seconds; the leader never reads the job unless told.
func TestChangeThroughFollowerReachesLeader(t *testing.T) {
	// Each replica has its own pool, as replicas in their own processes do: a change written
	// through b's is one that a has not made.
	u := testdb.PostgresSchema(t, testdb.PostgresURL(t))
	st, stB := openPostgres(t, u), openPostgres(t, u)
	fired := make(chan string, 1)
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case fired <- r.Header.Get("x-ms-execution-tag"):
		default:
		}
	}))
	t.Cleanup(target.Close)
	ra := newReplica(t, st, "a", time.Second)
	waitFor(t, "a leads, listens and has loaded its schedule", 10*time.Second, func() bool { return ra.Leading() && ra.Ready() })
	rb := newReplica(t, stB, "b", time.Second)
	waitFor(t, "b listens", 10*time.Second, rb.Ready)

	ctx := t.Context()
	now := time.Now().UTC()
	ck := store.CollectionKey{Subscription: "s", ResourceGroup: "rg", Name: "c"}
	if _, _, err := st.CollectionPut(ctx, store.CollectionPutParams{Now: now, Collection: store.Collection{
		Key: ck, Properties: wire.JobCollectionProperties{State: "Enabled"}}}); err != nil {
		t.Fatal(err)
	}
	due := now.Add(time.Second).Truncate(time.Second).Add(time.Second)
	j, _, err := stB.JobPut(ctx, store.JobPutParams{Now: now, Job: store.Job{
		Key:   store.JobKey{CollectionKey: ck, Name: "through-b"},
		State: store.JobStateEnabled,
		Properties: wire.JobProperties{StartTime: due.Format(time.RFC3339), Action: &wire.JobAction{Type: "Http",
			Request: &wire.HTTPRequest{URI: target.URL, Method: "POST"}, RetryPolicy: &wire.RetryPolicy{RetryType: "None"}}},
		Status: store.JobStatus{NextExecutionTime: due},
	}})
	if err != nil {
		t.Fatal(err)
	}
	rb.JobChanged(j.ID) // what b's API does after the write
	select {
	case tag := <-fired:
		if tag == "" {
			t.Fatal("fired without an execution tag")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the job written through the follower did not fire on the leader within 10s")
	}
}
