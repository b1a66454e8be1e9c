package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// allocCounters are the Go runtime's cumulative allocation counters of a daemon, read from its
// /metrics (go_memstats_mallocs_total, go_memstats_alloc_bytes_total): unlike times, they do not
// depend on how busy the machine is.
type allocCounters struct {
	mallocs, bytes float64
}

// readAllocs scrapes d's /metrics with the admin token. A scrape that fails is tried again, up to
// scrapeTries times 5 s apart: on a loaded machine the daemon's count of jobs by state (a scan
// of the jobs table, 5 s at most) can time out with a million jobs, and /metrics answers 500.
func readAllocs(ctx context.Context, d *daemon) (allocCounters, error) {
	var err error
	for try := 1; ; try++ {
		var a allocCounters
		if a, err = readAllocsOnce(ctx, d); err == nil || try == scrapeTries {
			return a, err
		}
		select {
		case <-ctx.Done():
			return allocCounters{}, err
		case <-time.After(5 * time.Second):
		}
	}
}

const scrapeTries = 6

func readAllocsOnce(ctx context.Context, d *daemon) (allocCounters, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, d.endpoint+"/metrics", nil)
	if err != nil {
		return allocCounters{}, err
	}
	req.Header.Set("Authorization", "Bearer "+d.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return allocCounters{}, fmt.Errorf("metrics of %s: %w", d.endpoint, err)
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return allocCounters{}, fmt.Errorf("metrics of %s: status %d", d.endpoint, resp.StatusCode)
	}
	return parseAllocs(resp.Body)
}

// parseAllocs reads the two counters from the Prometheus text format.
func parseAllocs(r io.Reader) (allocCounters, error) {
	var a allocCounters
	var seen int
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		name, val, ok := strings.Cut(sc.Text(), " ")
		var dst *float64
		switch {
		case !ok:
			continue
		case name == "go_memstats_mallocs_total":
			dst = &a.mallocs
		case name == "go_memstats_alloc_bytes_total":
			dst = &a.bytes
		default:
			continue
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(val), 64)
		if err != nil {
			return allocCounters{}, fmt.Errorf("metrics: %s %q: %w", name, val, err)
		}
		*dst = v
		seen++
	}
	if err := sc.Err(); err != nil {
		return allocCounters{}, fmt.Errorf("metrics: %w", err)
	}
	if seen != 2 {
		return allocCounters{}, fmt.Errorf("metrics: go_memstats_mallocs_total and go_memstats_alloc_bytes_total: found %d of the 2", seen)
	}
	return a, nil
}

// perUnit describes the allocations from a to b per unit of work (n units named what).
func (a allocCounters) perUnit(b allocCounters, n int, what string) string {
	if n == 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f allocations and %.0f B per %s", (b.mallocs-a.mallocs)/float64(n), (b.bytes-a.bytes)/float64(n), what)
}
