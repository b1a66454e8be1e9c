package action

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/internal/tcptest"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"
)

// rawTarget is a TCP server that records each request's bytes as they came and answers each with
// answer(n) (n counts requests from 1); after each answer it closes the connection when closeAfter,
// and an answer "" closes it without an answer.
type rawTarget struct {
	srv        *tcptest.Server
	mu         sync.Mutex
	requests   [][]byte
	conns      atomic.Int64 // accepted
	closed     atomic.Int64 // ended, by either side
	answer     func(n int) string
	closeAfter bool
}

func newRawTarget(t *testing.T, answer func(n int) string, closeAfter bool) *rawTarget {
	t.Helper()
	rt := &rawTarget{answer: answer, closeAfter: closeAfter}
	rt.srv = tcptest.Serve(t, func(c net.Conn) {
		rt.conns.Add(1)
		rt.serve(c)
	})
	return rt
}

func (rt *rawTarget) addr() string { return rt.srv.Addr() }

func (rt *rawTarget) url() string { return "http://" + rt.addr() }

func (rt *rawTarget) serve(c net.Conn) {
	defer func() { _ = c.Close(); rt.closed.Add(1) }()
	br := bufio.NewReader(c)
	for {
		var raw bytes.Buffer
		length := 0
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				return
			}
			raw.WriteString(line)
			if k, v, ok := strings.Cut(line, ":"); ok && strings.EqualFold(k, "Content-Length") {
				length, _ = strconv.Atoi(strings.TrimSpace(v))
			}
			if line == "\r\n" {
				break
			}
		}
		body := make([]byte, length)
		if _, err := io.ReadFull(br, body); err != nil {
			return
		}
		raw.Write(body)
		rt.mu.Lock()
		rt.requests = append(rt.requests, raw.Bytes())
		n := len(rt.requests)
		rt.mu.Unlock()
		answer := rt.answer(n)
		if _, err := io.WriteString(c, answer); err != nil || rt.closeAfter || answer == "" {
			return
		}
	}
}

const okEmpty = "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"

// attemptTo is an Http attempt to uri with a body, headers of the job's and Basic authentication.
func attemptTo(uri string) Attempt {
	return Attempt{Action: &wire.JobErrorAction{Type: "Http", Request: &wire.HTTPRequest{
		URI: uri, Method: "post", Body: `{"hello":"world"}`,
		Headers:        map[string]string{"Content-Type": "application/json", "x-custom": "  padded\tvalue ", "Accept": "*/*"},
		Authentication: &wire.HTTPAuthentication{Type: "Basic", Username: "alice", Password: "hunter2-long-enough"},
	}}, ExecutionTag: "tag", ClientRequestID: "crid", JobID: "/subscriptions/s/jobs/j", JobCollectionID: "/c", Region: "local",
		ExpectedExecution: time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC), Phase: "MainAction"}
}

