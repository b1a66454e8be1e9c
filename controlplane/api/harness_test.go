package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/dispatch"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/secret"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store/testdb"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/clock"
)

const (
	adminToken = "admin-secret-token"
	subAToken  = "token-of-sub-a"
	// metricsToken reads /metrics only.
	metricsToken = "token-of-the-scraper"
	apiVersion   = "?api-version=2016-03-01"
	collPath     = "/subscriptions/sub-a/resourceGroups/rg1/providers/Microsoft.Scheduler/jobCollections/jc1"
)

// t0 is the fake clock's start: Wednesday 2026-11-18 12:00:30 UTC.
var t0 = time.Date(2026, 11, 18, 12, 0, 30, 0, time.UTC)

// noopDispatcherFake stands in for the dispatcher, which the API only notifies: it records what
// it is told and runs nothing.
type noopDispatcherFake struct {
	mu          sync.Mutex
	jobs        []int64
	collections []int64
	runs        []int64
	backfills   []backfillCall
	notReady    bool
}

func (d *noopDispatcherFake) JobChanged(id int64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.jobs = append(d.jobs, id)
}

func (d *noopDispatcherFake) JobWritten(j *store.Job) { d.JobChanged(j.ID) }

func (d *noopDispatcherFake) CollectionChanged(id int64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.collections = append(d.collections, id)
}

func (d *noopDispatcherFake) RunNow(_ context.Context, j *store.Job) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.runs = append(d.runs, j.ID)
	return nil
}

func (d *noopDispatcherFake) Backfill(_ context.Context, id int64, at []time.Time) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.backfills = append(d.backfills, backfillCall{id, at})
	return nil
}

func (d *noopDispatcherFake) Ready() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return !d.notReady
}

// backfillCall is a backfill asked of the dispatcher.
type backfillCall struct {
	job int64
	at  []time.Time
}

// harness is a real API on a real SQLite file, served over real HTTP.
type harness struct {
	t     testing.TB
	srv   *httptest.Server
	clock *clock.Fake
	store store.Driver
	disp  *noopDispatcherFake
	box   *secret.Box
	reg   *prometheus.Registry
}

func newHarness(t testing.TB, options ...func(*Config)) *harness {
	t.Helper()
	dir := t.TempDir()
	st := testdb.Open(t)
	box, _, err := secret.LoadOrCreate(filepath.Join(dir, "secret.key"))
	if err != nil {
		t.Fatal(err)
	}
	tokens, err := NewTokens(adminToken, map[string]string{"sub-a": subAToken})
	if err != nil {
		t.Fatal(err)
	}
	if tokens, err = tokens.WithMetricsToken(metricsToken); err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, clock: clock.NewFake(t0), store: st, disp: &noopDispatcherFake{}, box: box, reg: prometheus.NewRegistry()}
	cfg := Config{Store: st, Dispatcher: h.disp, Secrets: box, Clock: h.clock, Tokens: tokens, Registerer: h.reg, Gatherer: h.reg}
	for _, o := range options {
		o(&cfg)
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	h.srv = httptest.NewServer(s)
	t.Cleanup(h.srv.Close)
	return h
}

// response is an answer read whole.
type response struct {
	status int
	header http.Header
	body   []byte
}

// json decodes the body into a generic value.
func (r response) json(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatalf("body %q is not a JSON object: %v", r.body, err)
	}
	return m
}

// errorBody returns the Azure error's code and message.
func (r response) errorBody(t *testing.T) (string, string) {
	t.Helper()
	var e struct {
		Error struct{ Code, Message string }
	}
	if err := json.Unmarshal(r.body, &e); err != nil {
		t.Fatalf("body %q is not an Azure error: %v", r.body, err)
	}
	return e.Error.Code, e.Error.Message
}

// do sends a request with a token ("" for none); body is a string, []byte or a value to encode.
func (h *harness) do(method, path, token string, body any) response {
	h.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		enc, err := json.Marshal(b)
		if err != nil {
			h.t.Fatal(err)
		}
		rd = bytes.NewReader(enc)
	}
	url := path
	if !strings.HasPrefix(path, "http") {
		url = h.srv.URL + path
	}
	req, err := http.NewRequestWithContext(h.t.Context(), method, url, rd)
	if err != nil {
		h.t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := h.srv.Client().Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		h.t.Fatal(err)
	}
	if resp.Header.Get("x-ms-request-id") == "" {
		h.t.Errorf("%s %s: no x-ms-request-id", method, path)
	}
	return response{status: resp.StatusCode, header: resp.Header, body: b}
}

// must sends a request as admin and fails the test unless the status is want.
func (h *harness) must(want int, method, path string, body any) response {
	h.t.Helper()
	r := h.do(method, path, adminToken, body)
	if r.status != want {
		h.t.Fatalf("%s %s: status %d, want %d; body %s", method, path, r.status, want, r.body)
	}
	return r
}

// collection creates a collection with the given properties JSON.
func (h *harness) collection(path, props string) {
	h.t.Helper()
	h.must(http.StatusCreated, http.MethodPut, path+apiVersion, `{"location":"local","properties":`+props+`}`)
}

// storedJob reads a job of jc1 straight from the store.
func (h *harness) storedJob(name string) *store.Job {
	h.t.Helper()
	j, err := h.store.JobGet(h.t.Context(), store.JobGetParams{Key: store.JobKey{
		CollectionKey: store.CollectionKey{Subscription: "sub-a", ResourceGroup: "rg1", Name: "jc1"}, Name: name,
	}})
	if err != nil {
		h.t.Fatal(err)
	}
	return j
}

var (
	lineComment   = regexp.MustCompile(`(?m)^((?:[^"/\n]|"(?:[^"\\\n]|\\.)*")*)//.*$`)
	trailingComma = regexp.MustCompile(`,(\s*[}\]])`)
)

// stripJSONC removes // comments (outside strings) and trailing commas.
func stripJSONC(s string) string {
	s = lineComment.ReplaceAllString(s, "$1")
	return trailingComma.ReplaceAllString(s, "$1")
}

// get walks a decoded JSON value along member names and array indexes.
func get(v any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, ok := v.(map[string]any)
			if !ok {
				return nil
			}
			v = m[k]
		case int:
			a, ok := v.([]any)
			if !ok || k >= len(a) {
				return nil
			}
			v = a[k]
		}
	}
	return v
}

// list is a decoded JSON array (nil when v is not one).
func list(v any) []any {
	a, _ := v.([]any)
	return a
}

// str is a decoded JSON string ("" when v is not one).
func str(v any) string {
	s, _ := v.(string)
	return s
}

// names lists the "name" of every value of a list response, comma-separated.
func names(t *testing.T, r response) string {
	t.Helper()
	var out []string
	for _, v := range list(get(r.json(t), "value")) {
		out = append(out, str(get(v, "name")))
	}
	return strings.Join(out, ",")
}

// calls returns copies of what the dispatcher was told: job changes, collection changes, runs.
func (d *noopDispatcherFake) calls() (jobs, collections, runs []int64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.jobs), slices.Clone(d.collections), slices.Clone(d.runs)
}

// runDispatcher runs d until the returned stop is called, which waits for Run to return and
// fails the test if it returned an error other than its cancellation.
func runDispatcher(t testing.TB, d *dispatch.Dispatcher) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	return func() {
		cancel()
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("dispatcher: %v", err)
		}
	}
}
