package dispatch_test

import (
	"context"
	"crypto/rand"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/dispatch"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/secret"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store/testdb"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/clock"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/jobstate"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/recurrence"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"
)

// wait is how long a test waits for something that should happen promptly.
const wait = 10 * time.Second

// lookahead is the dispatcher's default Lookahead: an occurrence is claimed that long before it
// is due, so the loop's timer is armed for then.
const lookahead = dispatch.DefaultLookahead

var t0 = time.Date(2026, 6, 1, 9, 0, 0, 0, time.UTC)

func intp(i int) *int { return &i }

// hit is one request a target received.
type hit struct {
	Method, Path, Body string
	Header             http.Header
}

// target is a real local HTTP server that answers each path with a programmed status and reports
// every request on a channel.
type target struct {
	*httptest.Server
	hits   chan hit
	mu     sync.Mutex
	status map[string]int
	block  chan struct{} // when set, requests wait for it to close
	// blockPath: requests to a path in it wait for its channel to close.
	blockPath map[string]chan struct{}
}

func newTarget(t *testing.T) *target {
	t.Helper()
	tg := &target{hits: make(chan hit, 1000), status: map[string]int{}}
	tg.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		tg.mu.Lock()
		st, ok := tg.status[r.URL.Path]
		block := tg.block
		if b, ok := tg.blockPath[r.URL.Path]; ok {
			block = b
		}
		tg.mu.Unlock()
		tg.hits <- hit{Method: r.Method, Path: r.URL.Path, Body: string(b), Header: r.Header.Clone()}
		if block != nil {
			<-block
		}
		if !ok {
			st = http.StatusOK
		}
		w.WriteHeader(st)
		_, _ = io.WriteString(w, "answer from "+r.URL.Path)
	}))
	t.Cleanup(tg.Close)
	return tg
}

func (tg *target) answer(path string, status int) {
	tg.mu.Lock()
	tg.status[path] = status
	tg.mu.Unlock()
}

// next waits for the next request.
func (tg *target) next(t *testing.T) hit {
	t.Helper()
	select {
	case h := <-tg.hits:
		return h
	case <-time.After(wait):
		t.Fatal("no request reached the target")
		return hit{}
	}
}

// noHit checks that no request has reached the target. Call it once the dispatcher signalled
// that it passed the point where it decided (e.quiet): it does not wait.
func (tg *target) noHit(t *testing.T) {
	t.Helper()
	select {
	case h := <-tg.hits:
		t.Fatalf("unexpected request %s %s (expected %s, tag %s)", h.Method, h.Path, h.Header.Get("x-ms-scheduler-expected-execution-time"), h.Header.Get("x-ms-execution-tag"))
	default:
	}
}

// env is a dispatcher on a real SQLite file with a fake clock.
type env struct {
	t       *testing.T
	store   store.Driver
	box     *secret.Box
	clock   *clock.Fake
	disp    *dispatch.Dispatcher // a single process's (cfg.Owner empty)
	exec    *dispatch.Executor   // a replica's executor (cfg.Owner set)
	reg     *prometheus.Registry
	records chan store.AttemptRecord
	cancel  context.CancelFunc
	done    chan error
	coll    *store.Collection
	cfg     dispatch.Config
	// setup, when set, is called with a single process's dispatcher before it runs.
	setup func(*dispatch.Dispatcher)
}

func newEnv(t *testing.T, now time.Time, tweak func(*dispatch.Config)) *env {
	t.Helper()
	return newEnvOn(t, testdb.Open(t), now, tweak)
}