// TestPlainRequestIsWhatNetHTTPWrites: an attempt's request reaches the target byte for byte as
// net/http's Transport writes it (request line, headers and their order, Accept-Encoding, body),
// and the answer is read the same way.
func TestPlainRequestIsWhatNetHTTPWrites(t *testing.T) {
	rt := newRawTarget(t, func(int) string { return "HTTP/1.1 202 Accepted\r\nContent-Length: 5\r\n\r\nqueue" }, false)
	for _, tc := range []struct {
		name   string
		mutate func(a *Attempt)
	}{
		{"job headers and basic auth", func(*Attempt) {}},
		{"a user agent of the job's", func(a *Attempt) { a.Action.Request.Headers["User-Agent"] = " probe/1 " }},
		{"an empty user agent", func(a *Attempt) { a.Action.Request.Headers["User-Agent"] = "" }},
		{"GET without a body, a query", func(a *Attempt) {
			a.Action.Request.Method, a.Action.Request.Body = "GET", ""
			a.Action.Request.URI += "/p%20ath?q=1&r=%2F"
		}},
		{"PUT without a body", func(a *Attempt) { a.Action.Request.Method, a.Action.Request.Body = "PUT", "" }},
		{"DELETE without a body", func(a *Attempt) { a.Action.Request.Method, a.Action.Request.Body = "DELETE", "" }},
		{"an error action's failure", func(a *Attempt) {
			a.Failure = &Failure{Status: 503, Reason: "down", Attempts: 3}
			a.Phase = "ErrorAction"
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var results []Result
			for _, plain := range []bool{false, true} {
				e := New(Config{})
				if !plain {
					e.client.Transport = e.transport
				}
				a := attemptTo(rt.url())
				tc.mutate(&a)
				a.ClientRequestID = "crid" // the trace IDs come from it: the same in both
				results = append(results, e.Do(t.Context(), a))
			}
			rt.mu.Lock()
			n := len(rt.requests)
			got, want := rt.requests[n-1], rt.requests[n-2]
			rt.mu.Unlock()
			if !bytes.Equal(got, want) {
				t.Fatalf("request written as\n%q\nnet/http writes\n%q", got, want)
			}
			if results[0] != results[1] {
				t.Fatalf("result %+v, net/http's %+v", results[1], results[0])
			}
		})
	}
}

// TestPlainAnswersAsNetHTTP: answers framed every way HTTP/1.1 allows (and a few ways it does not)
// give the attempt the result net/http's Transport gives it.
func TestPlainAnswersAsNetHTTP(t *testing.T) {
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	_, _ = zw.Write([]byte("compressed answer"))
	_ = zw.Close()
	for _, tc := range []struct{ name, answer string }{
		{"empty", okEmpty},
		{"a body", "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"},
		{"chunked", "HTTP/1.1 201 Created\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n"},
		{"gzip", "HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: " + strconv.Itoa(gz.Len()) + "\r\n\r\n" + gz.String()},
		{"until close", "HTTP/1.0 200 OK\r\n\r\nto the end"},
		{"interim first", "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n"},
		{"a failure", "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 4\r\nConnection: close\r\n\r\ndown"},
		{"credentials echoed", "HTTP/1.1 400 Bad Request\r\nContent-Length: 19\r\n\r\nhunter2-long-enough"},
		{"malformed status", "HTTP/1.1 abc OK\r\n\r\n"},
		{"no status line", "hello\r\n\r\n"},
		{"short body", "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc"},
		{"bad chunk", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"},
		{"closed without an answer", ""},
		{"interim without end", strings.Repeat("HTTP/1.1 100 Continue\r\n\r\n", 50)},
		{"switching protocols", "HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\nConnection: upgrade\r\n\r\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rt := newRawTarget(t, func(int) string { return tc.answer }, true)
			var results []Result
			for _, plain := range []bool{false, true} {
				e := New(Config{})
				if !plain {
					e.client.Transport = e.transport
				}
				results = append(results, e.Do(t.Context(), attemptTo(rt.url())))
			}
			if tc.name == "switching protocols" {
				// net/http says "net/http: skip alternate protocol"-style things of its own here;
				// both fail without a status.
				if results[1].Success || results[1].StatusCode != 0 || results[0].Success {
					t.Fatalf("result %+v, net/http's %+v: want both failed", results[1], results[0])
				}
				return
			}
			if results[0] != results[1] {
				t.Fatalf("result %+v\nnet/http's %+v", results[1], results[0])
			}
		})
	}
}

// TestPlainKeepsConnections: attempts one after the other to one target use one connection.
func TestPlainKeepsConnections(t *testing.T) {
	rt := newRawTarget(t, func(int) string { return okEmpty }, false)
	body := newRawTarget(t, func(int) string { return "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabc" }, false)
	e := New(Config{})
	for i := range 20 {
		for _, target := range []*rawTarget{rt, body} {
			if res := e.Do(t.Context(), attemptTo(target.url())); !res.Success {
				t.Fatalf("attempt %d: %+v", i, res)
			}
		}
	}
	if rt.conns.Load() != 1 || body.conns.Load() != 1 {
		t.Fatalf("%d and %d connections for 20 attempts each, want 1 and 1", rt.conns.Load(), body.conns.Load())
	}
}

