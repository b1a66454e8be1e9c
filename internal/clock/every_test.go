package clock_test

import (
	"context"
	"testing"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/internal/clock"
)

// TestEvery: fn runs once per interval on the fake clock, the interval counted from the end of
// the previous call; a wake runs it at once and restarts the interval; cancelling ctx ends Every.
func TestEvery(t *testing.T) {
	f := clock.NewFake(t0)
	ctx, cancel := context.WithCancel(t.Context())
	calls := make(chan time.Time)
	wake := make(chan struct{})
	ended := make(chan struct{})
	go func() {
		clock.Every(ctx, f, time.Minute, wake, func(context.Context) { calls <- f.Now() })
		close(ended)
	}()
	waitTimer := func() {
		t.Helper()
		select {
		case <-f.TimerCreated():
		case <-time.After(10 * time.Second):
			t.Fatal("Every made no timer")
		}
	}
	next := func(want time.Time) {
		t.Helper()
		select {
		case got := <-calls:
			if !got.Equal(want) {
				t.Fatalf("fn ran at %v, want %v", got, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("fn did not run (want it at %v)", want)
		}
	}
	waitTimer()
	f.Advance(59 * time.Second)
	f.Advance(time.Second)
	next(t0.Add(time.Minute))
	waitTimer()
	f.Advance(30 * time.Second)
	wake <- struct{}{}
	next(t0.Add(90 * time.Second))
	// The interval starts again from the wake: the deadline of the one it cut short (t0+120s)
	// passes without a call.
	waitTimer()
	f.Advance(59 * time.Second)
	f.Advance(time.Second)
	next(t0.Add(150 * time.Second))
	waitTimer()
	cancel()
	select {
	case <-ended:
	case <-time.After(10 * time.Second):
		t.Fatal("Every did not return once ctx was done")
	}
}
