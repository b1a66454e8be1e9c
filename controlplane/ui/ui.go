// Package ui is the daemon's dashboard, served at /ui/: server-rendered html/template pages on
// the daemon's own store and engine, embedded in the binary (no build step, no Node.js, no
// network at run time), with a few lines of JavaScript that only enhance forms that work without
// it.
//
// Decisions where the issue leaves a choice:
//
//   - Sign-in takes an admin or subscription token in a POST form, checked by the API's own
//     Tokens; the dashboard keeps a server-side session (a random 256-bit id in an HttpOnly,
//     SameSite=Strict cookie limited to /ui/, Secure over TLS, expiring after SessionTTL, 8 h
//     by default) and never the token: a restart signs everyone out.
//   - Every change (sign-out, run, enable, disable) is a POST that must carry the session's CSRF
//     token and come from this origin (Origin and Sec-Fetch-Site, when the browser sends them).
//   - A subscription token sees only its subscription: a page of another subscription is a 404,
//     the same whether it exists or not. The daemon-wide figures (lateness, dispatcher backlog)
//     are shown to admins only.
//   - Run now, enable and disable go through the API itself (Server.As), so the dashboard
//     changes jobs exactly as the API does; the job's definition is the API's GET answer
//     (secrets redacted by the API).
//   - At most MaxInFlight (16) signed-in requests are answered at once; more get 503 with
//     Retry-After, so that a signed-in user cannot pile up expensive pages.
//   - An execution's outcome is the rulebook's (jobstate) outcome of its newest attempt under the
//     job's retry policies: succeeded (main action), failed (the error action ran and succeeded),
//     faulted, or in progress; it is shown with the main action's message.
//   - The recent failed and faulted executions are found in the store's history (the main
//     action's failed attempts of the last 24 hours among the newest 100,000 attempts, each
//     execution then judged whole), so every replica's and every past run's count.
//   - Executions per minute over the last 24 hours are the daemon's own counts (Config.Telemetry:
//     the executions this process finished, kept in memory; a restart starts them over, said on
//     the page), per subscription: a tenant sees its own. Nothing scans the store's history for
//     them, so the overview stays fast on large stores.
//   - The lateness of the last hour is the difference between the dispatcher's histogram now and
//     a sample of it taken an hour ago; its percentiles per minute, the backlog and the attempts
//     running come from the samples taken every minute while the daemon runs. They are
//     daemon-wide: admins only.
//   - Charts are inline SVG drawn on the server (chart.go): no script.
package ui

import (
	"bytes"
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/api"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/dispatch"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/telemetry"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/clock"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/jobdef"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"
)

// Prefix is where the dashboard is mounted.
const Prefix = "/ui/"

// DefaultSessionTTL is how long a sign-in lasts.
const DefaultSessionTTL = 8 * time.Hour

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// API is what the dashboard needs of the API: to answer requests as a signed-in user.
type API interface {
	As(p api.Principal) http.Handler
}

// Dispatcher is what the Health page asks the dispatcher.
type Dispatcher interface {
	Ready() bool
}

// Telemetry is the daemon's own count of finished executions (package telemetry).
type Telemetry interface {
	ExecutionsPerMinute(subscription string, now time.Time, n int) []telemetry.PerMinute
	Started() time.Time
}

// Replica is what the Health page shows of a replica among several (package replica).
type Replica interface {
	ID() string
	Leading() bool
}

// Config is what a Server needs.
type Config struct {
	Store      store.Driver
	API        API
	Tokens     *api.Tokens
	Dispatcher Dispatcher
	// Gatherer is the daemon's registry, holding the dispatcher's metrics (lateness, backlog).
	Gatherer prometheus.Gatherer
	Clock    clock.Clock
	Logger   *slog.Logger
	// TLS: the daemon serves HTTPS, so the session cookie is Secure.
	TLS        bool
	SessionTTL time.Duration // 0: DefaultSessionTTL
	// Replica, when the daemon runs as one of several replicas on a shared store, tells Health
	// which replica this is and whether it leads; nil: a single node, which leads.
	Replica Replica
	// Telemetry counts the executions this process finishes; nil: the overview has no
	// executions per minute nor recent failures.
	Telemetry Telemetry
	// MaxInFlight bounds the signed-in requests answered at once (a page can read thousands of
	// jobs); more get 503 with Retry-After. 0: DefaultMaxInFlight.
	MaxInFlight int
	// MisfireThreshold is the daemon's misfire threshold, shown for jobs that set none (0:
	// dispatch.DefaultMisfireThreshold).
	MisfireThreshold time.Duration
	// TraceURL, when set, links each history entry's trace id: an http(s) URL in which
	// TraceIDPlaceholder ({traceId}) stands for the 32 hex digits of the execution's trace
	// (https://tempo.example/trace/{traceId}). "": the trace id is shown, not linked.
	TraceURL string
}

