// Package api is the daemon's HTTP API: the Azure Scheduler REST API 2016-03-01 (ARM paths,
// Azure JSON and error bodies, paging), bearer-token authentication scoped by subscription, and
// the daemon's own endpoints outside the ARM tree: /healthz, /readyz, /metrics and
// POST /preview/occurrences.
//
// Decisions where the specification leaves a choice:
//
//   - Names (subscription, resource group, collection, job) are in internal/arm's grammar and
//     compare as arm.Fold does, in the routes, the token check and the store alike; any other name
//     is a 400 naming the segment, answered from the path before the token's scope is checked.
//   - A body must be application/json or text/json in UTF-8 (415 UnsupportedMediaType otherwise,
//     a missing Content-Type included), valid UTF-8, and hold no member twice in one object, in
//     any case (400 naming it): see wire.Decode.
//   - A token scoped to subscription A that names a resource of subscription B gets 403
//     AuthenticationFailed, decided from the path alone before anything is looked up, so the
//     answer is the same whether the resource exists or not and tells nothing about B. /metrics
//     needs the admin token or the metrics token (a subscription's token gets 403: the figures
//     are every subscription's); /preview needs any token but the metrics token, which reads
//     /metrics only; /healthz and /readyz need none.
//   - POST /run is a 409 when the job's collection is Disabled or Suspended, when a manual run of
//     the job is still in flight, and when the job's last execution is closer than the
//     collection's maxRecurrence: a job whose action runs itself cannot multiply.
//   - A request body is read whole (MaxRequestBytes, within BodyTimeout: 408 after) before the
//     request takes an in-flight slot; slots are limited in all (MaxInFlight) and per
//     subscription (MaxInFlightPerTenant): 503 ServerBusy with Retry-After beyond.
//   - PUT answers 201 when it creates and 200 when it replaces; DELETE, run, enable and disable
//     answer 200 with an empty body (the SDK's long-running operations complete at once);
//     DELETE of something absent is a 404.
//   - A collection without sku is Standard; without state, Enabled. Deleted cannot be written.
//   - The collection limits answer 409 Conflict naming the limit: maxJobCount (checked by the
//     store in the job's insert transaction), maxJobOccurrence (a count above it; a job without
//     count is not limited by it), maxRecurrence (any two of the next 1,000 executions closer
//     than the period, calendar days and months counted in the rule's zone; the "once,
//     immediately" run of a job without startTime does not count) and outbound authentication on
//     a Free collection.
//   - PUT replaces a job: secrets must be sent again. PATCH is a JSON merge patch (RFC 7396) of
//     the properties onto the stored job: an omitted secret keeps the stored one; an
//     authentication of another type replaces the stored authentication whole; null removes.
//   - startTime and endTime are stored and returned in RFC 3339 in the rule's zone; status times
//     in UTC. Certificate details (thumbprint, expiration, subject) are computed from the pfx.
//   - On a write the next execution is computed from the injected clock: on creation the first
//     per SPEC 4.3; on an update or enable a job that has executed resumes from the first
//     candidate at or after now, never repeating its immediate run. Nothing left: Completed.
//   - Every action type is accepted: Http, Https, StorageQueue (queueMessage), ServiceBusQueue
//     and ServiceBusTopic (serviceBusQueueMessage, serviceBusTopicMessage), each checked field by
//     field by jobdef.Validate (a 400 naming the path). Their secrets (sasToken, sasKey) are
//     sealed and never returned, like the HTTP ones.
package api

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/secret"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/arm"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/clock"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"
)

// Dispatcher is what the API needs of the dispatcher: to be told about changes, to run a job
// now and whether it is ready.
type Dispatcher interface {
	// JobChanged: a job was deleted (or changed without this process holding it as written).
	JobChanged(jobID int64)
	// JobWritten: a job was created or replaced here; j is store.Driver.JobPut's answer, which
	// neither side changes afterwards.
	JobWritten(j *store.Job)
	CollectionChanged(collectionID int64)
	// RunNow runs the job now, j as the API read it (not read again); when a manual run of the
	// job is still in flight it returns an error with an InFlightTag() string method (the run's
	// execution tag): a 409; when the store finds, as it claims the run, that the job may not
	// run on request, a *store.RunRefusedError (a 409).
	RunNow(ctx context.Context, j *store.Job) error
	// Backfill runs one execution of the job per occurrence of at, one after the other, in order;
	// while the job's previous backfill is unfinished it returns a *store.BackfillInFlightError
	// (a 409).
	Backfill(ctx context.Context, jobID int64, at []time.Time) error
	Ready() bool
}

