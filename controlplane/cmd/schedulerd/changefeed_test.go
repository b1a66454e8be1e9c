package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store/testdb"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/client"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/tcptest"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"
)

// These tests check that a change committed through any replica reaches the leader's schedule
// although the replica that made it dies right after its commit, the leader's LISTEN connection
// is cut, or the database drops every connection: each job the store holds fires.

// feedColl is the collection the tests' jobs go into.
var feedColl = client.CollectionID{Subscription: "feed", ResourceGroup: "rg", Name: "coll"}

// fireReceiver counts the deliveries of each job (by the path /job/<name>).
type fireReceiver struct {
	srv *httptest.Server
	mu  sync.Mutex
	got map[string]int
}

func newFireReceiver(t *testing.T) *fireReceiver {
	r := &fireReceiver{got: map[string]int{}}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.mu.Lock()
		r.got[strings.TrimPrefix(req.URL.Path, "/job/")]++
		r.mu.Unlock()
	}))
	t.Cleanup(r.srv.Close)
	return r
}

// missing returns the names not delivered yet, sorted.
func (r *fireReceiver) missing(names []string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, n := range names {
		if r.got[n] == 0 {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

// fireWithin is how soon after its change a job must have fired ("within seconds").
const fireWithin = 15 * time.Second

// waitFired waits up to fireWithin for every job named to be delivered and returns those that
// were not.
func (r *fireReceiver) waitFired(names []string) []string {
	deadline := time.Now().Add(fireWithin)
	for {
		m := r.missing(names)
		if len(m) == 0 || time.Now().After(deadline) {
			return m
		}
		time.Sleep(100 * time.Millisecond) // polling the receiver's record
	}
}

// feedCollection creates the tests' collection through p, room for maxJobs.
func feedCollection(t *testing.T, p *replicaProc, maxJobs int) {
	t.Helper()
	if _, err := p.client.CollectionPut(context.Background(), feedColl, &wire.JobCollectionDefinition{
		Location:   "local",
		Properties: &wire.JobCollectionProperties{Sku: &wire.Sku{Name: "P20Premium"}, State: "Enabled", Quota: &wire.JobCollectionQuota{MaxJobCount: &maxJobs}},
	}); err != nil {
		t.Fatal(err)
	}
}

// putOneShot PUTs a job that fires once, at once, through the replica at addr, with one
// request (no client retries: the status is the replica's answer to that request).
func putOneShot(ctx context.Context, addr, name, recvURL string) (int, error) {
	body := fmt.Sprintf(`{"properties":{"action":{"type":"Http","request":{"uri":%q,"method":"POST"},"retryPolicy":{"retryType":"None"}}}}`,
		recvURL+"/job/"+name)
	u := "http://" + addr + "/subscriptions/" + feedColl.Subscription + "/resourceGroups/" + feedColl.ResourceGroup +
		"/providers/Microsoft.Scheduler/jobCollections/" + feedColl.Name + "/jobs/" + name + "?api-version=" + wire.APIVersion
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, u, strings.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Authorization", "Bearer "+replicaToken)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	_ = resp.Body.Close()
	return resp.StatusCode, nil
}

// putBurst PUTs the jobs named prefix00000... (n of them) by clients concurrent clients, each
// through the replica pick(i) chooses, and calls at(k) after the k-th 201 (k from 1; at may
// kill or cut: the requests answered after that are counted as they come). It returns the names
// answered 201.
func putBurst(t *testing.T, prefix string, n, clients int, recvURL string, pick func(i int) string, at func(k int)) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		acked []string
		oks   atomic.Int64
		next  = make(chan int, n)
	)
	for i := range n {
		next <- i
	}
	close(next)
	for range clients {
		wg.Go(func() {
			for i := range next {
				name := fmt.Sprintf("%s%05d", prefix, i)
				code, err := putOneShot(ctx, pick(i), name, recvURL)
				if err != nil || code != http.StatusCreated {
					continue // not acknowledged: the replica died or its database connection was cut
				}
				mu.Lock()
				acked = append(acked, name)
				mu.Unlock()
				if at != nil {
					at(int(oks.Add(1)))
				}
			}
		})
	}
	wg.Wait()
	return acked
}

// storedJobs returns the names of the jobs the store holds whose names start with prefix:
// committed, acknowledged or not.
func storedJobs(t *testing.T, db *pgx.Conn, dbURL, prefix string) []string {
	t.Helper()
	rows, err := db.Query(context.Background(), `SELECT name FROM `+schemaOf(t, dbURL)+`.jobs WHERE name LIKE $1 ORDER BY name`, prefix+"%")
	if err != nil {
		t.Fatal(err)
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	return names
}

// readyz returns a replica's /readyz status (0: no answer).
func readyz(p *replicaProc) int {
	c := &http.Client{Timeout: time.Second}
	resp, err := c.Get("http://" + p.addr + "/readyz")
	if err != nil {
		return 0
	}
	_ = resp.Body.Close()
	return resp.StatusCode
}

// readyWithin is how soon every replica must answer /readyz 200 again.
const readyWithin = 15 * time.Second

// waitReady waits up to readyWithin for every replica of s to answer /readyz 200.
func (s *replicaSet) waitReady() {
	s.t.Helper()
	s.readySince(time.Now(), readyWithin)
}

// readySince waits for every replica of s to answer /readyz 200 until within after start, and
// returns how long after start they all did.
func (s *replicaSet) readySince(start time.Time, within time.Duration) time.Duration {
	s.t.Helper()
	for {
		var not []string
		for _, p := range s.list() {
			if readyz(p) != http.StatusOK {
				not = append(not, p.id)
			}
		}
		if len(not) == 0 {
			return time.Since(start)
		}
		if time.Since(start) > within {
			s.t.Fatalf("replicas %v do not answer /readyz 200 %s after %s", not, within, start.Format(time.StampMilli))
		}
		time.Sleep(50 * time.Millisecond) // polling the processes' readiness
	}
}

// other returns a live replica other than p.
func (s *replicaSet) other(p *replicaProc) *replicaProc {
	for _, q := range s.list() {
		if q != p {
			return q
		}
	}
	s.t.Fatalf("no replica other than %s", p.id)
	return nil
}

// feedDB connects to the test database (to read the store and terminate connections).
func feedDB(t *testing.T) *pgx.Conn {
	t.Helper()
	db, err := pgx.Connect(context.Background(), testdb.PostgresURL(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close(context.Background()) })
	return db
}

// terminate terminates the connections of the replicas ids whose current or last statement
// starts with query ("": every one) and returns how many it terminated. It may be called from
// the test's clients (an error fails the test without stopping it).
func terminate(t *testing.T, db *pgx.Conn, mu *sync.Mutex, query string, ids ...string) int {
	mu.Lock()
	defer mu.Unlock()
	var n int
	if err := db.QueryRow(context.Background(), `SELECT count(*) FILTER (WHERE pg_terminate_backend(pid)) FROM pg_stat_activity
		WHERE application_name = ANY($1) AND ($2 = '' OR query LIKE $2 || '%')`, ids, query).Scan(&n); err != nil {
		t.Errorf("terminating connections: %v", err)
	}
	return n
}

// TestChangeThroughKilledFollowerFires is the operator's probe: three replicas; 400 one-shot
// jobs PUT through a follower by 32 clients, the follower SIGKILLed right after its 60th 201 and
// started again; every job the store holds (each one answered 201 among them) fires within 15 s.
// SCHEDULER_LOSS_ROUNDS sets the rounds (default 1; the probe ran 8); the lost counts
// are logged each round.
func TestChangeThroughKilledFollowerFires(t *testing.T) {
	if testing.Short() {
		t.Skip("a process test")
	}
	rounds := 1
	if v := os.Getenv("SCHEDULER_LOSS_ROUNDS"); v != "" {
		var err error
		if rounds, err = strconv.Atoi(v); err != nil || rounds < 1 {
			t.Fatalf("SCHEDULER_LOSS_ROUNDS=%q: want a positive integer", v)
		}
	}
	const (
		jobs      = 400
		clients   = 32
		killAfter = 60
	)
	s := newReplicaSet(t)
	s.start("r1")
	leader := s.waitLeader(20 * time.Second)
	s.start("r2")
	s.start("r3")
	s.waitReady()
	db := feedDB(t)
	recv := newFireReceiver(t)
	feedCollection(t, leader, jobs*rounds)
	var lostAcked, lostStored, acked, stored int
	for round := range rounds {
		follower := s.other(leader)
		var once sync.Once
		prefix := fmt.Sprintf("k%d-", round)
		ack := putBurst(t, prefix, jobs, clients, recv.srv.URL, func(int) string { return follower.addr }, func(k int) {
			if k == killAfter {
				once.Do(func() { s.kill(follower) })
			}
		})
		s.start(follower.id)
		held := storedJobs(t, db, s.dbURL, prefix)
		lostS := recv.waitFired(held)
		lostA := recv.missing(ack)
		t.Logf("round %d: %d answered 201, %d held by the store; not fired within 15 s: %d answered, %d held",
			round+1, len(ack), len(held), len(lostA), len(lostS))
		acked, stored, lostAcked, lostStored = acked+len(ack), stored+len(held), lostAcked+len(lostA), lostStored+len(lostS)
		s.waitReady()
	}
	t.Logf("%d rounds: %d of %d jobs answered 201 never fired (%d of %d held by the store)", rounds, lostAcked, acked, lostStored, stored)
	if lostStored > 0 {
		t.Errorf("%d committed jobs (%d of them answered 201) never fired: their change died with the follower", lostStored, lostAcked)
	}
}

// TestLeaderListenCutChangesFire: jobs are PUT through a follower while the leader's LISTEN
// connection is terminated again and again (pg_terminate_backend): each job fires within 15 s.
func TestLeaderListenCutChangesFire(t *testing.T) {
	if testing.Short() {
		t.Skip("a process test")
	}
	s := newReplicaSet(t)
	s.start("r1")
	leader := s.waitLeader(20 * time.Second)
	s.start("r2")
	s.waitReady()
	follower := s.other(leader)
	db := feedDB(t)
	recv := newFireReceiver(t)
	feedCollection(t, leader, 1000)
	var (
		cuts atomic.Int64
		dbMu sync.Mutex
	)
	putBurst(t, "l-", 600, 8, recv.srv.URL, func(int) string { return follower.addr }, func(k int) {
		if k%100 == 50 {
			cuts.Add(int64(terminate(t, db, &dbMu, "LISTEN", leader.id)))
		}
	})
	if cuts.Load() == 0 {
		t.Fatal("no LISTEN connection of the leader was terminated: the test tested nothing")
	}
	held := storedJobs(t, db, s.dbURL, "l-")
	if lost := recv.waitFired(held); len(lost) > 0 {
		t.Errorf("%d of %d jobs PUT through the follower never fired after %d cuts of the leader's LISTEN connection (first: %s)",
			len(lost), len(held), cuts.Load(), lost[0])
	}
	t.Logf("%d jobs fired; the leader's LISTEN connection terminated %d times", len(held), cuts.Load())
}

// TestConnectionCutUnderLoad: three replicas take PUTs from 32 clients while the database
// terminates every connection of every replica, twice: every job the store holds fires, and
// every replica answers /readyz 200 again within 15 s of each cut.
func TestConnectionCutUnderLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("a process test")
	}
	ids := []string{"r1", "r2", "r3"}
	s := newReplicaSet(t)
	s.start("r1")
	leader := s.waitLeader(20 * time.Second)
	s.start("r2")
	s.start("r3")
	s.waitReady()
	db := feedDB(t)
	recv := newFireReceiver(t)
	feedCollection(t, leader, 1000)
	procs := s.list()
	var (
		mu    sync.Mutex
		cutAt []time.Time
		cut   []int
	)
	ack := putBurst(t, "c-", 800, 32, recv.srv.URL, func(i int) string { return procs[i%len(procs)].addr }, func(k int) {
		if k == 150 || k == 450 {
			n := terminate(t, db, &mu, "", ids...)
			mu.Lock()
			cutAt, cut = append(cutAt, time.Now()), append(cut, n)
			mu.Unlock()
		}
	})
	if len(cutAt) != 2 {
		t.Fatalf("%d cuts, want 2 (%d PUTs answered 201)", len(cutAt), len(ack))
	}
	took := s.readySince(cutAt[1], readyWithin)
	held := storedJobs(t, db, s.dbURL, "c-")
	lost := recv.waitFired(held)
	t.Logf("cuts terminated %v connections; %d answered 201, %d held; every replica ready %s after the last cut",
		cut, len(ack), len(held), took.Round(time.Millisecond))
	if len(lost) > 0 {
		t.Errorf("%d of %d committed jobs never fired (%d of them answered 201; first: %s)", len(lost), len(held), len(recv.missing(ack)), lost[0])
	}
}

