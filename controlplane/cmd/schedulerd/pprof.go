package main

import (
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"time"
)

// servePprof serves Go's runtime profiles (/debug/pprof/) on their own listener, apart from the
// API and without its tokens: it is off unless --pprof-listen is given, and belongs on loopback.
// It does not serve /debug/pprof/cmdline (404): the command line is nobody's business. It returns
// the address it listens on and a function that closes it.
func servePprof(addr string, log *slog.Logger) (string, func(), error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", nil, fmt.Errorf("pprof listen: %w", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/cmdline", http.NotFound)
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	bound := ln.Addr().String()
	log.Warn("serving runtime profiles: keep this address private", "pprof", "http://"+bound+"/debug/pprof/")
	return bound, func() { _ = srv.Close() }, nil
}