// MaxRequestBytes is the largest request body read; a job definition itself is limited to
// 16 KiB of JSON (see jobdef.MaxDefinitionBytes).
const MaxRequestBytes = 64 * 1024

// Config is what a Server needs.
type Config struct {
	Store      store.Driver
	Dispatcher Dispatcher
	Secrets    *secret.Box
	Clock      clock.Clock
	Logger     *slog.Logger
	Tokens     *Tokens
	// Registerer receives the HTTP request metrics; Gatherer is what /metrics serves (usually the
	// same registry, holding the dispatcher's metrics too).
	Registerer prometheus.Registerer
	Gatherer   prometheus.Gatherer
	// Metrics, when set, serves /metrics instead of promhttp over Gatherer (the daemon's:
	// Gatherer's families and the per-job series, telemetry.Collector.Handler).
	Metrics http.Handler
	// MaxInFlight bounds concurrent API requests; more get 503 ServerBusy. 0: 256.
	MaxInFlight int
	// MaxInFlightPerTenant bounds the concurrent requests of one subscription (a tenant), so
	// that one tenant cannot take every slot. 0: a quarter of MaxInFlight.
	MaxInFlightPerTenant int
	// BodyTimeout bounds how long a request body may take to arrive; it is read whole before the
	// request takes an in-flight slot, so that slow clients hold none. Later: 408. 0: 10 s.
	BodyTimeout time.Duration
	// PublicURL is the URL clients reach the API at (scheme, host, optional path prefix), used to
	// build nextLink; "": the scheme and local address the request's connection arrived on.
	PublicURL string
}

// Server serves the API. It is an http.Handler.
type Server struct {
	store    store.Driver
	disp     Dispatcher
	box      *secret.Box
	clock    clock.Clock
	log      *slog.Logger
	tokens   *Tokens
	metrics  http.Handler
	inflight chan struct{}
	tenants  tenantSlots
	// bodyTimeout is Config.BodyTimeout.
	bodyTimeout time.Duration
	// publicURL is Config.PublicURL without a trailing slash.
	publicURL string
	ready     readyProbe
	requests  *prometheus.CounterVec
	duration  *prometheus.HistogramVec
	// handlers are the routes' handlers by kind and method, made once (see handler).
	handlers map[routeMethod]handlerFunc
	// collections are the collections last read by job writes (saveJob).
	collections knownCollections
}

// New returns a Server.
func New(cfg Config) (*Server, error) {
	switch {
	case cfg.Store == nil:
		return nil, errors.New("api: Store is required")
	case cfg.Dispatcher == nil:
		return nil, errors.New("api: Dispatcher is required")
	case cfg.Secrets == nil:
		return nil, errors.New("api: Secrets is required")
	case cfg.Tokens == nil:
		return nil, errors.New("api: Tokens is required")
	}
	s := &Server{
		store: cfg.Store, disp: cfg.Dispatcher, box: cfg.Secrets, clock: cfg.Clock, log: cfg.Logger,
		tokens: cfg.Tokens, metrics: cfg.Metrics,
	}
	if s.metrics == nil && cfg.Gatherer != nil {
		s.metrics = promhttp.HandlerFor(cfg.Gatherer, promhttp.HandlerOpts{})
	}
	s.handlers = s.routeHandlers()
	if cfg.PublicURL != "" {
		u, err := url.Parse(cfg.PublicURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
			return nil, fmt.Errorf("api: public URL %q: want http(s)://host[:port][/prefix]", cfg.PublicURL)
		}
		s.publicURL = strings.TrimRight(u.String(), "/")
	}
	if s.clock == nil {
		s.clock = clock.Real{}
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	n := cfg.MaxInFlight
	if n <= 0 {
		n = 256
	}
	s.inflight = make(chan struct{}, n)
	s.tenants = tenantSlots{limit: cfg.MaxInFlightPerTenant, n: map[string]int{}}
	if s.tenants.limit <= 0 {
		s.tenants.limit = max(n/4, 1)
	}
	s.bodyTimeout = cfg.BodyTimeout
	if s.bodyTimeout <= 0 {
		s.bodyTimeout = DefaultBodyTimeout
	}
	s.requests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "scheduler_http_requests_total",
		Help: "API requests answered, by method, route and status code.",
	}, []string{"method", "route", "code"})
	s.duration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "scheduler_http_request_duration_seconds",
		Help:    "Time to answer API requests, by method and route.",
		Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5},
	}, []string{"method", "route"})
	if cfg.Registerer != nil {
		for _, c := range []prometheus.Collector{s.requests, s.duration} {
			if err := cfg.Registerer.Register(c); err != nil {
				return nil, fmt.Errorf("api: registering metrics: %w", err)
			}
		}
	}
	return s, nil
}

