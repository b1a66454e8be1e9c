package replica_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/dispatch"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/replica"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/secret"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store/testdb"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"
)

// member is a replica of a lease test: its region (x-ms-scheduler-execution-region) is its id,
// so that the receiver knows which replica made each attempt.
type member struct {
	*replica.Replica
	reg  *prometheus.Registry
	stop context.CancelFunc
	done chan error
}

// memberWorkers is every test member's worker count.
const memberWorkers = 4

func startMember(t *testing.T, st store.Driver, id string, lease time.Duration) *member {
	t.Helper()
	box, err := secret.New(make([]byte, 32))
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	var log *slog.Logger
	if os.Getenv("SCHEDULER_TEST_LOG") != "" {
		log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug})).With("replica", id)
	}
	r, err := replica.New(replica.Config{Store: st, ID: id, TTL: time.Second, Registerer: reg, Logger: log, Dispatch: dispatch.Config{
		Secrets: box, Logger: log, Workers: memberWorkers, TargetConcurrency: memberWorkers, Region: id, Lease: lease, ShutdownGrace: 100 * time.Millisecond,
	}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	m := &member{Replica: r, reg: reg, stop: cancel, done: make(chan error, 1)}
	go func() { m.done <- r.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-m.done; err != nil {
			t.Errorf("replica %s: %v", id, err)
		}
	})
	return m
}

// counter reads a counter of a member's registries (the executor's, and its scheduler's while it
// leads).
func (m *member) counter(t *testing.T, name string) float64 {
	t.Helper()
	for _, g := range []prometheus.Gatherer{m.reg, m.Replica} {
		mfs, err := g.Gather()
		if err != nil {
			t.Fatal(err)
		}
		for _, mf := range mfs {
			if mf.GetName() == name && len(mf.GetMetric()) == 1 {
				return mf.GetMetric()[0].GetCounter().GetValue()
			}
		}
	}
	return -1
}

// attempt is one request the receiver got.
type attempt struct {
	job, tag, region string
	at               time.Time
}

// regionReceiver answers at once, except the requests of the regions in hold, which wait until
// the test ends (or their caller goes away). Every request is reported on got.
type regionReceiver struct {
	srv     *httptest.Server
	got     chan attempt
	hold    map[string]bool
	end     chan struct{}
	endOnce sync.Once
}

// release lets the held requests go.
func (rr *regionReceiver) release() { rr.endOnce.Do(func() { close(rr.end) }) }

func newRegionReceiver(t *testing.T, hold ...string) *regionReceiver {
	rr := &regionReceiver{got: make(chan attempt, 1000), hold: map[string]bool{}, end: make(chan struct{})}
	for _, h := range hold {
		rr.hold[h] = true
	}
	rr.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		region := r.Header.Get("x-ms-scheduler-execution-region")
		rr.got <- attempt{job: r.URL.Path, tag: r.Header.Get("x-ms-execution-tag"), region: region, at: time.Now()}
		if rr.hold[region] {
			select {
			case <-rr.end:
			case <-r.Context().Done():
			}
		}
	}))
	t.Cleanup(func() {
		rr.release()
		rr.srv.Close()
	})
	return rr
}

// next waits for the receiver's next request.
func (rr *regionReceiver) next(t *testing.T, what string) attempt {
	t.Helper()
	select {
	case a := <-rr.got:
		return a
	case <-time.After(20 * time.Second):
		t.Fatalf("%s: no request within 20s", what)
		return attempt{}
	}
}

// oneShots creates n one-shot jobs due at due posting to url/<name>, directly in the store, and
// tells the replica (as its API would).
func oneShots(t *testing.T, st store.Driver, r *replica.Replica, url string, n int, due time.Time) []*store.Job {
	t.Helper()
	ctx := t.Context()
	now := time.Now().UTC()
	ck := store.CollectionKey{Subscription: "s", ResourceGroup: "rg", Name: "c"}
	if _, _, err := st.CollectionPut(ctx, store.CollectionPutParams{Now: now, Collection: store.Collection{
		Key: ck, Properties: wire.JobCollectionProperties{State: "Enabled"}}}); err != nil {
		t.Fatal(err)
	}
	var jobs []*store.Job
	for i := range n {
		name := fmt.Sprintf("j%d", i)
		j, _, err := st.JobPut(ctx, store.JobPutParams{Now: now, Job: store.Job{
			Key:   store.JobKey{CollectionKey: ck, Name: name},
			State: store.JobStateEnabled,
			Properties: wire.JobProperties{StartTime: due.Format(time.RFC3339), Action: &wire.JobAction{Type: "Http",
				Request: &wire.HTTPRequest{URI: url + "/" + name, Method: "POST"}, RetryPolicy: &wire.RetryPolicy{RetryType: "None"}}},
			Status: store.JobStatus{NextExecutionTime: due},
		}})
		if err != nil {
			t.Fatal(err)
		}
		r.JobChanged(j.ID)
		jobs = append(jobs, j)
	}
	return jobs
}

