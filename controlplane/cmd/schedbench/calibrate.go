package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// calibration is the loopback ceiling measured in the run: plain HTTP POSTs to the sink, from as
// many keep-alive connections as the daemon opens to it, for a fixed time.
type calibration struct {
	conns    int
	requests int
	elapsed  time.Duration
}

// perSecond is the ceiling in requests per second (0 when nothing was measured).
func (c calibration) perSecond() float64 {
	if c.elapsed <= 0 {
		return 0
	}
	return float64(c.requests) / c.elapsed.Seconds()
}

// floor is the least time n requests can take at the ceiling: n / ceiling.
func (c calibration) floor(n int) time.Duration {
	r := c.perSecond()
	if r == 0 {
		return 0
	}
	return time.Duration(float64(n) / r * float64(time.Second))
}

func (c calibration) String() string {
	return fmt.Sprintf("loopback ceiling %.0f requests/s (%d requests in %s from %d connections; floor for 1,000 at one instant %s)",
		c.perSecond(), c.requests, c.elapsed.Round(time.Millisecond), c.conns, c.floor(1000).Round(100*time.Microsecond))
}

// ratio states rate against the ceiling ("-" without a calibration).
func (c calibration) ratio(rate float64) string {
	if c.perSecond() == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2fx the ceiling", rate/c.perSecond())
}

// overFloor states how long n requests took against the floor for n ("-" without a calibration).
func (c calibration) overFloor(took time.Duration, n int) string {
	f := c.floor(n)
	if f == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2fx the floor of %s", float64(took)/float64(f), f.Round(100*time.Microsecond))
}

// calibrate sends POSTs shaped like the daemon's (the same body and expected-time header) to the
// sink's calibration path from conns connections, each one request after the other, for dur.
func calibrate(ctx context.Context, s *sink, conns int, dur time.Duration) (calibration, error) {
	tr := &http.Transport{MaxIdleConns: conns, MaxIdleConnsPerHost: conns, MaxConnsPerHost: conns, IdleConnTimeout: time.Minute}
	defer tr.CloseIdleConnections()
	hc := &http.Client{Transport: tr, Timeout: 30 * time.Second}
	url := strings.TrimSuffix(s.url, "/fire") + calibratePath
	var done atomic.Int64
	var firstErr error
	var errOnce sync.Once
	var wg sync.WaitGroup
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	start := time.Now()
	end := start.Add(dur)
	for range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(end) && ctx.Err() == nil {
				req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader("bench"))
				if err != nil {
					errOnce.Do(func() { firstErr = err })
					return
				}
				req.Header.Set("x-ms-scheduler-expected-execution-time", time.Now().UTC().Format(time.RFC3339))
				resp, err := hc.Do(req)
				if err != nil {
					errOnce.Do(func() { firstErr = fmt.Errorf("calibration request: %w", err) })
					cancel()
					return
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				_ = resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					errOnce.Do(func() { firstErr = fmt.Errorf("calibration request: status %d", resp.StatusCode) })
					cancel()
					return
				}
				done.Add(1)
			}
		}()
	}
	wg.Wait()
	c := calibration{conns: conns, requests: int(done.Load()), elapsed: time.Since(start)}
	if firstErr != nil {
		return c, firstErr
	}
	return c, ctx.Err()
}

// daemonConns is how many connections one daemon opens to one target at most: its --workers
// (256 unless set), capped by --target-concurrency (0 or unset: a quarter of --workers).
func daemonConns(daemonArgs string) (int, error) {
	workers, target := 256, 0
	f := strings.Fields(daemonArgs)
	for i := 0; i < len(f); i++ {
		name, val, ok := strings.Cut(strings.TrimLeft(f[i], "-"), "=")
		if name != "workers" && name != "target-concurrency" {
			continue
		}
		if !strings.HasPrefix(f[i], "-") {
			continue
		}
		if !ok {
			if i+1 >= len(f) {
				return 0, fmt.Errorf("--daemon-args: %s without a value", f[i])
			}
			i++
			val = f[i]
		}
		n, err := strconv.Atoi(val)
		if err != nil || n < 0 || (name == "workers" && n == 0) {
			return 0, fmt.Errorf("--daemon-args: --%s %q: want a positive integer", name, val)
		}
		if name == "workers" {
			workers = n
		} else {
			target = n
		}
	}
	if target == 0 {
		target = max(1, workers/4)
	}
	return min(workers, target), nil
}