// reqInfo is what the log line of a request tells, filled as the request goes.
type reqInfo struct {
	id    string
	route string
	jobID int64
}

// statusWriter remembers the status written.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

// Unwrap lets http.ResponseController reach the connection (read deadlines).
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// ServeHTTP answers one request: every response carries x-ms-request-id.
func (s *Server) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	start := time.Now()
	info := &reqInfo{id: uuid.NewString(), route: "other"}
	rw.Header().Set("x-ms-request-id", info.id)
	if c := r.Header.Get("x-ms-client-request-id"); c != "" && len(c) <= 200 {
		rw.Header().Set("x-ms-client-request-id", c)
	}
	w := &statusWriter{ResponseWriter: rw}
	defer func() {
		if v := recover(); v != nil {
			if v == http.ErrAbortHandler { //nolint:errorlint // a sentinel panic value, not a wrapped error
				panic(v)
			}
			s.log.Error("panic answering a request", "request_id", info.id, "panic", fmt.Sprint(v))
			if w.status == 0 {
				writeError(w, &apiError{http.StatusInternalServerError, codeInternal, "internal error (request " + info.id + ")"})
			}
		}
		status := w.status
		if status == 0 {
			status = http.StatusOK
		}
		elapsed := time.Since(start)
		s.requests.WithLabelValues(r.Method, info.route, strconv.Itoa(status)).Inc()
		s.duration.WithLabelValues(r.Method, info.route).Observe(elapsed.Seconds())
		attrs := []any{"request_id", info.id, "method", r.Method, "path", r.URL.Path, "status", status,
			"duration_ms", float64(elapsed.Microseconds()) / 1000}
		if info.jobID != 0 {
			attrs = append(attrs, "job_id", info.jobID)
		}
		level := slog.LevelInfo
		if status >= 500 {
			level = slog.LevelError
		}
		if info.route == "healthz" || info.route == "readyz" || info.route == "metrics" {
			level = slog.LevelDebug
		}
		s.log.Log(r.Context(), level, "request", attrs...)
	}()
	if e := s.serve(w, r, info); e != nil {
		writeError(w, e)
	}
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request, info *reqInfo) *apiError {
	switch strings.TrimSuffix(r.URL.Path, "/") {
	case "/healthz":
		info.route = "healthz"
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
		return nil
	case "/readyz":
		info.route = "readyz"
		s.readyz(w, r)
		return nil
	case "/metrics":
		info.route = "metrics"
		p, e := s.tokens.authenticate(r)
		if e != nil {
			return e
		}
		if !p.readsMetrics() {
			return &apiError{http.StatusForbidden, codeAuthentication,
				"/metrics holds every subscription's figures: use the admin token or the metrics token"}
		}
		if s.metrics == nil {
			return notFound("metrics are not enabled")
		}
		s.metrics.ServeHTTP(w, r)
		return nil
	case "/preview/occurrences":
		info.route = "preview"
		if p, e := s.tokens.authenticate(r); e != nil {
			return e
		} else if p.metrics {
			return metricsOnly()
		}
		return s.limited(w, r, tenantPreview, s.preview)
	}
	rt, ok := parseRoute(r.URL.EscapedPath())
	if !ok {
		return notFound("there is no API at %s", r.URL.Path)
	}
	info.route = routeNames[rt.kind]
	p, e := s.authenticateRequest(r)
	if e != nil {
		return e
	}
	// A name outside the grammar is refused before the authorization check: from the path
	// alone, the same answer for every caller, telling nothing about what is stored.
	if rt.bad != "" {
		return badRequest("%s", rt.bad)
	}
	if p.metrics {
		return metricsOnly()
	}
	if !p.allows(rt.key.Subscription) {
		return &apiError{http.StatusForbidden, codeAuthentication,
			fmt.Sprintf("the token is not valid for subscription %s", rt.key.Subscription)}
	}
	switch v := r.URL.Query().Get("api-version"); v {
	case wire.APIVersion, wire.APIVersionOld:
	case "":
		return badRequest("the api-version query parameter is required (%s or %s)", wire.APIVersion, wire.APIVersionOld)
	default:
		return badRequest("api-version %q is not supported: use %s (or %s)", v, wire.APIVersion, wire.APIVersionOld)
	}
	h := s.handler(rt, r.Method)
	if h == nil {
		return &apiError{http.StatusMethodNotAllowed, codeBadRequest, fmt.Sprintf("%s is not allowed on %s", r.Method, r.URL.Path)}
	}
	return s.limited(w, r, arm.Fold(rt.key.Subscription), func(w http.ResponseWriter, r *http.Request) *apiError { return h(w, r, rt, info) })
}

