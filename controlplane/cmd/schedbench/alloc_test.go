package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestParseAllocs(t *testing.T) {
	text := `# HELP go_memstats_mallocs_total Total number of heap objects allocated, both live and gc-ed.
# TYPE go_memstats_mallocs_total counter
go_memstats_mallocs_total 1.234567e+06
go_memstats_alloc_bytes_total 9.87654321e+08
go_memstats_alloc_bytes 1.2e+07
go_memstats_frees_total 1e+06
`
	a, err := parseAllocs(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	if a.mallocs != 1234567 || a.bytes != 987654321 {
		t.Errorf("parseAllocs = %+v, want mallocs 1234567, bytes 987654321 (not alloc_bytes, the live heap)", a)
	}
	b := allocCounters{mallocs: a.mallocs + 7000, bytes: a.bytes + 1000000}
	if got := a.perUnit(b, 1000, "fire"); got != "7 allocations and 1000 B per fire" {
		t.Errorf("perUnit = %q", got)
	}
	for _, bad := range []string{"go_memstats_mallocs_total 12\n", "go_memstats_mallocs_total x\ngo_memstats_alloc_bytes_total 1\n"} {
		if _, err := parseAllocs(strings.NewReader(bad)); err == nil {
			t.Errorf("parseAllocs(%q): no error", bad)
		}
	}
}

// TestReadAllocsTriesAgain: a /metrics that answers 500 (the daemon's count of jobs by state
// timed out) is scraped again; the counters come from the answer that succeeds.
func TestReadAllocsTriesAgain(t *testing.T) {
	var scrapes atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer tok" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		if scrapes.Add(1) == 1 {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		_, _ = io.WriteString(w, "go_memstats_mallocs_total 12\ngo_memstats_alloc_bytes_total 34\n")
	}))
	defer srv.Close()
	a, err := readAllocs(t.Context(), &daemon{endpoint: srv.URL, token: "tok"})
	if err != nil {
		t.Fatal(err)
	}
	if a.mallocs != 12 || a.bytes != 34 || scrapes.Load() != 2 {
		t.Fatalf("readAllocs = %+v after %d scrapes, want mallocs 12, bytes 34 after 2", a, scrapes.Load())
	}
}

// TestNoScrapeInsideAWindow: the scrape of /metrics (which burns CPU in the daemon: every series
// encoded, the jobs counted by state) happens before the CPU is read by a mark that opens a
// window and after it by a mark that closes one. The daemon here is this process, whose
// /metrics burns CPU until its CPU time has moved on by at least two ticks.
func TestNoScrapeInsideAWindow(t *testing.T) {
	self, err := os.FindProcess(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	var entered, left atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start, err := processCPU(os.Getpid())
		if err != nil {
			t.Error(err)
		}
		for now := start; now < start+2*clockTick; {
			if now, err = processCPU(os.Getpid()); err != nil {
				t.Error(err)
				break
			}
		}
		end, _ := processCPU(os.Getpid())
		entered.Store(int64(start))
		left.Store(int64(end))
		_, _ = io.WriteString(w, "go_memstats_mallocs_total 12\ngo_memstats_alloc_bytes_total 34\n")
	}))
	defer srv.Close()
	d := &daemon{cmd: &exec.Cmd{Process: self}, endpoint: srv.URL, token: "tok"}

	opening, err := markCPU(t.Context(), d, false)
	if err != nil {
		t.Fatal(err)
	}
	if opening.daemon < time.Duration(left.Load()) {
		t.Errorf("opening mark: daemon CPU %s read before the scrape ended (%s): the scrape falls inside the window", opening.daemon, time.Duration(left.Load()))
	}
	closing, err := markCPU(t.Context(), d, true)
	if err != nil {
		t.Fatal(err)
	}
	if closing.daemon > time.Duration(entered.Load()) {
		t.Errorf("closing mark: daemon CPU %s read after the scrape began (%s): the scrape falls inside the window", closing.daemon, time.Duration(entered.Load()))
	}
	if closing.allocs.mallocs != 12 || opening.allocs.mallocs != 12 {
		t.Errorf("allocations %v and %v, want 12 from each scrape", opening.allocs.mallocs, closing.allocs.mallocs)
	}
}
