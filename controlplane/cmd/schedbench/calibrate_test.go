package main

import (
	"context"
	"strings"
	"testing"
	"time"
)

func TestCalibrateCountsEveryRequestAndRecordsNoDelivery(t *testing.T) {
	s, err := startSink(0)
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	c, err := calibrate(context.Background(), s, 4, 300*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	got, deliveries, bad := s.calibrated, len(s.deliveries), s.bad
	s.mu.Unlock()
	if c.conns != 4 || c.requests == 0 || got != c.requests {
		t.Errorf("calibration %+v, sink counted %d: want 4 connections and every completed request counted by the sink", c, got)
	}
	if deliveries != 0 || bad != 0 {
		t.Errorf("the calibration left %d deliveries and %d bad requests in the sink's record, want none", deliveries, bad)
	}
	if c.elapsed < 300*time.Millisecond {
		t.Errorf("elapsed %s, want at least the 300ms asked", c.elapsed)
	}
	if want := float64(c.requests) / c.elapsed.Seconds(); c.perSecond() != want {
		t.Errorf("perSecond = %f, want %f", c.perSecond(), want)
	}
}

func TestCalibrationRatios(t *testing.T) {
	c := calibration{conns: 64, requests: 40000, elapsed: 2 * time.Second} // 20,000/s
	if got := c.floor(1000); got != 50*time.Millisecond {
		t.Errorf("floor(1000) = %s, want 50ms", got)
	}
	if got := c.ratio(16000); got != "0.80x the ceiling" {
		t.Errorf("ratio(16000) = %q", got)
	}
	if got := c.overFloor(75*time.Millisecond, 1000); got != "1.50x the floor of 50ms" {
		t.Errorf("overFloor(75ms, 1000) = %q", got)
	}
	if !strings.Contains(c.String(), "loopback ceiling 20000 requests/s (40000 requests in 2s from 64 connections; floor for 1,000 at one instant 50ms)") {
		t.Errorf("String = %q", c.String())
	}
	var none calibration
	if none.ratio(100) != "-" || none.overFloor(time.Second, 10) != "-" || none.floor(10) != 0 {
		t.Errorf("without a calibration: ratio %q, overFloor %q, floor %s; want -, -, 0", none.ratio(100), none.overFloor(time.Second, 10), none.floor(10))
	}
}

func TestDaemonConns(t *testing.T) {
	for _, tc := range []struct {
		args string
		want int
	}{
		{"", 64},            // 256 workers, a quarter to one target
		{"--workers 32", 8}, // a quarter of 32
		{"--workers=2", 1},  // at least one
		{"--workers 100 --target-concurrency 200", 100}, // capped by the workers
		{"--pprof-listen=127.0.0.1:6061 -target-concurrency=16", 16},
		{"--target-concurrency 0 --workers 40", 10},
	} {
		got, err := daemonConns(tc.args)
		if err != nil || got != tc.want {
			t.Errorf("daemonConns(%q) = %d, %v; want %d", tc.args, got, err, tc.want)
		}
	}
	for _, bad := range []string{"--workers", "--workers 0", "--target-concurrency=-1", "--workers x"} {
		if _, err := daemonConns(bad); err == nil || !strings.Contains(err.Error(), "--daemon-args") {
			t.Errorf("daemonConns(%q): error %v, want one naming --daemon-args", bad, err)
		}
	}
}
