// Command receiver is the demo's webhook target: it answers every request with 200 and appends one
// JSON line per request (time, method, path, the scheduler's headers, body) to a log file, so the
// demo can show what the scheduler delivered.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"
)

type delivery struct {
	ReceivedAt   time.Time `json:"receivedAt"`
	Method       string    `json:"method"`
	Path         string    `json:"path"`
	ExecutionTag string    `json:"executionTag,omitempty"`
	Expected     string    `json:"expectedExecutionTime,omitempty"`
	JobID        string    `json:"jobId,omitempty"`
	Body         string    `json:"body,omitempty"`
}

func main() {
	listen := flag.String("listen", "127.0.0.1:0", "address to listen on")
	logPath := flag.String("log", "receiver.log", "file to append deliveries to, one JSON line each")
	addrFile := flag.String("address-file", "", "file to write the bound address to")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *listen, *logPath, *addrFile); err != nil {
		slog.Error("receiver", "err", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, listen, logPath, addrFile string) error {
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("open log: %w", err)
	}
	defer func() { _ = f.Close() }()
	var mu sync.Mutex
	enc := json.NewEncoder(f)
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(io.LimitReader(r.Body, 64<<10))
		d := delivery{
			ReceivedAt:   time.Now().UTC(),
			Method:       r.Method,
			Path:         r.URL.Path,
			ExecutionTag: r.Header.Get("x-ms-execution-tag"),
			Expected:     r.Header.Get("x-ms-scheduler-expected-execution-time"),
			JobID:        r.Header.Get("x-ms-scheduler-jobid"),
			Body:         string(body),
		}
		mu.Lock()
		err := enc.Encode(d)
		mu.Unlock()
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusOK)
		_, _ = io.WriteString(w, "received\n")
	})
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	if addrFile != "" {
		if err := os.WriteFile(addrFile+".tmp", []byte(ln.Addr().String()), 0o644); err != nil {
			return fmt.Errorf("address file: %w", err)
		}
		if err := os.Rename(addrFile+".tmp", addrFile); err != nil {
			return fmt.Errorf("address file: %w", err)
		}
	}
	srv := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdownCtx)
	}()
	slog.Info("receiver listening", "address", ln.Addr().String(), "log", logPath)
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve: %w", err)
	}
	return nil
}
