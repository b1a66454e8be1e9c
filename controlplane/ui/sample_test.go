package ui

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/schedulerhq/terraform-provider-scheduler/internal/clock"
)

// TestRunSamplesEveryMinute: Run samples the lateness histogram at once, then every sampleEvery
// on the clock, and stops with its context. It waits for each sample's signal (the next call's
// timer exists before a sample is taken: clock.Every), then moves the clock.
func TestRunSamplesEveryMinute(t *testing.T) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(prometheus.NewHistogram(prometheus.HistogramOpts{Name: latenessMetric, Buckets: []float64{1}}))
	f := clock.NewFake(t0)
	s := &Server{clock: f, late: &lateness{gatherer: reg}}
	s.late.sampled.Init()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		s.Run(ctx)
		close(done)
	}()
	samples := func() []time.Time {
		s.late.mu.Lock()
		defer s.late.mu.Unlock()
		out := make([]time.Time, len(s.late.ring))
		for i, h := range s.late.ring {
			out[i] = h.at
		}
		return out
	}
	sampledAt := func(want time.Time) {
		t.Helper()
		got, err := s.late.sampled.Wait(10*time.Second, func(time.Time) bool { return true })
		if err != nil {
			t.Fatal(err)
		}
		if !got.Equal(want) {
			t.Fatalf("sampled at %v, want %v", got, want)
		}
	}
	sampledAt(t0)
	select { // the first interval's timer
	case <-f.TimerCreated():
	case <-time.After(10 * time.Second):
		t.Fatal("Run made no timer")
	}
	if got := samples(); len(got) != 1 || !got[0].Equal(t0) {
		t.Fatalf("samples at start %v, want [%v]", got, t0)
	}
	f.Advance(sampleEvery - time.Second)
	f.Advance(time.Second)
	sampledAt(t0.Add(sampleEvery))
	f.Advance(sampleEvery)
	sampledAt(t0.Add(2 * sampleEvery))
	if got := samples(); len(got) != 3 || !got[1].Equal(t0.Add(sampleEvery)) || !got[2].Equal(t0.Add(2*sampleEvery)) {
		t.Fatalf("samples %v, want at t0, t0+1m, t0+2m", got)
	}
	cancel()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not stop with its context")
	}
}
