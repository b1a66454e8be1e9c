package action

import (
	"bufio"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/net/http/httpguts"
)

// plainTransport makes the attempts' plain-HTTP requests itself, HTTP/1.1 over kept-alive TCP
// connections, in the goroutine that asks: net/http's Transport hands each request to two
// goroutines of its connection (one writes, one reads) and back, which cost the daemon as much CPU
// per fire as the request's own system calls. Everything it does not take on goes to next, the
// daemon's http.Transport, unchanged: https, a proxy, a header that changes how the connection is
// used (Connection, Upgrade, Expect, Transfer-Encoding, TE, Trailer, Host, Accept-Encoding, Range,
// Content-Length), a body of unknown length, a header net/http would refuse. On the wire a request
// is what net/http writes (the same request line and headers, Accept-Encoding: gzip and a
// transparent gunzip included), and what it answers is read by net/http's own http.ReadResponse.
// The http.Client above it still follows redirects.
//
// Connections: an idle one is taken most recent first, and only after a non-blocking look that the
// target has not closed it meanwhile (net/http keeps a read pending on each idle connection for
// that); one the target closed as the request went out is dialled again when the request may be
// repeated (what net/http repeats: nothing was written, or the method is idempotent). At most
// next.MaxIdleConnsPerHost stay idle per host, each at most next.IdleConnTimeout.
type plainTransport struct {
	next *http.Transport
	dial func(ctx context.Context, network, addr string) (net.Conn, error)

	mu    sync.Mutex
	idle  map[string][]*plainConn // by host:port, the most recently used last
	sweep *time.Timer             // closes the connections idle too long; nil when none is idle
}

// maxResponseHeader bounds the status lines and headers of an answer, interim answers (1xx)
// included (net/http's default and rule).
const maxResponseHeader = 10 << 20

func newPlainTransport(next *http.Transport) *plainTransport {
	dial := next.DialContext
	if dial == nil {
		dial = (&net.Dialer{}).DialContext
	}
	return &plainTransport{next: next, dial: dial, idle: map[string][]*plainConn{}}
}

// plainExcluded are the headers with which a request goes to net/http's Transport.
var plainExcluded = [...]string{"Connection", "Upgrade", "Expect", "Transfer-Encoding", "Te", "Trailer",
	"Host", "Accept-Encoding", "Range", "Content-Length", "Proxy-Connection", "Keep-Alive"}

// takes reports whether the transport makes req itself, with the request-URI it writes.
func (t *plainTransport) takes(req *http.Request) (string, bool) {
	if req.URL == nil || req.URL.Scheme != "http" || req.URL.Host == "" || req.URL.User != nil ||
		req.Method == http.MethodConnect || req.Close || t.next.DisableKeepAlives ||
		t.next.ResponseHeaderTimeout != 0 || req.Trailer != nil || len(req.TransferEncoding) != 0 {
		return "", false
	}
	if req.Body != nil && req.Body != http.NoBody && (req.ContentLength <= 0 || req.GetBody == nil) {
		return "", false
	}
	// The method, host, request-URI and headers net/http writes as they are (its own checks).
	if !httpguts.ValidHeaderFieldName(req.Method) || !writtenAsIs(req.Host) || !writtenAsIs(req.URL.Host) {
		return "", false
	}
	ruri := req.URL.RequestURI()
	if strings.ContainsFunc(ruri, func(r rune) bool { return r < ' ' || r == 0x7f }) {
		return "", false
	}
	for _, k := range plainExcluded {
		if _, ok := req.Header[k]; ok {
			return "", false
		}
	}
	for k, vs := range req.Header {
		if !httpguts.ValidHeaderFieldName(k) {
			return "", false
		}
		for _, v := range vs {
			if !httpguts.ValidHeaderFieldValue(v) {
				return "", false
			}
		}
	}
	if t.next.Proxy != nil {
		if p, err := t.next.Proxy(req); err != nil || p != nil {
			return "", false
		}
	}
	return ruri, true
}

// writtenAsIs reports whether a host[:port] is one net/http writes unchanged: valid (ASCII, so no
// Punycode to apply), without a zone or an empty port to drop.
func writtenAsIs(host string) bool {
	return httpguts.ValidHostHeader(host) && !strings.Contains(host, "%") && !strings.HasSuffix(host, ":")
}