// pgProxy forwards TCP connections to PostgreSQL and can make those that sent a LISTEN go
// silent: nothing more passes either way and neither side is told, as when a firewall or a NAT
// forgets a connection.
type pgProxy struct {
	addr   string // host:port it listens on
	target string
	mu     sync.Mutex
	conns  []*proxyConn
}

type proxyConn struct {
	listen atomic.Bool // the client sent a LISTEN (the driver's statement: LISTEN "channel")
	silent atomic.Bool
	closed atomic.Bool
}

func newPGProxy(t *testing.T, target string) *pgProxy {
	p := &pgProxy{target: target}
	var srv *tcptest.Server
	srv = tcptest.Serve(t, func(client net.Conn) {
		server, err := net.Dial("tcp", target)
		if err != nil {
			_ = client.Close()
			return
		}
		srv.Track(server)
		pc := &proxyConn{}
		p.mu.Lock()
		p.conns = append(p.conns, pc)
		p.mu.Unlock()
		pipe := func(dst, src net.Conn, up bool) {
			defer func() { pc.closed.Store(true); _ = dst.Close(); _ = src.Close() }()
			buf := make([]byte, 32<<10)
			for {
				n, err := src.Read(buf)
				if err != nil {
					return
				}
				if up && strings.Contains(string(buf[:n]), `LISTEN "`) {
					pc.listen.Store(true)
				}
				if pc.silent.Load() {
					continue // swallowed: the other side never hears of it
				}
				if _, err := dst.Write(buf[:n]); err != nil {
					return
				}
			}
		}
		srv.Go(func() { pipe(client, server, false) })
		pipe(server, client, true)
	})
	p.addr = srv.Addr()
	return p
}

