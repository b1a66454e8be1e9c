package action_test

import (
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/action"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/clock"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/testcert"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"
)

// received is what a test server saw.
type received struct {
	Method string
	Path   string
	Header http.Header
	Body   string
	TLS    *tls.ConnectionState
}

// recorder is a handler that keeps every request and answers with status and body.
type recorder struct {
	mu     sync.Mutex
	got    []received
	status int
	body   string
}

func (rc *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	rc.mu.Lock()
	rc.got = append(rc.got, received{Method: r.Method, Path: r.URL.RequestURI(), Header: r.Header.Clone(), Body: string(b), TLS: r.TLS})
	status, body := rc.status, rc.body
	rc.mu.Unlock()
	if status == 0 {
		status = http.StatusOK
	}
	w.WriteHeader(status)
	_, _ = io.WriteString(w, body)
}

func (rc *recorder) requests() []received {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]received(nil), rc.got...)
}

var expected = time.Date(2026, 5, 4, 10, 30, 0, 0, time.UTC)

func attempt(typ string, req *wire.HTTPRequest) action.Attempt {
	return action.Attempt{
		Action:       &wire.JobErrorAction{Type: typ, Request: req},
		ExecutionTag: "tag-1", ClientRequestID: "req-1", ExpectedExecution: expected,
		JobID:           "/subscriptions/s/resourceGroups/rg/providers/Microsoft.Scheduler/jobCollections/c/jobs/j",
		JobCollectionID: "/subscriptions/s/resourceGroups/rg/providers/Microsoft.Scheduler/jobCollections/c",
		Region:          "local",
	}
}

func TestHTTPHeadersBodyAndMessage(t *testing.T) {
	rc := &recorder{status: http.StatusCreated, body: "created"}
	srv := httptest.NewServer(rc)
	defer srv.Close()
	e := action.New(action.Config{})
	res := e.Do(t.Context(), attempt("Http", &wire.HTTPRequest{
		URI: srv.URL + "/hook?x=1", Method: "put", Body: `{"a":1}`,
		Headers: map[string]string{"Content-Type": "application/json", "X-Custom": "v", "x-ms-execution-tag": "spoofed"},
	}))
	want := action.Result{Success: true, StatusCode: 201, Message: "HTTP/1.1 201 Created\ncreated"}
	if res != want {
		t.Fatalf("result = %+v, want %+v", res, want)
	}
	got := rc.requests()
	if len(got) != 1 {
		t.Fatalf("%d requests, want 1", len(got))
	}
	r := got[0]
	if r.Method != "PUT" || r.Path != "/hook?x=1" || r.Body != `{"a":1}` {
		t.Fatalf("request = %s %s %q", r.Method, r.Path, r.Body)
	}
	for h, v := range map[string]string{
		"Content-Type":                           "application/json",
		"X-Custom":                               "v",
		"x-ms-execution-tag":                     "tag-1",
		"x-ms-client-request-id":                 "req-1",
		"x-ms-scheduler-expected-execution-time": "2026-05-04T10:30:00Z",
		"x-ms-scheduler-jobid":                   "/subscriptions/s/resourceGroups/rg/providers/Microsoft.Scheduler/jobCollections/c/jobs/j",
		"x-ms-scheduler-jobcollectionid":         "/subscriptions/s/resourceGroups/rg/providers/Microsoft.Scheduler/jobCollections/c",
		"x-ms-scheduler-execution-region":        "local",
	} {
		if g := r.Header.Values(h); len(g) != 1 || g[0] != v {
			t.Errorf("header %s = %q, want [%q]", h, g, v)
		}
	}
	if a := r.Header.Get("Authorization"); a != "" {
		t.Errorf("Authorization = %q, want none", a)
	}
}