// TestPlainRedialsWhatTheTargetClosed: a target that closes each connection after its answer
// (without saying so) gets every attempt on a new connection, none failing on the closed one.
func TestPlainRedialsWhatTheTargetClosed(t *testing.T) {
	rt := newRawTarget(t, func(int) string { return okEmpty }, true)
	e := New(Config{})
	for i := range 10 {
		// The target's close is on its way or already here when the next attempt starts.
		if res := e.Do(t.Context(), attemptTo(rt.url())); !res.Success {
			t.Fatalf("attempt %d: %+v", i, res)
		}
		waitFor(t, func() bool { return rt.conns.Load() == int64(i+1) && closedByPeer(e, rt) })
	}
	if got := rt.conns.Load(); got != 10 {
		t.Fatalf("%d connections for 10 attempts, want 10", got)
	}
}

// closedByPeer reports whether the idle connection kept for rt, if any, has seen the target's
// close (its end of stream is readable).
func closedByPeer(e *Executor, rt *rawTarget) bool {
	pt, ok := e.client.Transport.(*plainTransport)
	if !ok {
		return true
	}
	pt.mu.Lock()
	defer pt.mu.Unlock()
	for _, c := range pt.idle[rt.addr()] {
		sc, ok := c.Conn.(*net.TCPConn)
		if !ok {
			continue
		}
		rc, err := sc.SyscallConn()
		if err != nil {
			return false
		}
		closed := false
		_ = rc.Read(func(fd uintptr) bool {
			var b [1]byte
			n, _ := recvPeek(fd, b[:])
			closed = n == 0
			return true
		})
		if !closed {
			return false
		}
	}
	return true
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 10s")
		}
		time.Sleep(time.Millisecond)
	}
}

// TestPlainRepeatsOnlyWhatNetHTTPRepeats: a target that reads the second request on a kept
// connection and closes it without an answer gets a GET again on a new connection, and a POST
// only once (it may have acted on it), as net/http's Transport does.
func TestPlainRepeatsOnlyWhatNetHTTPRepeats(t *testing.T) {
	for _, method := range []string{"GET", "POST"} {
		t.Run(method, func(t *testing.T) {
			var results []Result
			var requests []int
			for _, plain := range []bool{false, true} {
				rt := newRawTarget(t, func(n int) string {
					if n == 2 {
						return ""
					}
					return okEmpty
				}, false)
				e := New(Config{})
				if !plain {
					e.client.Transport = e.transport
				}
				a := attemptTo(rt.url())
				a.Action.Request.Method = method
				if res := e.Do(t.Context(), a); !res.Success {
					t.Fatal(res)
				}
				results = append(results, e.Do(t.Context(), a))
				rt.mu.Lock()
				requests = append(requests, len(rt.requests))
				rt.mu.Unlock()
			}
			want := Result{Success: true, StatusCode: 200, Message: "HTTP/1.1 200 OK"}
			wantRequests := 3
			if method == "POST" {
				want, wantRequests = Result{Message: "Http action: request failed: Post: EOF"}, 2
			}
			if results[1] != want || requests[1] != wantRequests || results[0] != results[1] || requests[0] != requests[1] {
				t.Fatalf("second attempt %+v after %d requests, want %+v after %d; net/http's %+v after %d",
					results[1], requests[1], want, wantRequests, results[0], requests[0])
			}
		})
	}
}

