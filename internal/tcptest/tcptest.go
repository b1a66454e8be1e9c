// Package tcptest serves raw TCP on loopback for tests, as net/http/httptest does HTTP: each
// accepted connection goes to a handler in its own goroutine, and when the test ends the listener
// and every connection still open are closed and the handlers waited for.
package tcptest

import (
	"net"
	"sync"
	"testing"
)

// Server is a loopback listener whose connections a handler serves.
type Server struct {
	ln   net.Listener
	mu   sync.Mutex
	open []net.Conn
	wg   sync.WaitGroup
}

// Serve listens on 127.0.0.1 and hands each connection to handle until the test ends.
func Serve(t testing.TB, handle func(net.Conn)) *Server {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{ln: ln}
	t.Cleanup(func() {
		_ = ln.Close()
		s.mu.Lock()
		for _, c := range s.open {
			_ = c.Close()
		}
		s.mu.Unlock()
		s.wg.Wait()
	})
	s.wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.Track(c)
			s.wg.Go(func() { handle(c) })
		}
	})
	return s
}

// Addr is the server's host:port.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Track closes c when the test ends (a connection a handler opened itself).
func (s *Server) Track(c net.Conn) {
	s.mu.Lock()
	s.open = append(s.open, c)
	s.mu.Unlock()
}

// Go runs f beside the handlers; the test's end waits for it.
func (s *Server) Go(f func()) { s.wg.Go(f) }