func TestHTTPFailureStatusAndTruncatedBody(t *testing.T) {
	rc := &recorder{status: http.StatusServiceUnavailable, body: strings.Repeat("x", 3000)}
	srv := httptest.NewServer(rc)
	defer srv.Close()
	res := action.New(action.Config{}).Do(t.Context(), attempt("Http", &wire.HTTPRequest{URI: srv.URL, Method: "GET"}))
	want := action.Result{StatusCode: 503, Message: "HTTP/1.1 503 Service Unavailable\n" + strings.Repeat("x", action.MaxMessageBody)}
	if res != want {
		t.Fatalf("result = %v %d (message %d bytes), want 503 with %d bytes", res.Success, res.StatusCode, len(res.Message), len(want.Message))
	}
}

func TestHTTPConnectionRefusedAndUnsupportedType(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	uri := srv.URL
	srv.Close()
	e := action.New(action.Config{})
	res := e.Do(t.Context(), attempt("Http", &wire.HTTPRequest{URI: uri, Method: "POST"}))
	if res.Success || res.StatusCode != 0 || !strings.HasPrefix(res.Message, "Http action: request failed: Post: dial tcp") {
		t.Fatalf("result = %+v", res)
	}
	res = e.Do(t.Context(), attempt("Ftp", nil))
	if res != (action.Result{Message: "Ftp actions are not supported by this daemon"}) {
		t.Fatalf("result = %+v", res)
	}
}

func TestHTTPTimeout(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	e := action.New(action.Config{Timeout: 50 * time.Millisecond})
	res := e.Do(t.Context(), attempt("Http", &wire.HTTPRequest{URI: srv.URL, Method: "GET"}))
	want := action.Result{Message: "Http action: the attempt was cancelled: no complete answer within its timeout of 50ms"}
	if res != want {
		t.Fatalf("result = %+v, want %+v", res, want)
	}
}

func TestHTTPBasic(t *testing.T) {
	rc := &recorder{}
	srv := httptest.NewServer(rc)
	defer srv.Close()
	res := action.New(action.Config{}).Do(t.Context(), attempt("Http", &wire.HTTPRequest{
		URI: srv.URL, Method: "POST", Authentication: &wire.HTTPAuthentication{Type: "basic", Username: "alice", Password: "s3cret"},
	}))
	if !res.Success {
		t.Fatalf("result = %+v", res)
	}
	want := "Basic " + base64.StdEncoding.EncodeToString([]byte("alice:s3cret"))
	if got := rc.requests()[0].Header.Get("Authorization"); got != want {
		t.Fatalf("Authorization = %q, want %q", got, want)
	}
}

func TestHTTPSClientCertificate(t *testing.T) {
	rc := &recorder{}
	srv := httptest.NewUnstartedServer(rc)
	srv.TLS = &tls.Config{ClientAuth: tls.RequireAnyClientCert, MinVersion: tls.VersionTLS12}
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshake below is expected
	srv.StartTLS()
	defer srv.Close()
	roots := x509.NewCertPool()
	roots.AddCert(srv.Certificate())
	e := action.New(action.Config{RootCAs: roots})

	c := testcert.New(t, testcert.Options{Subject: pkix.Name{CommonName: "job-client"}, Serial: 42})
	pfx, cert := c.PFX(t, "pfx-pass"), c.Cert
	req := &wire.HTTPRequest{URI: srv.URL + "/secure", Method: "POST",
		Authentication: &wire.HTTPAuthentication{Type: "ClientCertificate", Pfx: pfx, Password: "pfx-pass"}}
	for i := range 2 {
		res := e.Do(t.Context(), attempt("Https", req))
		if !res.Success {
			t.Fatalf("attempt %d: %+v", i, res)
		}
	}
	got := rc.requests()
	if len(got) != 2 {
		t.Fatalf("%d requests, want 2", len(got))
	}
	for _, r := range got {
		if r.TLS == nil || len(r.TLS.PeerCertificates) != 1 || !r.TLS.PeerCertificates[0].Equal(cert) {
			t.Fatalf("server did not see the job's certificate: %+v", r.TLS)
		}
	}

	// Without a certificate the server refuses the handshake; with a wrong password the pfx does not open.
	if res := e.Do(t.Context(), attempt("Https", &wire.HTTPRequest{URI: srv.URL, Method: "GET"})); res.Success || res.StatusCode != 0 {
		t.Fatalf("without a certificate: %+v", res)
	}
	bad := *req
	bad.Authentication = &wire.HTTPAuthentication{Type: "ClientCertificate", Pfx: pfx, Password: "wrong"}
	res := e.Do(t.Context(), attempt("Https", &bad))
	if res.Success || !strings.HasPrefix(res.Message, "Http action: client certificate: pfx: ") {
		t.Fatalf("with a wrong password: %+v", res)
	}
}