// metricsOnly is the answer to the metrics token outside /metrics.
func metricsOnly() *apiError {
	return &apiError{http.StatusForbidden, codeAuthentication, "the metrics token reads /metrics only"}
}

type handlerFunc func(w http.ResponseWriter, r *http.Request, rt route, info *reqInfo) *apiError

// routeMethod is a route's kind and a method.
type routeMethod struct {
	k kind
	m string
}

// handler returns the handler of a route and method (nil: none).
func (s *Server) handler(rt route, method string) handlerFunc {
	return s.handlers[routeMethod{rt.kind, method}]
}

// routeHandlers maps each route's kind and method to its handler: made once, not per request (a
// map of 16 method values is about 17 allocations).
func (s *Server) routeHandlers() map[routeMethod]handlerFunc {
	return map[routeMethod]handlerFunc{
		{kindCollectionsSub, http.MethodGet}:     s.listCollections,
		{kindCollectionsRG, http.MethodGet}:      s.listCollections,
		{kindCollection, http.MethodGet}:         s.getCollection,
		{kindCollection, http.MethodPut}:         s.putCollection,
		{kindCollection, http.MethodPatch}:       s.patchCollection,
		{kindCollection, http.MethodDelete}:      s.deleteCollection,
		{kindCollectionEnable, http.MethodPost}:  s.enableCollection,
		{kindCollectionDisable, http.MethodPost}: s.disableCollection,
		{kindJobs, http.MethodGet}:               s.listJobs,
		{kindJob, http.MethodGet}:                s.getJob,
		{kindJob, http.MethodPut}:                s.putJob,
		{kindJob, http.MethodPatch}:              s.patchJob,
		{kindJob, http.MethodDelete}:             s.deleteJob,
		{kindJobRun, http.MethodPost}:            s.runJob,
		{kindJobBackfill, http.MethodPost}:       s.backfillJob,
		{kindJobHistory, http.MethodGet}:         s.listHistory,
	}
}

// DefaultBodyTimeout is Config.BodyTimeout's default.
const DefaultBodyTimeout = 10 * time.Second

// tenantPreview is the tenant of /preview requests (they name no subscription).
const tenantPreview = "\x00preview"

// tenantSlots counts the requests in flight of each tenant (subscription, folded).
type tenantSlots struct {
	mu    sync.Mutex
	limit int
	n     map[string]int
}

func (t *tenantSlots) take(tenant string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.n[tenant] >= t.limit {
		return false
	}
	t.n[tenant]++
	return true
}

func (t *tenantSlots) release(tenant string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.n[tenant]--; t.n[tenant] <= 0 {
		delete(t.n, tenant)
	}
}

// errBody is a request body that failed while it was read ahead.
type errBody struct{ err error }

func (b errBody) Read([]byte) (int, error) { return 0, b.err }
func (b errBody) Close() error             { return nil }

