// Package action runs one attempt of a job's action. Each kind of action is one small type
// behind the runner interface, in a file of its own: an HTTP(S) request with the scheduler's
// headers and the job's outbound authentication (http.go), a message put on an Azure Storage
// queue (storagequeue.go), a message sent to a Service Bus queue or topic over AMQP 1.0
// (servicebus.go). What a response says is captured once (capture). The package knows nothing
// about schedules, retries or storage: the dispatcher decides when to call it and what to do with
// the Result.
package action

import (
	"context"
	"crypto/tls"
	"crypto/x509"
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

	"github.com/schedulerhq/terraform-provider-scheduler/internal/clock"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/jobdef"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/jobstate"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"
	"go.opentelemetry.io/otel/trace"
)

// Defaults.
const (
	// DefaultTimeout bounds one attempt (SPEC 5: an HTTP attempt times out after 60 seconds).
	DefaultTimeout = 60 * time.Second
	// DefaultOAuthAuthority is where ActiveDirectoryOAuth tokens come from.
	DefaultOAuthAuthority = "https://login.microsoftonline.com"
	// DefaultStorageQueueEndpoint is Azure's queue service of a storage account.
	DefaultStorageQueueEndpoint = "https://{account}.queue.core.windows.net"
	// MaxMessageBody is how much of a response body a history message keeps.
	MaxMessageBody = 2048
)

// Outbound header names (SPEC 5).
const (
	HeaderExecutionTag      = "x-ms-execution-tag"
	HeaderClientRequestID   = "x-ms-client-request-id"
	HeaderExpectedExecution = "x-ms-scheduler-expected-execution-time"
	HeaderJobID             = "x-ms-scheduler-jobid"
	HeaderJobCollectionID   = "x-ms-scheduler-jobcollectionid"
	HeaderExecutionRegion   = "x-ms-scheduler-execution-region"
	// What failed, on the error action's attempts only (extension, SPEC 8; see Failure).
	HeaderFailedStatus = "x-ms-scheduler-failed-status"
	HeaderFailedReason = "x-ms-scheduler-failed-reason"
	HeaderAttempts     = "x-ms-scheduler-attempts"
)

// Config configures an Executor. The zero value works: real clock, a shared transport, 60 s
// attempts, Azure's authority.
type Config struct {
	Clock clock.Clock
	// Transport is the shared transport for requests without a client certificate; nil: one
	// built by NewTransport. Requests with a client certificate use a clone of it per
	// certificate (cached).
	Transport *http.Transport
	// RootCAs, when set, replaces the system roots for HTTPS targets and the token endpoint.
	RootCAs        *x509.CertPool
	Timeout        time.Duration
	OAuthAuthority string
	// StorageQueueEndpoint is the queue service of a storage account, with "{account}" standing
	// for the account name; "": DefaultStorageQueueEndpoint. For Azurite:
	// "http://127.0.0.1:10001/{account}".
	StorageQueueEndpoint string
	// ServiceBus says how Service Bus actions reach their namespaces (zero: Azure's).
	ServiceBus ServiceBusConfig
	Logger     *slog.Logger
	// Tracer, when set, records a span per attempt (see Attempt.Trace; the daemon's
	// --otlp-endpoint exports them). nil: attempts still carry traceparent, nothing is recorded.
	Tracer trace.Tracer
}

// NewTransport returns the transport the daemon shares between all attempts: keep-alive with
// enough idle connections per host that a busy target is not re-dialled on every fire.
func NewTransport() *http.Transport {
	return &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          4096,
		MaxIdleConnsPerHost:   512,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
	}
}

// Executor runs attempts. It is safe for concurrent use.
type Executor struct {
	clock     clock.Clock
	transport *http.Transport
	client    *http.Client
	timeout   time.Duration
	authority string
	queues    string
	log       *slog.Logger
	tokens    *tokenCache
	// tokenClient fetches OAuth tokens: it follows no redirect (the request's body is the
	// client secret).
	tokenClient *http.Client

	mu    sync.Mutex
	certs map[string]*http.Client // by SHA-256 of the pfx and password

	kinds map[string]runner // by lower-case action type
	bus   *busPool

	tracer trace.Tracer
}