// DefaultMaxInFlight is the default of Config.MaxInFlight.
const DefaultMaxInFlight = 16

// Server serves the dashboard. It is an http.Handler for the paths under Prefix.
type Server struct {
	store    store.Driver
	api      API
	tokens   *api.Tokens
	disp     Dispatcher
	gatherer prometheus.Gatherer
	clock    clock.Clock
	log      *slog.Logger
	tls      bool
	replica  Replica
	tel      Telemetry
	sessions *sessions
	late     *lateness
	pages    *pageSet
	mux      *http.ServeMux
	inflight chan struct{}
	misfire  time.Duration
	traceURL string
}

// New returns a Server.
func New(cfg Config) (*Server, error) {
	switch {
	case cfg.Store == nil:
		return nil, errors.New("ui: Store is required")
	case cfg.API == nil:
		return nil, errors.New("ui: API is required")
	case cfg.Tokens == nil:
		return nil, errors.New("ui: Tokens is required")
	case cfg.Dispatcher == nil:
		return nil, errors.New("ui: Dispatcher is required")
	}
	s := &Server{
		store: cfg.Store, api: cfg.API, tokens: cfg.Tokens, disp: cfg.Dispatcher, gatherer: cfg.Gatherer,
		clock: cfg.Clock, log: cfg.Logger, tls: cfg.TLS, replica: cfg.Replica, tel: cfg.Telemetry,
	}
	if s.clock == nil {
		s.clock = clock.Real{}
	}
	s.misfire = cfg.MisfireThreshold
	if s.misfire <= 0 {
		s.misfire = dispatch.DefaultMisfireThreshold
	}
	if err := CheckTraceURL(cfg.TraceURL); err != nil {
		return nil, err
	}
	s.traceURL = cfg.TraceURL
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	ttl := cfg.SessionTTL
	if ttl <= 0 {
		ttl = DefaultSessionTTL
	}
	s.sessions = newSessions(ttl, s.clock)
	n := cfg.MaxInFlight
	if n <= 0 {
		n = DefaultMaxInFlight
	}
	s.inflight = make(chan struct{}, n)
	s.late = &lateness{gatherer: cfg.Gatherer}
	s.pages = s.newPages()
	static, err := fs.Sub(staticFS, "static")
	if err != nil {
		return nil, fmt.Errorf("ui: static files: %w", err)
	}
	m := http.NewServeMux()
	m.Handle("GET /ui/static/", http.StripPrefix("/ui/static/", http.FileServerFS(static)))
	m.HandleFunc("GET /ui/signin", s.signinPage)
	m.HandleFunc("POST /ui/signin", s.signin)
	m.HandleFunc("POST /ui/signout", s.authed(s.signout))
	m.HandleFunc("GET /ui/{$}", s.authed(s.overview))
	m.HandleFunc("GET /ui/health", s.authed(s.health))
	m.HandleFunc("GET /ui/subscriptions/{sub}/resourceGroups/{rg}/jobCollections/{coll}", s.authed(s.collection))
	m.HandleFunc("GET /ui/subscriptions/{sub}/resourceGroups/{rg}/jobCollections/{coll}/jobs/{job}", s.authed(s.job))
	m.HandleFunc("POST /ui/subscriptions/{sub}/resourceGroups/{rg}/jobCollections/{coll}/jobs/{job}/{action}", s.authed(s.jobAction))
	m.HandleFunc("/ui/", s.authed(func(w http.ResponseWriter, r *http.Request, _ *request) {
		s.fail(w, r, http.StatusNotFound, "There is no page at this address.")
	}))
	s.mux = m
	return s, nil
}

// Run samples the dispatcher's lateness histogram every minute until ctx ends.
func (s *Server) Run(ctx context.Context) {
	take := func() {
		now := s.clock.Now()
		s.late.sample(now)
		s.late.sampled.Signal(now)
	}
	take()
	clock.Every(ctx, s.clock, sampleEvery, nil, func(context.Context) { take() })
}

// ServeHTTP answers a request under Prefix.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "+
		"connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'; object-src 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "same-origin")
	if !strings.HasPrefix(r.URL.Path, "/ui/static/") {
		h.Set("Cache-Control", "no-store")
	}
	if r.URL.Path == "/ui" {
		http.Redirect(w, r, Prefix, http.StatusMovedPermanently)
		return
	}
	s.mux.ServeHTTP(w, r)
}

// request is a signed-in request.
type request struct {
	id   string // the session cookie's value
	sess *session
}