// newEnvOn is newEnv on the store st.
func newEnvOn(t *testing.T, st store.Driver, now time.Time, tweak func(*dispatch.Config)) *env {
	t.Helper()
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		t.Fatal(err)
	}
	box, err := secret.New(key)
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, store: st, box: box, clock: clock.NewFake(now), records: make(chan store.AttemptRecord, 1000)}
	e.coll, _, err = st.CollectionPut(t.Context(), store.CollectionPutParams{Now: now, Collection: store.Collection{
		Key:        store.CollectionKey{Subscription: "sub", ResourceGroup: "rg", Name: "coll"},
		Properties: wire.JobCollectionProperties{Sku: &wire.Sku{Name: "Standard"}, State: "Enabled"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	e.cfg = dispatch.Config{
		Store: st, Clock: e.clock, Secrets: box, Region: "test-region", Workers: 4, FaultedAfter: 2,
		OnRecord: func(r store.AttemptRecord, _ store.AttemptRecordResult) { e.records <- r },
	}
	if tweak != nil {
		tweak(&e.cfg)
	}
	return e
}

// start runs a dispatcher until the test ends (or stop), once it is ready.
func (e *env) start() {
	e.t.Helper()
	d := e.launch()
	deadline := time.Now().Add(wait)
	for !d.Ready() {
		if time.Now().After(deadline) {
			e.t.Fatal("dispatcher not ready")
		}
		time.Sleep(time.Millisecond)
	}
}

// launch runs a dispatcher until the test ends (or stop) and returns at once.
func (e *env) launch() interface{ Ready() bool } {
	e.t.Helper()
	e.reg = prometheus.NewRegistry()
	e.cfg.Registerer = e.reg
	var d interface {
		Run(context.Context) error
		Ready() bool
	}
	if e.cfg.Owner != "" {
		x, err := dispatch.NewExecutor(e.cfg)
		if err != nil {
			e.t.Fatal(err)
		}
		x.TestSignals.Init()
		e.exec, d = x, x
	} else {
		x, err := dispatch.New(e.cfg)
		if err != nil {
			e.t.Fatal(err)
		}
		x.TestSignals.Init()
		if e.setup != nil {
			e.setup(x)
		}
		e.disp, d = x, x
	}
	ctx, cancel := context.WithCancel(context.Background())
	e.cancel, e.done = cancel, make(chan error, 1)
	go func() { e.done <- d.Run(ctx) }()
	e.t.Cleanup(func() { e.stop() })
	return d
}

// stop cancels Run and waits for it to return.
func (e *env) stop() {
	e.t.Helper()
	if e.cancel == nil {
		return
	}
	e.cancel()
	e.cancel = nil
	select {
	case err := <-e.done:
		if err != nil {
			e.t.Errorf("Run: %v", err)
		}
	case <-time.After(wait):
		e.t.Error("Run did not return")
	}
}

// record waits for the next committed attempt record.
func (e *env) record() store.AttemptRecord {
	e.t.Helper()
	select {
	case r := <-e.records:
		return r
	case <-time.After(wait):
		e.t.Fatal("no attempt was recorded")
		return store.AttemptRecord{}
	}
}

// quiet waits until the loop signals that it went to wait with nothing in flight and its next
// wake-up at next (zero: nothing scheduled), and returns that signal. A test calls it after an
// action whose outcome changes next, so that a signal sent before the action does not match.
func (e *env) quiet(next time.Time) dispatch.Quiet {
	e.t.Helper()
	q, err := e.disp.TestSignals.Quiet.Wait(wait, func(q dispatch.Quiet) bool { return q.Next.Equal(next) })
	if err != nil {
		e.t.Fatalf("waiting for the loop to be quiet with its next wake-up at %s: %v", next, err)
	}
	return q
}

// putJob stores a job the way the API does (next execution from the engine) and tells the
// dispatcher, as the API does, with the job as written (JobWritten).
func (e *env) putJob(name string, props wire.JobProperties, state string) *store.Job {
	e.t.Helper()
	j := e.storeJob(name, props, state)
	if e.disp != nil {
		e.disp.JobWritten(j)
	}
	return j
}

// changeJob stores a job as putJob does and tells the dispatcher only its ID (JobChanged), as a
// change it did not write (another replica's, through the change feed) reaches it: the loop
// reads the job.
func (e *env) changeJob(name string, props wire.JobProperties, state string) {
	e.t.Helper()
	e.disp.JobChanged(e.storeJob(name, props, state).ID)
}

// storeJob stores a job as putJob does, without telling the dispatcher.
func (e *env) storeJob(name string, props wire.JobProperties, state string) *store.Job {
	e.t.Helper()
	now := e.clock.Now()
	rule, err := recurrence.Compile(props.StartTime, props.Recurrence, now)
	if err != nil {
		e.t.Fatalf("compile: %v", err)
	}
	next, _ := jobstate.FirstRun(rule, state, e.coll.Properties.State, 0, now)
	if err := e.box.SealJob(&props, store.JobKey{CollectionKey: e.coll.Key, Name: name}); err != nil {
		e.t.Fatal(err)
	}
	props.State = state
	j, _, err := e.store.JobPut(e.t.Context(), store.JobPutParams{Now: now, Job: store.Job{
		Key:        store.JobKey{CollectionKey: e.coll.Key, Name: name},
		Properties: props, State: state, Status: store.JobStatus{NextExecutionTime: next},
	}})
	if err != nil {
		e.t.Fatal(err)
	}
	return j
}

func (e *env) job(id int64) *store.Job {
	e.t.Helper()
	j, err := e.store.JobGetByID(e.t.Context(), store.JobGetByIDParams{ID: id})
	if err != nil {
		e.t.Fatal(err)
	}
	return j
}

func (e *env) history(j *store.Job) []*store.HistoryEntry {
	e.t.Helper()
	hs, err := e.store.HistoryList(e.t.Context(), store.HistoryListParams{Job: j.Key})
	if err != nil {
		e.t.Fatal(err)
	}
	return hs
}

func (e *env) unfinished() []*store.Execution {
	e.t.Helper()
	xs, err := e.store.ExecutionListUnfinished(e.t.Context(), store.ExecutionListUnfinishedParams{})
	if err != nil {
		e.t.Fatal(err)
	}
	return xs
}

// claimed waits until an occurrence is claimed (stored as an unfinished execution) and returns
// the first unfinished execution.
func (e *env) claimed() *store.Execution {
	e.t.Helper()
	deadline := time.Now().Add(wait)
	for {
		if xs := e.unfinished(); len(xs) > 0 {
			return xs[0]
		}
		if time.Now().After(deadline) {
			e.t.Fatal("no occurrence was claimed")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func httpAction(uri string) *wire.JobAction {
	return &wire.JobAction{Type: "Http", Request: &wire.HTTPRequest{URI: uri, Method: "POST", Body: "ping"}}
}

func everyMinute(start time.Time) wire.JobProperties {
	return wire.JobProperties{
		StartTime:  start.Format(time.RFC3339),
		Recurrence: &wire.JobRecurrence{Frequency: "Minute", Interval: intp(1)},
	}
}

// counter reads a counter or gauge from the registry.
func metricValue(t *testing.T, reg *prometheus.Registry, name, label string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			if label != "" && (len(m.GetLabel()) == 0 || m.GetLabel()[0].GetValue() != label) {
				continue
			}
			switch {
			case m.Counter != nil:
				return m.GetCounter().GetValue()
			case m.Gauge != nil:
				return m.GetGauge().GetValue()
			case m.Histogram != nil:
				return float64(m.GetHistogram().GetSampleCount())
			}
		}
	}
	t.Fatalf("metric %s{%s} not found", name, label)
	return 0
}