// waitDone waits until every job ran exactly once as far as the store knows: Completed, one
// execution, one Completed history entry, nothing unfinished.
func waitDone(t *testing.T, st store.Driver, jobs []*store.Job) {
	t.Helper()
	ctx := t.Context()
	deadline := time.Now().Add(30 * time.Second)
	for {
		bad := ""
		for _, j := range jobs {
			got, err := st.JobGetByID(ctx, store.JobGetByIDParams{ID: j.ID})
			if err != nil {
				t.Fatal(err)
			}
			hs, err := st.HistoryList(ctx, store.HistoryListParams{Job: j.Key})
			if err != nil {
				t.Fatal(err)
			}
			if got.State != store.JobStateCompleted || got.Status.ExecutionCount != 1 || len(hs) != 1 || hs[0].Status != store.HistoryCompleted {
				bad = fmt.Sprintf("job %s: state %s, %d executions, %d history entries", j.Key.Name, got.State, got.Status.ExecutionCount, len(hs))
				break
			}
		}
		left, err := st.ExecutionListUnfinished(ctx, store.ExecutionListUnfinishedParams{})
		if err != nil {
			t.Fatal(err)
		}
		if bad == "" && len(left) > 0 {
			bad = fmt.Sprintf("%d executions unfinished", len(left))
		}
		if bad == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("not every job ran once within 30s: %s", bad)
		}
		time.Sleep(50 * time.Millisecond) // records are committed in batches
	}
}

// TestFollowersTakeTheirShare: the leader claims, and every replica's executor takes executions
// sized to its free workers: with 4 workers each and 8 occurrences due at once (every attempt held
// by the receiver), the leader and the follower each run exactly 4, and each reports 4 taken.
func TestFollowersTakeTheirShare(t *testing.T) {
	st := testdb.Postgres(t)
	recv := newRegionReceiver(t, "a", "b")
	a := startMember(t, st, "a", 0)
	waitFor(t, "a leads and is ready", 10*time.Second, func() bool { return a.Leading() && a.Ready() })
	b := startMember(t, st, "b", 0)
	waitFor(t, "b is ready", 10*time.Second, b.Ready)

	due := time.Now().Add(2 * time.Second).Truncate(time.Second).Add(time.Second)
	jobs := oneShots(t, st, a.Replica, recv.srv.URL, 8, due)
	by := map[string]int{}
	tags := map[string]bool{}
	for range 8 {
		at := recv.next(t, "8 attempts under way")
		by[at.region]++
		tags[at.tag] = true
	}
	if by["a"] != 4 || by["b"] != 4 || len(tags) != 8 {
		t.Fatalf("attempts by replica %v with %d tags, want 4 on a and 4 on b, 8 tags", by, len(tags))
	}
	for _, m := range []struct {
		id string
		m  *member
	}{{"a", a}, {"b", b}} {
		if got := m.m.counter(t, "scheduler_executions_taken_total"); got != 4 {
			t.Errorf("%s: scheduler_executions_taken_total %v, want 4", m.id, got)
		}
	}
	select {
	case extra := <-recv.got:
		t.Fatalf("a ninth request: %+v", extra)
	default:
	}
	recv.release()
	waitDone(t, st, jobs)
}

// dying is a store that a "killed" replica uses: once dead, every call fails, as for a process
// that is gone (it renews no lease and records nothing).
type dying struct {
	store.Driver
	dead atomic.Bool
}

var errDead = errors.New("this replica is dead (killed by the test)")

