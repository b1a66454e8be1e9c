package main

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"sync/atomic"
)

// benchSigningSecret signs the jobs of a --signing run.
const benchSigningSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

// startCollector starts an OTLP/HTTP endpoint for --otlp: "ok" answers every export with an
// empty success (protobuf), "hang" holds every request until stop. It returns its base URL.
func startCollector(mode string) (string, func(), error) {
	if mode != "ok" && mode != "hang" {
		return "", nil, fmt.Errorf("--otlp %q: want ok or hang", mode)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	done := make(chan struct{})
	var exports atomic.Int64
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		exports.Add(1)
		if mode == "hang" {
			select {
			case <-r.Context().Done():
			case <-done:
			}
			return
		}
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/x-protobuf")
	})}
	go func() { _ = srv.Serve(ln) }()
	return "http://" + ln.Addr().String(), func() {
		close(done)
		_ = srv.Close()
	}, nil
}