// New returns an Executor.
func New(cfg Config) *Executor {
	e := &Executor{
		clock:     cfg.Clock,
		transport: cfg.Transport,
		timeout:   cfg.Timeout,
		authority: strings.TrimRight(cfg.OAuthAuthority, "/"),
		queues:    strings.TrimRight(cfg.StorageQueueEndpoint, "/"),
		log:       cfg.Logger,
		certs:     map[string]*http.Client{},
		tracer:    cfg.Tracer,
	}
	if e.clock == nil {
		e.clock = clock.Real{}
	}
	if e.transport == nil {
		e.transport = NewTransport()
	}
	if cfg.RootCAs != nil {
		e.transport = e.transport.Clone()
		tc := &tls.Config{MinVersion: tls.VersionTLS12}
		if e.transport.TLSClientConfig != nil {
			tc = e.transport.TLSClientConfig.Clone()
		}
		tc.RootCAs = cfg.RootCAs
		e.transport.TLSClientConfig = tc
	}
	if e.timeout <= 0 {
		e.timeout = DefaultTimeout
	}
	if e.authority == "" {
		e.authority = DefaultOAuthAuthority
	}
	if e.queues == "" {
		e.queues = DefaultStorageQueueEndpoint
	}
	if e.log == nil {
		e.log = slog.New(slog.DiscardHandler)
	}
	e.client = &http.Client{Transport: newPlainTransport(e.transport), CheckRedirect: checkRedirect}
	e.tokenClient = &http.Client{Transport: e.transport, CheckRedirect: noRedirect}
	e.tokens = newTokenCache(e.clock)
	e.kinds = map[string]runner{}
	e.register(httpRunner{e}, jobdef.ActionHTTP, jobdef.ActionHTTPS)
	e.register(storageQueueRunner{e}, jobdef.ActionStorageQueue)
	e.bus = newBusPool(cfg.ServiceBus, e.transport.TLSClientConfig, e.timeout, e.clock.Now)
	e.register(serviceBusRunner{pool: e.bus}, jobdef.ActionServiceBusQueue)
	e.register(serviceBusRunner{pool: e.bus, topic: true}, jobdef.ActionServiceBusTopic)
	return e
}

// Close closes the pooled Service Bus connections. Attempts after Close dial again.
func (e *Executor) Close() { e.bus.Close() }

func (e *Executor) register(r runner, types ...string) {
	for _, t := range types {
		e.kinds[strings.ToLower(t)] = r
	}
}

// runner makes one attempt of one kind of action.
type runner interface {
	run(ctx context.Context, a *Attempt) Result
}

// Attempt is one try of one action.
type Attempt struct {
	// Action is the main action or the error action, secrets already opened (see MainAction,
	// ErrorAction).
	Action *wire.JobErrorAction

	ExecutionTag      string
	ClientRequestID   string
	ExpectedExecution time.Time
	JobID             string // the job's resource ID
	JobCollectionID   string // the collection's resource ID
	Region            string
	// Phase (MainAction, ErrorAction) and RetryCount (the attempt's retryCount) describe the
	// attempt in its span.
	Phase      string
	RetryCount int
	// Failure, on an error action's attempt, is what made the main action fail (nil: nothing is
	// said, as in Azure).
	Failure *Failure

	timeout time.Duration // set by Do: the action's timeout, or the executor's
	ids     *TraceIDs     // set by Do: the attempt's trace context
}

// Failure is what the error action is told of the main action's failure: its last attempt's
// status code (0: no response came back), a short reason (one line, at most MaxReasonChars) and
// how many attempts the main action made.
type Failure struct {
	Status   int
	Reason   string
	Attempts int
}

// MaxReasonChars bounds Failure.Reason where it is sent.
const MaxReasonChars = 256

// fields returns the failure's headers / message properties, by name; the status is left out
// when no response came back.
func (f *Failure) fields() map[string]string {
	if f == nil {
		return nil
	}
	out := map[string]string{HeaderFailedReason: shortReason(f.Reason), HeaderAttempts: strconv.Itoa(f.Attempts)}
	if f.Status != 0 {
		out[HeaderFailedStatus] = strconv.Itoa(f.Status)
	}
	return out
}

// shortReason is the first line of a reason, without control characters, at most MaxReasonChars
// runes.
func shortReason(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return -1
		}
		return r
	}, strings.ToValidUTF8(s, "\uFFFD"))
	if r := []rune(s); len(r) > MaxReasonChars {
		s = string(r[:MaxReasonChars])
	}
	return s
}

// Result is what an attempt did.
type Result struct {
	Success    bool
	StatusCode int    // 0 when no response came back
	Message    string // status line and up to MaxMessageBody bytes of the body, or the error
}

// MainAction sets the attempt's action to a job's main action.
func (at *Attempt) MainAction(a *wire.JobAction) { at.Action = a.Body() }

// ErrorAction sets the attempt's action to a job's error action.
func (at *Attempt) ErrorAction(a *wire.JobErrorAction) { at.Action = a }

