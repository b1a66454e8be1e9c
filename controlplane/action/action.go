// Package action runs one attempt of a job's action: an HTTP(S) request with the scheduler's
// headers and the job's outbound authentication (Basic, ClientCertificate, ActiveDirectoryOAuth),
// or a message put on an Azure Storage queue (StorageQueue). Service Bus actions are not
// implemented: their attempts fail with a message that says so. It knows nothing about
// schedules, retries or storage: the dispatcher decides when to call it and what to do with the
// Result.
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
	"strings"
	"sync"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/internal/clock"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"
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
	Logger               *slog.Logger
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

	mu    sync.Mutex
	certs map[string]*http.Client // by SHA-256 of the pfx and password
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
	e.client = &http.Client{Transport: e.transport}
	e.tokens = newTokenCache(e.clock)
	return e
}

// Attempt is one try of one action.
type Attempt struct {
	// The main action or the error action, secrets already opened (see MainAction, ErrorAction).
	Type         string
	Request      *wire.HTTPRequest
	QueueMessage *wire.StorageQueueMessage

	ExecutionTag      string
	ClientRequestID   string
	ExpectedExecution time.Time
	JobID             string // the job's resource ID
	JobCollectionID   string // the collection's resource ID
	Region            string
}

// Result is what an attempt did.
type Result struct {
	Success    bool
	StatusCode int    // 0 when no response came back
	Message    string // status line and up to MaxMessageBody bytes of the body, or the error
}

// MainAction sets the attempt's action to a job's main action.
func (at *Attempt) MainAction(a *wire.JobAction) {
	if a != nil {
		at.Type, at.Request, at.QueueMessage = a.Type, a.Request, a.QueueMessage
	}
}

// ErrorAction sets the attempt's action to a job's error action.
func (at *Attempt) ErrorAction(a *wire.JobErrorAction) {
	if a != nil {
		at.Type, at.Request, at.QueueMessage = a.Type, a.Request, a.QueueMessage
	}
}

// Do runs one attempt, bounded by the attempt timeout.
func (e *Executor) Do(ctx context.Context, a Attempt) Result {
	switch strings.ToLower(a.Type) {
	case "http", "https":
		return e.doHTTP(ctx, a)
	case "storagequeue":
		return e.doQueue(ctx, a)
	case "":
		return Result{Message: "the job has no action"}
	default:
		return Result{Message: fmt.Sprintf("%s actions are not supported by this daemon", a.Type)}
	}
}

func (e *Executor) doHTTP(ctx context.Context, a Attempt) Result {
	r := a.Request
	if r == nil {
		return Result{Message: "Http action without a request"}
	}
	ctx, cancel := context.WithTimeout(ctx, e.timeout)
	defer cancel()

	method := strings.ToUpper(r.Method)
	if method == "" {
		method = http.MethodGet
	}
	var body io.Reader
	if r.Body != "" {
		body = strings.NewReader(r.Body)
	}
	req, err := http.NewRequestWithContext(ctx, method, r.URI, body)
	if err != nil {
		return Result{Message: "Http action: invalid request: " + err.Error()}
	}
	for k, v := range r.Headers {
		req.Header.Set(k, v)
	}
	// Canonical keys written directly: these six are set on every attempt.
	req.Header["X-Ms-Execution-Tag"] = []string{a.ExecutionTag}
	req.Header["X-Ms-Client-Request-Id"] = []string{a.ClientRequestID}
	req.Header["X-Ms-Scheduler-Expected-Execution-Time"] = []string{a.ExpectedExecution.UTC().Format(time.RFC3339)}
	req.Header["X-Ms-Scheduler-Jobid"] = []string{a.JobID}
	req.Header["X-Ms-Scheduler-Jobcollectionid"] = []string{a.JobCollectionID}
	req.Header["X-Ms-Scheduler-Execution-Region"] = []string{a.Region}

	client := e.client
	if auth := r.Authentication; auth != nil {
		switch strings.ToLower(auth.Type) {
		case "basic":
			req.SetBasicAuth(auth.Username, auth.Password)
		case "clientcertificate":
			c, err := e.certClient(auth.Pfx, auth.Password)
			if err != nil {
				return Result{Message: "Http action: client certificate: " + err.Error()}
			}
			client = c
		case "activedirectoryoauth":
			tok, err := e.tokens.get(ctx, e.client, e.authority, auth)
			if err != nil {
				return Result{Message: "Http action: ActiveDirectoryOAuth token: " + err.Error()}
			}
			req.Header.Set("Authorization", "Bearer "+tok)
		case "", "notspecified":
		default:
			return Result{Message: fmt.Sprintf("Http action: unknown authentication type %q", auth.Type)}
		}
	}

	resp, err := client.Do(req)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) && ctx.Err() != nil {
			return Result{Message: fmt.Sprintf("Http action: the request timed out after %s", e.timeout)}
		}
		return Result{Message: "Http action: request failed: " + redactURLError(err)}
	}
	defer func() { _ = resp.Body.Close() }()
	head, err := io.ReadAll(io.LimitReader(resp.Body, MaxMessageBody))
	// Drain a little more so the connection can be reused; give up on huge bodies.
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 256<<10))
	msg := fmt.Sprintf("%s %s", resp.Proto, resp.Status)
	if len(head) > 0 {
		msg += "\n" + strings.ToValidUTF8(string(head), "\uFFFD")
	}
	if err != nil {
		msg += "\n(reading the response failed: " + err.Error() + ")"
	}
	return Result{Success: resp.StatusCode >= 200 && resp.StatusCode < 300, StatusCode: resp.StatusCode, Message: msg}
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
