package main

import (
	"io"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"testing"
)

// TestPprofDoesNotServeCmdline: the profiles listener answers 404 for /debug/pprof/cmdline (the
// process's command line) and still serves the profiles.
func TestPprofDoesNotServeCmdline(t *testing.T) {
	addr, stop, err := servePprof("127.0.0.1:0", slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	get := func(path string) (int, string) {
		t.Helper()
		resp, err := http.Get("http://" + addr + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, string(b)
	}
	for _, path := range []string{"/debug/pprof/cmdline", "/debug/pprof/cmdline/", "/debug/pprof/cmdline?debug=1"} {
		code, body := get(path)
		if code != http.StatusNotFound {
			t.Errorf("%s: %d, want 404", path, code)
		}
		if strings.Contains(body, os.Args[0]) {
			t.Errorf("%s: the body holds the command line: %q", path, body)
		}
	}
	if code, body := get("/debug/pprof/goroutine?debug=1"); code != http.StatusOK || !strings.Contains(body, "goroutine profile") {
		t.Errorf("goroutine profile: %d %.100s", code, body)
	}
}