// silenceListens makes every connection that sent a LISTEN silent and returns how many.
func (p *pgProxy) silenceListens() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, c := range p.conns {
		if c.listen.Load() && !c.silent.Load() && !c.closed.Load() {
			c.silent.Store(true)
			n++
		}
	}
	return n
}

// via returns dbURL with its host and port those of the proxy.
func (p *pgProxy) via(t *testing.T, dbURL string) string {
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	u.Host = p.addr
	return u.String()
}

// TestLeaderListenDroppedSilentlyChangesFire: the leader's LISTEN connection goes silent (a
// proxy between it and PostgreSQL stops passing anything on it, telling neither side): jobs PUT
// through a follower afterwards fire within 15 s, and the leader listens again on a new
// connection.
func TestLeaderListenDroppedSilentlyChangesFire(t *testing.T) {
	if testing.Short() {
		t.Skip("a process test")
	}
	s := newReplicaSet(t)
	u, err := url.Parse(s.dbURL)
	if err != nil {
		t.Fatal(err)
	}
	proxy := newPGProxy(t, u.Host)
	s.startOn("r1", proxy.via(t, s.dbURL))
	leader := s.waitLeader(20 * time.Second)
	s.start("r2")
	s.waitReady()
	follower := s.other(leader)
	recv := newFireReceiver(t)
	feedCollection(t, leader, 1000)
	if n := proxy.silenceListens(); n != 1 {
		t.Fatalf("%d LISTEN connections silenced, want the leader's one", n)
	}
	acked := putBurst(t, "s-", 200, 8, recv.srv.URL, func(int) string { return follower.addr }, nil)
	if len(acked) != 200 {
		t.Fatalf("%d of 200 PUTs answered 201", len(acked))
	}
	if lost := recv.waitFired(acked); len(lost) > 0 {
		t.Fatalf("%d of %d jobs PUT through the follower never fired after the leader's LISTEN connection went silent (first: %s)",
			len(lost), len(acked), lost[0])
	}
	deadline := time.Now().Add(15 * time.Second)
	for !logHas(leader, "listening again on a new connection") {
		if time.Now().After(deadline) {
			t.Fatal("the leader never listened again after its LISTEN connection went silent")
		}
		time.Sleep(100 * time.Millisecond) // polling the log
	}
}