// limited reads the request body whole, at most MaxRequestBytes and within BodyTimeout (408
// after it: a slow client holds no slot), then runs h when fewer than MaxInFlight requests are
// being answered and fewer than MaxInFlightPerTenant of tenant's, else answers 503 ServerBusy.
func (s *Server) limited(w http.ResponseWriter, r *http.Request, tenant string, h func(http.ResponseWriter, *http.Request) *apiError) *apiError {
	r.Body = http.MaxBytesReader(w, r.Body, MaxRequestBytes)
	if r.ContentLength != 0 {
		rc := http.NewResponseController(w)
		_ = rc.SetReadDeadline(time.Now().Add(s.bodyTimeout)) // network time, not the scheduler's clock
		b, err := io.ReadAll(r.Body)
		_ = rc.SetReadDeadline(time.Time{})
		var (
			mbe *http.MaxBytesError
			ne  net.Error
		)
		switch {
		case err == nil:
			r.Body = io.NopCloser(bytes.NewReader(b))
		case errors.As(err, &mbe):
			r.Body = errBody{err} // readBody answers, naming the limit
		case errors.As(err, &ne) && ne.Timeout():
			w.Header().Set("Connection", "close")
			return &apiError{http.StatusRequestTimeout, codeRequestTimeout,
				fmt.Sprintf("the request body did not arrive within %s", s.bodyTimeout)}
		default:
			return badRequest("reading the request body: %v", err)
		}
	}
	select {
	case s.inflight <- struct{}{}:
		defer func() { <-s.inflight }()
	default:
		w.Header().Set("Retry-After", "1")
		return &apiError{http.StatusServiceUnavailable, codeServerBusy, "too many requests in flight; retry later"}
	}
	if !s.tenants.take(tenant) {
		w.Header().Set("Retry-After", "1")
		return &apiError{http.StatusServiceUnavailable, codeServerBusy, fmt.Sprintf(
			"too many requests of this subscription in flight (at most %d at a time); retry later", s.tenants.limit)}
	}
	defer s.tenants.release(tenant)
	return h(w, r)
}

// storeError maps a store error to an answer.
func (s *Server) storeError(ctx context.Context, what string, err error) *apiError {
	switch {
	case errors.Is(err, store.ErrNotFound):
		return notFound("%s was not found", what)
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return &apiError{http.StatusServiceUnavailable, codeServerBusy, "the store did not answer in time; retry later"}
	default:
		s.log.ErrorContext(ctx, "store error", "what", what, "error", err.Error())
		return &apiError{http.StatusInternalServerError, codeInternal, "the store failed: " + err.Error()}
	}
}

// readyProbeTTL is how long a write probe's answer is reused by /readyz: probes cost one small
// committed transaction, at most one per TTL however often /readyz is asked.
const readyProbeTTL = time.Second

// readyProbe is the cached answer of the last write probe.
type readyProbe struct {
	mu  sync.Mutex
	at  time.Time // zero: never probed
	err error
}

// probeStore commits a small write (store.MetaReadyProbe) and returns its error, reusing an
// answer younger than readyProbeTTL. Concurrent callers wait for one probe.
func (s *Server) probeStore(ctx context.Context) error {
	s.ready.mu.Lock()
	defer s.ready.mu.Unlock()
	now := s.clock.Now()
	if !s.ready.at.IsZero() && now.Sub(s.ready.at) < readyProbeTTL && now.Sub(s.ready.at) >= 0 {
		return s.ready.err
	}
	s.ready.err = s.store.MetaPut(ctx, store.MetaPutParams{Name: store.MetaReadyProbe, Value: now.UTC().Format(time.RFC3339Nano)})
	s.ready.at = now
	return s.ready.err
}

// readyz answers 200 when the store commits a write (a probe, see probeStore: a store that
// answers reads but cannot commit, such as a full disk or a read-only database, is not ready)
// and the dispatcher is ready, else 503.
func (s *Server) readyz(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	storeOK := "ok"
	if err := s.probeStore(ctx); err != nil {
		storeOK = "cannot commit: " + err.Error()
	}
	dispOK := "ok"
	if !s.disp.Ready() {
		dispOK = "not ready"
	}
	status := http.StatusOK
	if storeOK != "ok" || dispOK != "ok" {
		status = http.StatusServiceUnavailable
	}
	writeJSON(w, status, map[string]string{"store": storeOK, "dispatcher": dispOK})
}