// authed runs h for a signed-in user; else a page is redirected to the sign-in form and a change
// answered 401.
func (s *Server) authed(h func(http.ResponseWriter, *http.Request, *request)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var sess *session
		c, err := r.Cookie(cookieName)
		if err == nil {
			sess = s.sessions.get(c.Value)
		}
		if sess == nil {
			if r.Method == http.MethodGet || r.Method == http.MethodHead {
				http.Redirect(w, r, "/ui/signin?next="+url.QueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
				return
			}
			s.fail(w, r, http.StatusUnauthorized, "You are signed out: sign in again.")
			return
		}
		select {
		case s.inflight <- struct{}{}:
			defer func() { <-s.inflight }()
		default:
			w.Header().Set("Retry-After", "1")
			s.fail(w, r, http.StatusServiceUnavailable, "The dashboard is answering too many requests; retry in a moment.")
			return
		}
		h(w, r, &request{id: c.Value, sess: sess})
	}
}

// view is what every page template gets.
type view struct {
	Title     string
	Nav       string
	Principal api.Principal
	CSRF      string
	Flash     string
	Now       time.Time
	Data      any
}

func (s *Server) newView(req *request, title, nav string, data any) view {
	v := view{Title: title, Nav: nav, Now: s.clock.Now(), Data: data}
	if req != nil {
		v.Principal, v.CSRF = req.sess.principal, req.sess.csrf
		v.Flash = s.sessions.takeFlash(req.id)
	}
	return v
}

// render writes a page; a template error is logged and answered 500.
func (s *Server) render(w http.ResponseWriter, status int, page string, v view) {
	s.renderTemplate(w, status, page, "layout", v)
}