// Do runs one attempt, bounded by the action's timeout (SPEC 8; without one, the executor's):
// an attempt still unanswered then is cancelled and fails, its message saying so.
func (e *Executor) Do(ctx context.Context, a Attempt) Result {
	if a.Action == nil || a.Action.Type == "" {
		return Result{Message: "the job has no action"}
	}
	r, ok := e.kinds[strings.ToLower(a.Action.Type)]
	if !ok {
		return Result{Message: fmt.Sprintf("%s actions are not supported by this daemon", a.Action.Type)}
	}
	a.timeout = jobstate.Timeout(a.Action, e.timeout)
	ids := a.Trace()
	a.ids = &ids
	var span trace.Span
	if e.recording() {
		ctx, span = e.startSpan(ctx, &a)
	}
	actx, cancel := context.WithTimeout(ctx, a.timeout)
	defer cancel()
	res := r.run(actx, &a)
	if span != nil {
		endSpan(span, res)
	}
	return res
}

// timedOut is the message of an attempt cancelled at its deadline.
func timedOut(what string, timeout time.Duration) string {
	return fmt.Sprintf("%s: the attempt was cancelled: no complete answer within its timeout of %s", what, timeout)
}

// deadlinePassed reports whether ctx reached its deadline (not ended by shutdown). A network
// read given the deadline can fail an instant before ctx's own timer fires: the deadline itself
// is checked too.
func deadlinePassed(ctx context.Context) bool {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return true
	}
	d, ok := ctx.Deadline()
	return ok && ctx.Err() == nil && !time.Now().Before(d)
}

// capture turns a response into a Result: the status line and up to MaxMessageBody bytes of the
// body (the rest drained a little so the connection can be reused), the request's credentials
// scrubbed out (see scrubber). ok says which statuses are a success.
func capture(resp *http.Response, ok func(status int) bool, sc *scrubber) Result {
	defer func() { _ = resp.Body.Close() }()
	var (
		head []byte
		err  error
	)
	if resp.ContentLength != 0 { // an answer said to be empty is not read (nothing to allocate)
		// Read past the limit by the longest credential, so that one the limit cuts is scrubbed whole.
		head, err = io.ReadAll(io.LimitReader(resp.Body, int64(MaxMessageBody+sc.longest())))
		// Drain a little more so the connection can be reused; give up on huge bodies.
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 256<<10))
	}
	body := sc.scrub(string(head))
	if len(body) > MaxMessageBody {
		body = body[:MaxMessageBody]
	}
	msg := sc.scrub(resp.Proto + " " + resp.Status)
	if len(body) > 0 {
		msg += "\n" + strings.ToValidUTF8(body, "\uFFFD")
	}
	if err != nil {
		msg += "\n(reading the response failed: " + sc.scrub(err.Error()) + ")"
	}
	return Result{Success: ok(resp.StatusCode), StatusCode: resp.StatusCode, Message: msg}
}

// send sends req with client and captures the response; what names the action in messages
// ("Http action"); secrets are the action's opened secrets, scrubbed from the response with the
// request's credential headers. A transport error is reported without the URL's query string.
// An answer whose body is still coming at the deadline fails too (its status is kept).
func send(ctx context.Context, client *http.Client, req *http.Request, what string, timeout time.Duration, ok func(int) bool, secrets []string) Result {
	sc := newScrubber(req, secrets)
	resp, err := client.Do(req)
	if err != nil {
		if deadlinePassed(ctx) {
			return Result{Message: timedOut(what, timeout)}
		}
		return Result{Message: what + ": request failed: " + sc.scrub(redactURLError(err))}
	}
	res := capture(resp, ok, sc)
	if deadlinePassed(ctx) {
		res.Success = false
		res.Message = timedOut(what, timeout) + "\n" + res.Message
	}
	return res
}

// redactURLError keeps the cause of a transport error without the URL's query string, which may
// carry credentials.
func redactURLError(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) && ue.Err != nil {
		return ue.Op + ": " + ue.Err.Error()
	}
	return err.Error()
}

// CheckEndpoint reports whether an endpoint template is an absolute URL once its placeholder
// (such as "{account}") is replaced by a name; schemes is empty for http and https.
func CheckEndpoint(template, placeholder string, schemes ...string) error {
	if len(schemes) == 0 {
		schemes = []string{"http", "https"}
	}
	u, err := url.Parse(strings.ReplaceAll(template, placeholder, "name"))
	if err != nil {
		return fmt.Errorf("%q is not a URL: %w", template, err)
	}
	for _, s := range schemes {
		if strings.EqualFold(u.Scheme, s) && u.Host != "" {
			return nil
		}
	}
	return fmt.Errorf("%q is not an absolute %s URL", template, strings.Join(schemes, " or "))
}