// TestPlainBoundsTheAnswersHead: a target sending headers without end fails the attempt once
// 10 MiB have come, long before its timeout, as net/http's Transport does.
func TestPlainBoundsTheAnswersHead(t *testing.T) {
	srv := tcptest.Serve(t, func(c net.Conn) {
		// The request first: an answer before it is one net/http drops unread.
		req, err := http.ReadRequest(bufio.NewReader(c))
		if err != nil {
			_ = c.Close()
			return
		}
		_, _ = io.Copy(io.Discard, req.Body)
		_, _ = io.WriteString(c, "HTTP/1.1 200 OK\r\n")
		line := []byte("X-Filler: " + strings.Repeat("a", 1000) + "\r\n")
		for {
			if _, err := c.Write(line); err != nil {
				_ = c.Close()
				return
			}
		}
	})
	var results []Result
	for _, plain := range []bool{false, true} {
		e := New(Config{Timeout: time.Minute})
		if !plain {
			e.client.Transport = e.transport
		}
		results = append(results, e.Do(t.Context(), attemptTo("http://"+srv.Addr())))
	}
	want := "Http action: request failed: Post: net/http: HTTP/1.x transport connection broken: net/http: server response headers exceeded 10485760 bytes; aborted"
	if results[1].Success || results[1].Message != want || results[0] != results[1] {
		t.Fatalf("result %+v, want the message %q; net/http's %+v", results[1], want, results[0])
	}
}

// TestPlainCancelledWhileWaiting: an attempt whose context is cancelled (the daemon stopping)
// while the target holds its answer ends at once, and its connection is not kept.
func TestPlainCancelledWhileWaiting(t *testing.T) {
	rt := newRawTarget(t, func(int) string { <-t.Context().Done(); return "" }, false)
	e := New(Config{Timeout: time.Minute})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan Result)
	go func() { done <- e.Do(ctx, attemptTo(rt.url())) }()
	time.Sleep(50 * time.Millisecond) // let the request go out (the result is the same if not)
	cancel()
	select {
	case res := <-done:
		if res.Success || !strings.Contains(res.Message, "context canceled") {
			t.Fatalf("result %+v, want a failure naming the cancellation", res)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the attempt did not end within 10s of its cancellation")
	}
	pt, ok := e.client.Transport.(*plainTransport)
	if !ok {
		t.Fatal("the executor's client does not use plainTransport")
	}
	pt.mu.Lock()
	defer pt.mu.Unlock()
	if n := len(pt.idle); n != 0 {
		t.Fatalf("%d targets with idle connections after a cancelled attempt, want none", n)
	}
}

// TestPlainTakes: what goes to net/http's Transport instead.
func TestPlainTakes(t *testing.T) {
	pt := newPlainTransport(NewTransport())
	req := func(method, uri string, header ...string) *http.Request {
		var body io.Reader
		if method == http.MethodPost {
			body = strings.NewReader("x")
		}
		r, err := http.NewRequestWithContext(t.Context(), method, uri, body)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i+1 < len(header); i += 2 {
			r.Header[header[i]] = []string{header[i+1]}
		}
		return r
	}
	unknownLength := req(http.MethodPost, "http://a.example/")
	unknownLength.Body, unknownLength.GetBody, unknownLength.ContentLength = io.NopCloser(strings.NewReader("x")), nil, -1
	closing := req(http.MethodGet, "http://a.example/")
	closing.Close = true
	for _, tc := range []struct {
		name string
		req  *http.Request
		want bool
	}{
		{"plain POST", req(http.MethodPost, "http://a.example:8080/x?y=1", "X-A", "b"), true},
		{"plain GET", req(http.MethodGet, "http://a.example/"), true},
		{"https", req(http.MethodPost, "https://a.example/"), false},
		{"user in the URL", req(http.MethodGet, "http://u:p@a.example/"), false},
		{"unicode host", req(http.MethodGet, "http://bücher.example/"), false},
		{"zone", req(http.MethodGet, "http://[fe80::1%25eth0]:80/"), false},
		{"Connection", req(http.MethodGet, "http://a.example/", "Connection", "close"), false},
		{"Expect", req(http.MethodPost, "http://a.example/", "Expect", "100-continue"), false},
		{"Host", req(http.MethodGet, "http://a.example/", "Host", "b.example"), false},
		{"Accept-Encoding", req(http.MethodGet, "http://a.example/", "Accept-Encoding", "br"), false},
		{"Range", req(http.MethodGet, "http://a.example/", "Range", "bytes=0-1"), false},
		{"a line break in a value", req(http.MethodGet, "http://a.example/", "X-A", "b\r\nX-Injected: 1"), false},
		{"a bad name", req(http.MethodGet, "http://a.example/", "X A", "b"), false},
		{"req.Close", closing, false},
		{"a body of unknown length", unknownLength, false},
	} {
		if _, got := pt.takes(tc.req); got != tc.want {
			t.Errorf("%s: takes %v, want %v", tc.name, got, tc.want)
		}
	}
	proxied := NewTransport()
	proxied.Proxy = http.ProxyURL(&url.URL{Scheme: "http", Host: "proxy.example:3128"})
	if _, ok := newPlainTransport(proxied).takes(req(http.MethodGet, "http://a.example/")); ok {
		t.Error("a request through a proxy is taken, want it left to net/http")
	}
}