// logHas reports whether a replica's log holds msg.
func logHas(p *replicaProc, msg string) bool {
	b, err := os.ReadFile(p.log)
	return err == nil && strings.Contains(string(b), msg)
}

// TestLeaderPoolCutChangesFire: jobs are PUT through a follower while the leader's database
// connections other than its LISTEN are terminated again and again (the leader hears of the
// changes, and reading the changed jobs fails): each job fires within 15 s.
func TestLeaderPoolCutChangesFire(t *testing.T) {
	if testing.Short() {
		t.Skip("a process test")
	}
	s := newReplicaSet(t)
	s.start("r1")
	leader := s.waitLeader(20 * time.Second)
	s.start("r2")
	s.waitReady()
	follower := s.other(leader)
	db := feedDB(t)
	recv := newFireReceiver(t)
	feedCollection(t, leader, 1000)
	var (
		cuts atomic.Int64
		dbMu sync.Mutex
	)
	putBurst(t, "p-", 800, 16, recv.srv.URL, func(int) string { return follower.addr }, func(k int) {
		if k%50 == 25 {
			dbMu.Lock()
			defer dbMu.Unlock()
			var n int
			if err := db.QueryRow(context.Background(), `SELECT count(*) FILTER (WHERE pg_terminate_backend(pid)) FROM pg_stat_activity
				WHERE application_name = $1 AND query NOT LIKE 'LISTEN%'`, leader.id).Scan(&n); err != nil {
				t.Errorf("terminating connections: %v", err)
			}
			cuts.Add(int64(n))
		}
	})
	held := storedJobs(t, db, s.dbURL, "p-")
	if lost := recv.waitFired(held); len(lost) > 0 {
		t.Errorf("%d of %d jobs PUT through the follower never fired while the leader's other connections were cut %d times (first: %s)",
			len(lost), len(held), cuts.Load(), lost[0])
		logErrors(t, leader)
	}
	t.Logf("%d jobs held by the store; %d of the leader's connections terminated", len(held), cuts.Load())
}

// logErrors logs the distinct error messages of a replica's log.
func logErrors(t *testing.T, p *replicaProc) {
	b, err := os.ReadFile(p.log)
	if err != nil {
		return
	}
	seen := map[string]int{}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.Contains(l, `"level":"ERROR"`) {
			if i := strings.Index(l, `"msg":`); i >= 0 {
				msg, _, _ := strings.Cut(l[i:], `",`)
				seen[msg]++
			}
		}
	}
	for m, n := range seen {
		t.Logf("%s log: %dx %s", p.id, n, m)
	}
}
