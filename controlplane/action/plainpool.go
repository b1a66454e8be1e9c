package action

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"syscall"
	"time"
)

// The connections of plainTransport: kept per target, looked at before reuse, closed when idle too
// long.

// plainConn is one connection; it counts what it has read so that the transport knows whether the
// target answered anything, and bounds what an answer's head may take.
type plainConn struct {
	net.Conn
	br        *bufio.Reader
	bw        *bufio.Writer
	read      int64 // bytes read in this exchange
	wrote     int64 // bytes written in this exchange
	limit     int64 // bytes left to read; <= 0: the answer's head was too long
	idleSince time.Time
	reused    bool
}

func (c *plainConn) Read(p []byte) (int, error) {
	if c.limit <= 0 {
		return 0, fmt.Errorf("net/http: server response headers exceeded %d bytes; aborted", maxResponseHeader)
	}
	if int64(len(p)) > c.limit {
		p = p[:c.limit]
	}
	n, err := c.Conn.Read(p)
	c.read += int64(n)
	c.limit -= int64(n)
	return n, err
}

func (c *plainConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	c.wrote += int64(n)
	return n, err
}

// canonicalAddr is host:port of an http URL.
func canonicalAddr(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = "80"
	}
	return net.JoinHostPort(u.Hostname(), port)
}

// conn returns an idle connection to addr that its peer has not closed, or a new one.
func (t *plainTransport) conn(ctx context.Context, addr string, fresh bool) (*plainConn, error) {
	if !fresh {
		for {
			t.mu.Lock()
			list := t.idle[addr]
			if len(list) == 0 {
				t.mu.Unlock()
				break
			}
			c := list[len(list)-1]
			list[len(list)-1] = nil
			t.idle[addr] = list[:len(list)-1]
			t.mu.Unlock()
			if open(c.Conn) {
				c.reused = true
				return c, nil
			}
			_ = c.Close()
		}
	}
	nc, err := t.dial(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	c := &plainConn{Conn: nc}
	c.br = bufio.NewReaderSize(c, 4096)
	c.bw = bufio.NewWriterSize(c, 4096)
	return c, nil
}

// open reports whether a connection kept idle is still open: nothing to read, no end of stream.
func open(nc net.Conn) bool {
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return true
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	alive := false
	var b [1]byte
	err = rc.Read(func(fd uintptr) bool {
		n, rerr := recvPeek(fd, b[:])
		alive = n < 0 && (errors.Is(rerr, syscall.EAGAIN) || errors.Is(rerr, syscall.EWOULDBLOCK))
		return true
	})
	return err == nil && alive
}

// recvPeek looks at what a socket has to read without taking it or waiting: n is 0 at the end of
// the stream, -1 with EAGAIN when nothing has come.
func recvPeek(fd uintptr, b []byte) (int, error) {
	n, _, err := syscall.Recvfrom(int(fd), b, syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
	return n, err
}

// put keeps c for the next request to addr, or closes it when enough are kept.
func (t *plainTransport) put(addr string, c *plainConn) {
	maxIdle := t.next.MaxIdleConnsPerHost
	if maxIdle == 0 {
		maxIdle = http.DefaultMaxIdleConnsPerHost
	}
	c.idleSince = time.Now()
	t.mu.Lock()
	if len(t.idle[addr]) >= maxIdle {
		t.mu.Unlock()
		_ = c.Close()
		return
	}
	t.idle[addr] = append(t.idle[addr], c)
	if t.sweep == nil && t.next.IdleConnTimeout > 0 {
		t.sweep = time.AfterFunc(t.next.IdleConnTimeout, t.closeExpired)
	}
	t.mu.Unlock()
}

// closeExpired closes the connections idle for IdleConnTimeout and looks again when the oldest
// left would expire.
func (t *plainTransport) closeExpired() {
	now := time.Now()
	var expired []*plainConn
	t.mu.Lock()
	next := time.Duration(0)
	for addr, list := range t.idle {
		i := 0
		for i < len(list) && now.Sub(list[i].idleSince) >= t.next.IdleConnTimeout {
			expired = append(expired, list[i])
			i++
		}
		if i == len(list) {
			delete(t.idle, addr)
			continue
		}
		t.idle[addr] = append(list[:0:0], list[i:]...)
		if left := t.next.IdleConnTimeout - now.Sub(list[i].idleSince); next == 0 || left < next {
			next = left
		}
	}
	t.sweep = nil
	if next > 0 {
		t.sweep = time.AfterFunc(next, t.closeExpired)
	}
	t.mu.Unlock()
	for _, c := range expired {
		_ = c.Close()
	}
}

// CloseIdleConnections closes the idle connections, its own and next's.
func (t *plainTransport) CloseIdleConnections() {
	t.mu.Lock()
	idle := t.idle
	t.idle = map[string][]*plainConn{}
	if t.sweep != nil {
		t.sweep.Stop()
		t.sweep = nil
	}
	t.mu.Unlock()
	for _, list := range idle {
		for _, c := range list {
			_ = c.Close()
		}
	}
	t.next.CloseIdleConnections()
}