// RoundTrip implements http.RoundTripper.
func (t *plainTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	ruri, ok := t.takes(req)
	if !ok {
		return t.next.RoundTrip(req)
	}
	ctx := req.Context()
	addr := canonicalAddr(req.URL)
	body := req.Body
	for fresh := false; ; fresh = true {
		c, err := t.conn(ctx, addr, fresh)
		if err != nil {
			closeBody(body)
			return nil, err
		}
		resp, err := t.exchange(ctx, c, req, ruri, body, addr)
		if err == nil {
			return resp, nil
		}
		_ = c.Close()
		// The target closed a kept connection as the request went out: dial again when the
		// request may be repeated (net/http's rule).
		if !fresh && c.reused && c.read == 0 && ctx.Err() == nil && (c.wrote == 0 || replayable(req)) {
			if body != nil && body != http.NoBody {
				closeBody(body)
				if body, err = req.GetBody(); err != nil {
					return nil, err
				}
			}
			continue
		}
		closeBody(body)
		return nil, err
	}
}

func closeBody(body io.ReadCloser) {
	if body != nil {
		_ = body.Close()
	}
}

// replayable is net/http's rule for repeating a request on a new connection.
func replayable(req *http.Request) bool {
	switch req.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodTrace:
		return true
	}
	_, a := req.Header["Idempotency-Key"]
	_, b := req.Header["X-Idempotency-Key"]
	return a || b
}

// exchange writes req (its request-URI ruri, with body) on c and reads the head of its answer.
// The body is closed once written.
func (t *plainTransport) exchange(ctx context.Context, c *plainConn, req *http.Request, ruri string, body io.ReadCloser,
	addr string) (*http.Response, error) {
	c.read, c.wrote = 0, 0
	d, _ := ctx.Deadline()
	if err := c.SetDeadline(d); err != nil {
		return nil, err
	}
	var stop func() bool
	if ctx.Done() != nil {
		stop = context.AfterFunc(ctx, func() { _ = c.SetDeadline(time.Unix(1, 0)) })
	}
	fail := func(err error) (*http.Response, error) {
		if stop != nil {
			stop()
		}
		if ctxErr := ctx.Err(); ctxErr != nil {
			err = ctxErr
		}
		return nil, err
	}
	gz := !t.next.DisableCompression && req.Method != http.MethodHead
	if err := writeRequest(c.bw, req, ruri, body, gz); err != nil {
		return fail(err)
	}
	if err := c.bw.Flush(); err != nil {
		return fail(err)
	}
	closeBody(body)
	c.limit = maxResponseHeader
	var resp *http.Response
	for {
		var err error
		if resp, err = http.ReadResponse(c.br, req); err != nil {
			// net/http's words: the end of the stream before any answer is "EOF".
			if c.read == 0 && errors.Is(err, io.ErrUnexpectedEOF) {
				return fail(io.EOF)
			}
			return fail(fmt.Errorf("net/http: HTTP/1.x transport connection broken: %w", err))
		}
		if resp.StatusCode < 100 || resp.StatusCode >= 200 || resp.StatusCode == http.StatusSwitchingProtocols {
			break
		}
		// An interim answer (100 Continue, 103 Early Hints): the final one follows.
		_ = resp.Body.Close()
	}
	c.limit = math.MaxInt64 // the head is read: the body has its own framing
	if resp.StatusCode == http.StatusSwitchingProtocols {
		_ = resp.Body.Close()
		return fail(errors.New("the target switched protocols"))
	}
	reuse := !resp.Close && (resp.ContentLength >= 0 || len(resp.TransferEncoding) > 0)
	if resp.Body == http.NoBody {
		// Nothing to read: the connection is free now.
		stopped := stop == nil || stop()
		if reuse && stopped && c.br.Buffered() == 0 {
			t.put(addr, c)
		} else {
			_ = c.Close()
		}
		return resp, nil
	}
	pb := &plainBody{t: t, c: c, addr: addr, rc: resp.Body, stop: stop, reuse: reuse}
	resp.Body = pb
	if gz && resp.Header.Get("Content-Encoding") == "gzip" {
		resp.Header.Del("Content-Encoding")
		resp.Header.Del("Content-Length")
		resp.ContentLength = -1
		resp.Uncompressed = true
		resp.Body = &gunzipBody{body: pb}
	}
	return resp, nil
}