// Notify and Listen pass through (the replica is notified like the others while alive).
func (d *dying) Notify(ctx context.Context, cs ...store.Change) error {
	if d.dead.Load() {
		return errDead
	}
	n, _ := d.Driver.(store.Notifier)
	return n.Notify(ctx, cs...)
}

func (d *dying) Listen(ctx context.Context, ready func(), fn func(store.Change)) error {
	n, _ := d.Driver.(store.Notifier)
	return n.Listen(ctx, ready, func(c store.Change) {
		if !d.dead.Load() {
			fn(c)
		}
	})
}

func (d *dying) LeaderElect(ctx context.Context, p store.LeaderElectParams) (*store.Leader, error) {
	if d.dead.Load() {
		return nil, errDead
	}
	return d.Driver.LeaderElect(ctx, p)
}

func (d *dying) ExecutionTake(ctx context.Context, p store.ExecutionTakeParams) ([]store.TakenExecution, error) {
	if d.dead.Load() {
		return nil, errDead
	}
	return d.Driver.ExecutionTake(ctx, p)
}

func (d *dying) ExecutionLeaseRenew(ctx context.Context, p store.ExecutionLeaseRenewParams) ([]int64, error) {
	if d.dead.Load() {
		return nil, errDead
	}
	return d.Driver.ExecutionLeaseRenew(ctx, p)
}

func (d *dying) AttemptRecordMany(ctx context.Context, p store.AttemptRecordManyParams) ([]store.AttemptRecordResult, error) {
	if d.dead.Load() {
		return nil, errDead
	}
	return d.Driver.AttemptRecordMany(ctx, p)
}

// TestADeadFollowersAttemptsAreRescued: a follower dies with attempts in flight (its store calls
// fail from then on and it stops: no renewal, no record, no release). Once their lease ran out
// the leader's rescuer re-queues those executions and the leader's executor runs them again with
// their original execution tags; every job then ran once as the store counts it (the dead
// replica's attempts were never recorded).
func TestADeadFollowersAttemptsAreRescued(t *testing.T) {
	const lease = time.Second
	st := testdb.Postgres(t)
	recv := newRegionReceiver(t, "b") // b's attempts hang until b dies
	a := startMember(t, st, "a", lease)
	waitFor(t, "a leads and is ready", 10*time.Second, func() bool { return a.Leading() && a.Ready() })
	bStore := &dying{Driver: st}
	b := startMember(t, bStore, "b", lease)
	waitFor(t, "b is ready", 10*time.Second, b.Ready)

	due := time.Now().Add(2 * time.Second).Truncate(time.Second).Add(time.Second)
	jobs := oneShots(t, st, a.Replica, recv.srv.URL, 8, due)
	onB := map[string]string{} // job → tag of b's attempt
	for range 8 {
		at := recv.next(t, "8 attempts")
		if at.region == "b" {
			onB[at.job] = at.tag
		}
	}
	if len(onB) != 4 {
		t.Fatalf("%d attempts on b, want 4", len(onB))
	}
	killed := time.Now()
	bStore.dead.Store(true)
	b.stop()
	if err := <-b.done; err != nil {
		t.Logf("b (its store cut off) stopped with %v", err)
	}
	b.done <- nil // for the cleanup

	var took []time.Duration
	for len(took) < 4 {
		at := recv.next(t, "the dead replica's attempts run again")
		tag, ok := onB[at.job]
		if !ok || at.region != "a" {
			t.Fatalf("unexpected request %+v", at)
		}
		if at.tag != tag {
			t.Fatalf("%s ran again with tag %s, want its original %s", at.job, at.tag, tag)
		}
		delete(onB, at.job)
		took = append(took, at.at.Sub(killed))
	}
	sort.Slice(took, func(i, j int) bool { return took[i] < took[j] })
	if got := a.counter(t, "scheduler_executions_rescued_total"); got != 4 {
		t.Errorf("scheduler_executions_rescued_total on the leader %v, want 4", got)
	}
	waitDone(t, st, jobs)
	t.Logf("the dead follower's 4 attempts ran again on the leader %s to %s after it died (lease %s)", took[0].Round(time.Millisecond),
		took[3].Round(time.Millisecond), lease)
	if took[0] < lease/2 {
		t.Errorf("rescued %s after the kill, before the lease could have run out", took[0])
	}
}
