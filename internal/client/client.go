// Package client is the Go client of the Scheduler API (Azure Scheduler 2016-03-01, ARM shape),
// on go-resty. The Terraform provider uses it; so can load tools and tests of the daemon.
//
// Every call sends the bearer token and ?api-version=2016-03-01; transient answers (429, 503)
// and connection errors are retried with exponential backoff and jitter, honouring Retry-After.
// Failed calls return an *Error carrying the HTTP status and the Azure error code and message.
package client

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/go-resty/resty/v2"

	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"
)

// Config configures a Client. Endpoint is required; the rest have defaults.
type Config struct {
	// Endpoint is the daemon's base URL, such as https://scheduler.example.com:8443.
	Endpoint string
	// Token is the bearer token sent with every request.
	Token string
	// CACertPEM, when set, is the only set of roots trusted for the daemon's certificate.
	CACertPEM string
	// InsecureSkipVerify disables verification of the daemon's certificate (tests only).
	InsecureSkipVerify bool
	// UserAgent is sent as User-Agent; default "scheduler-client".
	UserAgent string
	// Retries is how many times a transient failure is retried; default 4, negative for none.
	Retries int
	// RetryWait and RetryMaxWait bound the backoff between retries; default 500ms and 10s.
	RetryWait, RetryMaxWait time.Duration
	// Timeout bounds each attempt; default 60s.
	Timeout time.Duration
}

// Client calls the Scheduler API. It is safe for concurrent use.
type Client struct {
	r *resty.Client
}

// New returns a client for cfg.
func New(cfg Config) (*Client, error) {
	u, err := url.Parse(cfg.Endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("endpoint %q: want an http:// or https:// URL with a host", cfg.Endpoint)
	}
	tlsCfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if cfg.CACertPEM != "" {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM([]byte(cfg.CACertPEM)) {
			return nil, errors.New("ca_cert_pem: no PEM certificate found")
		}
		tlsCfg.RootCAs = pool
	}
	if cfg.InsecureSkipVerify {
		tlsCfg.InsecureSkipVerify = true //nolint:gosec // the user asked for it explicitly.
	}
	base, ok := http.DefaultTransport.(*http.Transport)
	if !ok {
		return nil, errors.New("http.DefaultTransport is not an *http.Transport")
	}
	tr := base.Clone()
	tr.TLSClientConfig = tlsCfg
	tr.MaxIdleConnsPerHost = 32

	retries := cfg.Retries
	switch {
	case retries == 0:
		retries = 4
	case retries < 0:
		retries = 0
	}
	wait, maxWait := cfg.RetryWait, cfg.RetryMaxWait
	if wait <= 0 {
		wait = 500 * time.Millisecond
	}
	if maxWait <= 0 {
		maxWait = 10 * time.Second
	}
	timeout := cfg.Timeout
	if timeout <= 0 {
		timeout = 60 * time.Second
	}
	ua := cfg.UserAgent
	if ua == "" {
		ua = "scheduler-client"
	}
	r := resty.New().
		SetTransport(tr).
		SetBaseURL(strings.TrimRight(cfg.Endpoint, "/")).
		SetTimeout(timeout).
		SetHeader("User-Agent", ua).
		SetHeader("Accept", "application/json").
		SetRetryCount(retries).
		SetRetryWaitTime(wait).
		SetRetryMaxWaitTime(maxWait).
		SetRetryAfter(retryAfter).
		AddRetryCondition(transient)
	if cfg.Token != "" {
		r.SetAuthToken(cfg.Token)
	}
	return &Client{r: r}, nil
}

// transient reports whether an attempt is worth repeating: the server asked us to slow down
// (429), is busy (503), or the connection failed before an answer came.
func transient(resp *resty.Response, err error) bool {
	if err != nil {
		return resp == nil || resp.RawResponse == nil
	}
	switch resp.StatusCode() {
	case http.StatusTooManyRequests, http.StatusServiceUnavailable:
		return true
	}
	return false
}

// retryAfter honours a Retry-After header in seconds (0: use the backoff).
func retryAfter(_ *resty.Client, resp *resty.Response) (time.Duration, error) {
	if resp == nil {
		return 0, nil
	}
	if s, err := strconv.Atoi(resp.Header().Get("Retry-After")); err == nil && s > 0 {
		return time.Duration(s) * time.Second, nil
	}
	return 0, nil
}

// Error is a failed API call.
type Error struct {
	Method     string
	Path       string
	StatusCode int
	Code       string // Azure error code: BadRequest, ResourceNotFound, Conflict, ...
	Message    string
	RequestID  string // x-ms-request-id
}

func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s: %d", e.Method, e.Path, e.StatusCode)
	if e.Code != "" {
		b.WriteString(" " + e.Code)
	}
	if e.Message != "" {
		b.WriteString(": " + e.Message)
	}
	if e.RequestID != "" {
		b.WriteString(" (request id " + e.RequestID + ")")
	}
	return b.String()
}

// IsNotFound reports whether err is a 404 answer.
func IsNotFound(err error) bool { return hasStatus(err, http.StatusNotFound) }

// IsConflict reports whether err is a 409 answer (quota exceeded, job in a final state).
func IsConflict(err error) bool { return hasStatus(err, http.StatusConflict) }

func hasStatus(err error, code int) bool {
	var e *Error
	return errors.As(err, &e) && e.StatusCode == code
}

// do sends one request (retrying transient failures) and decodes a 2xx JSON answer into out
// (nil: ignore the body).
func (c *Client) do(ctx context.Context, method, path string, query url.Values, body, out any) error {
	req := c.r.R().SetContext(ctx)
	if query == nil {
		query = url.Values{}
	}
	if !strings.Contains(path, "api-version=") {
		query.Set("api-version", wire.APIVersion)
	}
	req.SetQueryParamsFromValues(query)
	// Times as written: a job's startTime and endTime come back spelled as they were sent, so an
	// imported job's state holds the spelling of the configuration it was created from.
	req.SetHeader("Prefer", "times=as-written")
	if body != nil {
		data, err := json.Marshal(body)
		if err != nil {
			return fmt.Errorf("%s %s: encode body: %w", method, path, err)
		}
		req.SetHeader("Content-Type", "application/json").SetBody(data)
	}
	resp, err := req.Execute(method, path)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	if resp.IsError() || resp.StatusCode() < 200 || resp.StatusCode() > 299 {
		return apiError(method, path, resp)
	}
	if out == nil || len(resp.Body()) == 0 {
		return nil
	}
	if err := json.Unmarshal(resp.Body(), out); err != nil {
		return fmt.Errorf("%s %s: decode answer: %w", method, path, err)
	}
	return nil
}

func apiError(method, path string, resp *resty.Response) *Error {
	e := &Error{
		Method:     method,
		Path:       path,
		StatusCode: resp.StatusCode(),
		RequestID:  resp.Header().Get("x-ms-request-id"),
	}
	var body wire.ErrorResponse
	if err := json.Unmarshal(resp.Body(), &body); err == nil && (body.Error.Code != "" || body.Error.Message != "") {
		e.Code, e.Message = body.Error.Code, body.Error.Message
		return e
	}
	msg := strings.TrimSpace(string(resp.Body()))
	if len(msg) > 512 {
		msg = msg[:512] + "..."
	}
	e.Message = msg
	return e
}

func escape(s string) string { return url.PathEscape(s) }