// writeRequest writes req's head and body as net/http's Transport does for HTTP/1.1.
func writeRequest(w *bufio.Writer, req *http.Request, ruri string, body io.Reader, gz bool) error {
	host := req.Host
	if host == "" {
		host = req.URL.Host
	}
	_, _ = w.WriteString(req.Method)
	_ = w.WriteByte(' ')
	_, _ = w.WriteString(ruri)
	_, _ = w.WriteString(" HTTP/1.1\r\nHost: ")
	_, _ = w.WriteString(host)
	_, _ = w.WriteString("\r\n")
	ua := "Go-http-client/1.1"
	if v, ok := req.Header["User-Agent"]; ok {
		ua = ""
		if len(v) > 0 {
			ua = strings.Trim(v[0], " \t")
		}
	}
	if ua != "" {
		_, _ = w.WriteString("User-Agent: ")
		_, _ = w.WriteString(ua)
		_, _ = w.WriteString("\r\n")
	}
	hasBody := body != nil && body != http.NoBody
	switch {
	case hasBody:
		var n [20]byte
		_, _ = w.WriteString("Content-Length: ")
		_, _ = w.Write(strconv.AppendInt(n[:0], req.ContentLength, 10))
		_, _ = w.WriteString("\r\n")
	case req.Method == http.MethodPost || req.Method == http.MethodPut || req.Method == http.MethodPatch:
		_, _ = w.WriteString("Content-Length: 0\r\n")
	}
	writeHeader(w, req.Header)
	if gz {
		_, _ = w.WriteString("Accept-Encoding: gzip\r\n")
	}
	if _, err := w.WriteString("\r\n"); err != nil {
		return err
	}
	if hasBody {
		n, err := io.Copy(w, body)
		if err != nil {
			return err
		}
		if n != req.ContentLength {
			return fmt.Errorf("http: ContentLength=%d with Body length %d", req.ContentLength, n)
		}
	}
	return nil
}

// writeHeader writes h as net/http does (keys sorted, values trimmed), but for User-Agent, which
// writeRequest writes itself. takes has made sure no value has a line break.
func writeHeader(w *bufio.Writer, h http.Header) {
	var stack [24]string
	keys := stack[:0]
	for k := range h {
		if k != "User-Agent" {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		for _, v := range h[k] {
			_, _ = w.WriteString(k)
			_, _ = w.WriteString(": ")
			_, _ = w.WriteString(strings.Trim(v, " \t"))
			_, _ = w.WriteString("\r\n")
		}
	}
}

// plainBody is an answer's body: read to its end on a connection that stays open, it gives the
// connection back for the next request; closed before, it closes the connection.
type plainBody struct {
	t     *plainTransport
	c     *plainConn
	addr  string
	rc    io.ReadCloser
	stop  func() bool
	reuse bool
	done  bool
}

func (b *plainBody) Read(p []byte) (int, error) {
	if b.done {
		return 0, io.EOF
	}
	n, err := b.rc.Read(p)
	if err == io.EOF {
		b.finish(true)
	} else if err != nil {
		b.finish(false)
	}
	return n, err
}

func (b *plainBody) Close() error {
	if !b.done {
		// Whatever is left of the body is not read: the connection cannot carry another request.
		b.finish(false)
	}
	return nil
}

func (b *plainBody) finish(atEOF bool) {
	b.done = true
	_ = b.rc.Close()
	stopped := b.stop == nil || b.stop()
	if atEOF && b.reuse && stopped && b.c.br.Buffered() == 0 {
		b.t.put(b.addr, b.c)
		return
	}
	_ = b.c.Close()
}

// gunzipBody decompresses a gzip answer as it is read (net/http's transparent gunzip).
type gunzipBody struct {
	body *plainBody
	zr   *gzip.Reader
	err  error
}

func (g *gunzipBody) Read(p []byte) (int, error) {
	if g.err != nil {
		return 0, g.err
	}
	if g.zr == nil {
		zr, err := gzip.NewReader(g.body)
		if err != nil {
			g.err = err
			return 0, err
		}
		g.zr = zr
	}
	return g.zr.Read(p)
}

func (g *gunzipBody) Close() error { return g.body.Close() }
