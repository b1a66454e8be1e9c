package ui

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/api"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/dispatch"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/secret"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store/sqlite"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/telemetry"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/clock"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/testlog"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/testsignal"
)

const (
	adminToken = "admin-token-for-the-ui-tests"
	subAToken  = "token-of-subscription-a"
	subBToken  = "token-of-subscription-b"
	// metricsToken reads the API's /metrics only.
	metricsToken = "token-of-the-scraper"
	apiVersion   = "?api-version=2016-03-01"
	collA        = "/subscriptions/sub-a/resourceGroups/rg1/providers/Microsoft.Scheduler/jobCollections/jc1"
	uiCollA      = "/ui/subscriptions/sub-a/resourceGroups/rg1/jobCollections/jc1"
)

// t0 is the fake clock's start: Wednesday 2026-11-18 12:00:30 UTC.
var t0 = time.Date(2026, 11, 18, 12, 0, 30, 0, time.UTC)

// harness is the daemon's parts as serve wires them: a real SQLite file, the real API and
// dispatcher (on a fake clock) and the dashboard, over real HTTP.
type harness struct {
	t     testing.TB
	srv   *httptest.Server
	clock *clock.Fake
	store *sqlite.Driver
	ui    *Server
	logs  *testlog.Buffer
	reg   *prometheus.Registry
	// dbPath is the SQLite file.
	dbPath string
	// outcomes signals each execution the dispatcher finishes.
	outcomes *testsignal.Signal[dispatch.Outcome]
	// disp is the dispatcher, its TestSignals initialised.
	disp *dispatch.Dispatcher
}

func newHarness(t testing.TB, tlsServer bool) *harness {
	t.Helper()
	dir := t.TempDir()
	dbPath := filepath.Join(dir, "scheduler.db")
	st, err := sqlite.Open(t.Context(), dbPath)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	box, _, err := secret.LoadOrCreate(filepath.Join(dir, "secret.key"))
	if err != nil {
		t.Fatal(err)
	}
	tokens, err := api.NewTokens(adminToken, map[string]string{"sub-a": subAToken, "sub-b": subBToken})
	if err != nil {
		t.Fatal(err)
	}
	if tokens, err = tokens.WithMetricsToken(metricsToken); err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, clock: clock.NewFake(t0), store: st, logs: &testlog.Buffer{}, reg: prometheus.NewRegistry(), dbPath: dbPath,
		outcomes: &testsignal.Signal[dispatch.Outcome]{}}
	h.outcomes.Init()
	log := slog.New(slog.NewJSONHandler(h.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	tel, err := telemetry.New(telemetry.Config{Store: st, Clock: h.clock, Logger: log, PerJob: true})
	if err != nil {
		t.Fatal(err)
	}
	disp, err := dispatch.New(dispatch.Config{Store: st, Clock: h.clock, Secrets: box, Logger: log, Registerer: h.reg, OnOutcome: func(o dispatch.Outcome) {
		tel.Observe(o)
		h.outcomes.Signal(o)
	}})
	if err != nil {
		t.Fatal(err)
	}
	disp.TestSignals.Init()
	h.disp = disp
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = disp.Run(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	apiSrv, err := api.New(api.Config{Store: st, Dispatcher: disp, Secrets: box, Clock: h.clock, Logger: log, Tokens: tokens, Registerer: h.reg, Gatherer: h.reg})
	if err != nil {
		t.Fatal(err)
	}
	h.ui, err = New(Config{Store: st, API: apiSrv, Tokens: tokens, Dispatcher: disp, Gatherer: h.reg, Clock: h.clock, Logger: log, TLS: tlsServer, Telemetry: tel})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/ui") {
			h.ui.ServeHTTP(w, r)
			return
		}
		apiSrv.ServeHTTP(w, r)
	})
	if tlsServer {
		h.srv = httptest.NewTLSServer(mux)
	} else {
		h.srv = httptest.NewServer(mux)
	}
	t.Cleanup(h.srv.Close)
	return h
}

// api sends an API request with the admin token and returns the status and body.
func (h *harness) api(method, path, body string) (int, string) {
	h.t.Helper()
	req, err := http.NewRequest(method, h.srv.URL+path+apiVersion, strings.NewReader(body))
	if err != nil {
		h.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+adminToken)
	req.Header.Set("Content-Type", "application/json")
	resp, err := h.srv.Client().Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// mustAPI is api that fails the test on a status of 300 or more.
func (h *harness) mustAPI(method, path, body string) string {
	h.t.Helper()
	status, b := h.api(method, path, body)
	if status >= 300 {
		h.t.Fatalf("%s %s: %d %s", method, path, status, b)
	}
	return b
}

// seed creates collection jc1 of sub-a with a job "hourly" (with a Basic password) and
// collection jc2 of sub-b with a job "other".
func (h *harness) seed() {
	h.t.Helper()
	h.mustAPI(http.MethodPut, collA, `{"location":"westus","properties":{"sku":{"name":"Standard"}}}`)
	h.mustAPI(http.MethodPut, collA+"/jobs/hourly", `{"properties":{"startTime":"2026-11-01T08:15:00",
		"action":{"type":"Http","request":{"method":"POST","uri":"http://127.0.0.1:9/hook",
		"authentication":{"type":"Basic","username":"ops","password":"the-basic-password"}}},
		"recurrence":{"frequency":"Hour","interval":3,"timeZone":"Europe/Berlin"}}}`)
	collB := strings.Replace(strings.Replace(collA, "sub-a", "sub-b", 1), "jc1", "jc2", 1)
	h.mustAPI(http.MethodPut, collB, `{"location":"westus","properties":{"sku":{"name":"Standard"}}}`)
	h.mustAPI(http.MethodPut, collB+"/jobs/other", `{"properties":{"startTime":"2026-11-01T00:00:00Z",
		"action":{"type":"Http","request":{"method":"GET","uri":"http://127.0.0.1:9/b"}},
		"recurrence":{"frequency":"Day","interval":1}}}`)
}

// browser is a client with a cookie jar that does not follow redirects.
type browser struct {
	h      *harness
	client *http.Client
}

func (h *harness) browser() *browser {
	jar, err := cookiejar.New(nil)
	if err != nil {
		h.t.Fatal(err)
	}
	c := *h.srv.Client()
	c.Jar = jar
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &browser{h: h, client: &c}
}

type page struct {
	status int
	header http.Header
	body   string
}

func (b *browser) do(method, path string, form url.Values, header map[string]string) page {
	b.h.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, b.h.srv.URL+path, body)
	if err != nil {
		b.h.t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := b.client.Do(req)
	if err != nil {
		b.h.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return page{status: resp.StatusCode, header: resp.Header, body: string(raw)}
}

func (b *browser) get(path string) page { return b.do(http.MethodGet, path, nil, nil) }

// signIn signs in with a token and returns the answer.
func (b *browser) signIn(token string) page {
	b.h.t.Helper()
	return b.do(http.MethodPost, "/ui/signin", url.Values{"token": {token}, "next": {"/ui/"}}, nil)
}

var csrfRE = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// csrf reads the session's CSRF token from a page.
func (b *browser) csrf(path string) string {
	b.h.t.Helper()
	p := b.get(path)
	m := csrfRE.FindStringSubmatch(p.body)
	if m == nil {
		b.h.t.Fatalf("no CSRF token on %s (%d)", path, p.status)
	}
	return m[1]
}
