package main

import (
	"net"
	"sync"
	"sync/atomic"
)

// limitListener accepts at most n connections open at once: past that, Accept waits for one to
// close and new connections wait in the kernel's backlog, so that idle or slow clients cannot
// take the descriptors the dispatcher needs to reach its targets. (The server's header, read
// and idle timeouts close the connections that hold a slot doing nothing.)
type limitListener struct {
	net.Listener
	sem  chan struct{}
	done chan struct{}
	once sync.Once
	// peak is the most connections open at once (tests).
	peak atomic.Int64
}

func newLimitListener(l net.Listener, n int) *limitListener {
	return &limitListener{Listener: l, sem: make(chan struct{}, n), done: make(chan struct{})}
}

func (l *limitListener) Accept() (net.Conn, error) {
	select {
	case l.sem <- struct{}{}:
	case <-l.done:
		return nil, net.ErrClosed
	}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.sem
		return nil, err
	}
	if open := int64(len(l.sem)); open > l.peak.Load() {
		l.peak.Store(open)
	}
	return &limitConn{Conn: c, release: func() { <-l.sem }}, nil
}

func (l *limitListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return l.Listener.Close()
}

// limitConn gives its slot back when closed (once).
type limitConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}