func (s *Server) renderTemplate(w http.ResponseWriter, status int, page, name string, v any) {
	t, err := s.pages.get(page)
	if err != nil {
		s.log.Error("parsing a dashboard page", "page", page, "error", err.Error())
		http.Error(w, "the page could not be rendered", http.StatusInternalServerError)
		return
	}
	var buf bytes.Buffer
	if err := t.ExecuteTemplate(&buf, name, v); err != nil {
		s.log.Error("rendering a dashboard page", "page", page, "error", err.Error())
		http.Error(w, "the page could not be rendered", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// wantsJSON: the request is the page's own fetch(), which wants a JSON answer.
func wantsJSON(r *http.Request) bool {
	return strings.Contains(r.Header.Get("Accept"), "application/json")
}

// fail answers an error: JSON to fetch(), else an error page.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, status int, msg string) {
	if wantsJSON(r) {
		writeJSON(w, status, actionResult{OK: false, Message: msg})
		return
	}
	s.render(w, status, "error", view{Title: http.StatusText(status), Now: s.clock.Now(), Data: msg})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// storeFail answers a store error: the message of a timeout, else a logged 500.
func (s *Server) storeFail(w http.ResponseWriter, r *http.Request, err error) {
	if errors.Is(err, store.ErrNotFound) {
		s.fail(w, r, http.StatusNotFound, "There is no such collection or job (or it is not yours to see).")
		return
	}
	s.log.ErrorContext(r.Context(), "dashboard store error", "path", r.URL.Path, "error", err.Error())
	s.fail(w, r, http.StatusInternalServerError, "The store failed; see the daemon's log.")
}

// localNext returns a dashboard path to go to after sign-in, "/ui/" unless next is one.
func localNext(next string) string {
	if strings.HasPrefix(next, Prefix) && !strings.HasPrefix(next, "//") && !strings.ContainsAny(next, "\\\r\n") &&
		!strings.HasPrefix(next, "/ui/signin") {
		return next
	}
	return Prefix
}

type signinData struct {
	Next  string
	Error string
}

func (s *Server) signinPage(w http.ResponseWriter, r *http.Request) {
	if c, err := r.Cookie(cookieName); err == nil && s.sessions.get(c.Value) != nil {
		http.Redirect(w, r, localNext(r.URL.Query().Get("next")), http.StatusSeeOther)
		return
	}
	s.render(w, http.StatusOK, "signin", view{Title: "Sign in", Now: s.clock.Now(),
		Data: signinData{Next: localNext(r.URL.Query().Get("next"))}})
}

// signin checks the token of the form and starts a session. The token is never logged,
// echoed or put in a URL.
func (s *Server) signin(w http.ResponseWriter, r *http.Request) {
	if err := checkOrigin(r); err != nil {
		s.fail(w, r, http.StatusForbidden, "Sign-in refused: "+err.Error()+".")
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, 8<<10)
	if err := r.ParseForm(); err != nil {
		s.fail(w, r, http.StatusBadRequest, "The sign-in form could not be read.")
		return
	}
	next := localNext(r.PostFormValue("next"))
	p, ok := s.tokens.Identify(strings.TrimSpace(r.PostFormValue("token")))
	if !ok {
		s.log.Warn("dashboard sign-in refused: unknown token", "remote", r.RemoteAddr)
		s.render(w, http.StatusUnauthorized, "signin", view{Title: "Sign in", Now: s.clock.Now(),
			Data: signinData{Next: next, Error: "That token is not valid."}})
		return
	}
	id, err := s.sessions.create(p)
	if err != nil {
		s.log.Error("dashboard session", "error", err.Error())
		s.fail(w, r, http.StatusInternalServerError, "The session could not be created.")
		return
	}
	who := "admin"
	if !p.Admin {
		who = "subscription " + p.Subscription
	}
	s.log.Info("dashboard sign-in", "as", who, "remote", r.RemoteAddr)
	http.SetCookie(w, s.sessionCookie(id, int(s.sessions.ttl/time.Second)))
	http.Redirect(w, r, next, http.StatusSeeOther)
}

func (s *Server) signout(w http.ResponseWriter, r *http.Request, req *request) {
	r.Body = http.MaxBytesReader(w, r.Body, 8<<10)
	if err := checkCSRF(r, req.sess); err != nil {
		s.fail(w, r, http.StatusForbidden, err.Error())
		return
	}
	s.sessions.remove(req.id)
	http.SetCookie(w, s.sessionCookie("", -1))
	http.Redirect(w, r, "/ui/signin", http.StatusSeeOther)
}

// paths of the pages.

func esc(s string) string { return url.PathEscape(s) }

func collectionPath(k store.CollectionKey) string {
	return "/ui/subscriptions/" + esc(k.Subscription) + "/resourceGroups/" + esc(k.ResourceGroup) +
		"/jobCollections/" + esc(k.Name)
}

func jobPath(k store.JobKey) string { return collectionPath(k.CollectionKey) + "/jobs/" + esc(k.Name) }

// apiPath is a job's path in the API.
func apiPath(k store.JobKey) string {
	return "/subscriptions/" + esc(k.Subscription) + "/resourceGroups/" + esc(k.ResourceGroup) +
		"/providers/Microsoft.Scheduler/jobCollections/" + esc(k.CollectionKey.Name) + "/jobs/" + esc(k.Name)
}

// keyOf reads the names of a page's path; ok is false when p may not see the subscription.
func keyOf(r *http.Request, p api.Principal) (store.JobKey, bool) {
	k := store.JobKey{
		CollectionKey: store.CollectionKey{Subscription: r.PathValue("sub"), ResourceGroup: r.PathValue("rg"), Name: r.PathValue("coll")},
		Name:          r.PathValue("job"),
	}
	return k, k.Subscription != "" && p.Allows(k.Subscription)
}

// memWriter collects an answer of the API called in-process.
type memWriter struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (m *memWriter) Header() http.Header { return m.header }
func (m *memWriter) Write(b []byte) (int, error) {
	if m.status == 0 {
		m.status = http.StatusOK
	}
	return m.body.Write(b)
}
func (m *memWriter) WriteHeader(code int) {
	if m.status == 0 {
		m.status = code
	}
}

// callAPI answers an API request as p, in-process; msg is the API's error message when the
// status is not 2xx.
func (s *Server) callAPI(ctx context.Context, p api.Principal, method, path string, body any) (int, []byte, string) {
	var rd *bytes.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return http.StatusInternalServerError, nil, err.Error()
		}
		rd = bytes.NewReader(b)
	} else {
		rd = bytes.NewReader(nil)
	}
	req, err := http.NewRequestWithContext(ctx, method, "http://schedulerd"+path+"?api-version="+wire.APIVersion, rd)
	if err != nil {
		return http.StatusInternalServerError, nil, err.Error()
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "schedulerd-dashboard")
	w := &memWriter{header: http.Header{}}
	s.api.As(p).ServeHTTP(w, req)
	if w.status == 0 {
		w.status = http.StatusOK
	}
	if w.status >= 300 {
		var e struct {
			Error struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		_ = json.Unmarshal(w.body.Bytes(), &e)
		msg := e.Error.Message
		if msg == "" {
			msg = http.StatusText(w.status)
		}
		return w.status, w.body.Bytes(), msg
	}
	return w.status, w.body.Bytes(), ""
}

// pageNumber reads ?page= (1 when absent or bad).
func pageNumber(r *http.Request) int {
	n, err := strconv.Atoi(r.URL.Query().Get("page"))
	if err != nil || n < 1 || n > 1_000_000 {
		return 1
	}
	return n
}

// canonical filters.
var (
	jobStates       = []string{store.JobStateEnabled, store.JobStateDisabled, store.JobStateCompleted, store.JobStateFaulted}
	historyStatuses = jobdef.HistoryStatuses() // the API's $filter statuses, Skipped among them
)

func canonicalState(v string) string {
	c, ok := jobdef.CanonicalJobState(v)
	if !ok {
		return ""
	}
	return c
}

func canonicalStatus(v string) string {
	c, ok := jobdef.CanonicalHistoryStatus(v)
	if !ok {
		return ""
	}
	return c
}