func TestHTTPActiveDirectoryOAuth(t *testing.T) {
	var tokenCalls atomic.Int32
	var tokenForms []string
	var mu sync.Mutex
	authority := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/tenant-1/oauth2/token" {
			http.Error(w, "wrong endpoint "+r.Method+" "+r.URL.Path, http.StatusNotFound)
			return
		}
		if err := r.ParseForm(); err != nil {
			t.Errorf("token form: %v", err)
		}
		n := tokenCalls.Add(1)
		mu.Lock()
		tokenForms = append(tokenForms, r.PostForm.Encode())
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"token_type":"Bearer","expires_in":"3600","access_token":"token-%d"}`, n)
	}))
	defer authority.Close()
	rc := &recorder{}
	target := httptest.NewServer(rc)
	defer target.Close()

	fake := clock.NewFake(expected)
	e := action.New(action.Config{Clock: fake, OAuthAuthority: authority.URL + "/"})
	req := &wire.HTTPRequest{URI: target.URL, Method: "POST", Authentication: &wire.HTTPAuthentication{
		Type: "ActiveDirectoryOAuth", Tenant: "tenant-1", Audience: "https://target.example", ClientID: "client-1", Secret: "oauth-secret",
	}}
	do := func() {
		t.Helper()
		if res := e.Do(t.Context(), attempt("Http", req)); !res.Success {
			t.Fatalf("attempt: %+v", res)
		}
	}
	do()
	do()                           // cached
	fake.Advance(54 * time.Minute) // still more than 5 minutes left
	do()
	fake.Advance(2 * time.Minute) // within 5 minutes of expiry: a new token
	do()

	var auths []string
	for _, r := range rc.requests() {
		auths = append(auths, r.Header.Get("Authorization"))
	}
	want := []string{"Bearer token-1", "Bearer token-1", "Bearer token-1", "Bearer token-2"}
	if fmt.Sprint(auths) != fmt.Sprint(want) {
		t.Fatalf("Authorization headers = %q, want %q", auths, want)
	}
	if tokenCalls.Load() != 2 {
		t.Fatalf("token requests = %d, want 2", tokenCalls.Load())
	}
	wantForm := "client_id=client-1&client_secret=oauth-secret&grant_type=client_credentials&resource=https%3A%2F%2Ftarget.example"
	if tokenForms[0] != wantForm {
		t.Fatalf("token form = %q, want %q", tokenForms[0], wantForm)
	}

	// A token endpoint error fails the attempt without reaching the target.
	bad := *req
	bad.Authentication = &wire.HTTPAuthentication{Type: "ActiveDirectoryOAuth", Tenant: "other", ClientID: "c", Secret: "s"}
	res := e.Do(t.Context(), attempt("Http", &bad))
	if res.Success || !strings.Contains(res.Message, "ActiveDirectoryOAuth token: token endpoint "+authority.URL+"/other/oauth2/token answered 404 Not Found") {
		t.Fatalf("with a failing token endpoint: %+v", res)
	}
	if len(rc.requests()) != 4 {
		t.Fatalf("target saw %d requests, want 4", len(rc.requests()))
	}
}