// TestPlainClosesIdleConnections: CloseIdleConnections closes the kept connections; the next
// attempt dials again.
func TestPlainClosesIdleConnections(t *testing.T) {
	rt := newRawTarget(t, func(int) string { return okEmpty }, false)
	e := New(Config{})
	for range 2 {
		if res := e.Do(t.Context(), attemptTo(rt.url())); !res.Success {
			t.Fatal(res)
		}
		e.client.CloseIdleConnections()
	}
	if got := rt.conns.Load(); got != 2 {
		t.Fatalf("%d connections, want 2", got)
	}
}

// TestPlainIdleConnections: a connection idle for the transport's IdleConnTimeout is closed; no
// more than MaxIdleConnsPerHost are kept for one target.
func TestPlainIdleConnections(t *testing.T) {
	rt := newRawTarget(t, func(int) string { return okEmpty }, false)
	tr := NewTransport()
	tr.IdleConnTimeout = 100 * time.Millisecond
	e := New(Config{Transport: tr})
	if res := e.Do(t.Context(), attemptTo(rt.url())); !res.Success {
		t.Fatal(res)
	}
	waitFor(t, func() bool { return rt.closed.Load() == 1 })

	pt := newPlainTransport(&http.Transport{MaxIdleConnsPerHost: 2})
	var ends []net.Conn
	for range 3 {
		a, b := net.Pipe()
		ends = append(ends, b)
		pt.put("h:80", &plainConn{Conn: a})
	}
	if n := len(pt.idle["h:80"]); n != 2 {
		t.Fatalf("%d idle connections kept, want 2", n)
	}
	// The third was closed: its other end reads the end of the stream.
	if _, err := ends[2].Read(make([]byte, 1)); !errors.Is(err, io.EOF) {
		t.Fatalf("the connection past MaxIdleConnsPerHost: read %v, want EOF", err)
	}
}

// TestPlainDialFailureAsNetHTTP: a target nobody listens at fails the attempt with net/http's
// message.
func TestPlainDialFailureAsNetHTTP(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	uri := "http://" + ln.Addr().String()
	_ = ln.Close()
	var results []Result
	for _, plain := range []bool{false, true} {
		e := New(Config{})
		if !plain {
			e.client.Transport = e.transport
		}
		results = append(results, e.Do(t.Context(), attemptTo(uri)))
	}
	want := "Http action: request failed: Post: dial tcp " + ln.Addr().String() + ": connect: connection refused"
	if results[1].Message != want || results[0] != results[1] {
		t.Fatalf("result %+v, want the message %q; net/http's %+v", results[1], want, results[0])
	}
}
