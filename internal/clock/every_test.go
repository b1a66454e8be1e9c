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

// TestEveryTimerBeforeCall: the next call's timer exists while fn still runs, so a test that
// moves the clock by interval as soon as fn has signalled reaches the next call. fn blocks until
// the test has seen the timer made; made after fn returned, it never is and the test fails.
func TestEveryTimerBeforeCall(t *testing.T) {
	f := clock.NewFake(t0)
	calls := make(chan time.Time)
	release := make(chan struct{})
	go clock.Every(t.Context(), f, time.Minute, nil, func(context.Context) {
		calls <- f.Now()
		<-release
	})
	timer := func() {
		t.Helper()
		select {
		case <-f.TimerCreated():
		case <-time.After(10 * time.Second):
			t.Fatal("no timer made")
		}
	}
	timer()
	f.Advance(time.Minute)
	if got := <-calls; !got.Equal(t0.Add(time.Minute)) {
		t.Fatalf("first call at %v, want %v", got, t0.Add(time.Minute))
	}
	timer() // while fn is blocked
	f.Advance(time.Minute)
	release <- struct{}{}
	select {
	case got := <-calls:
		if !got.Equal(t0.Add(2 * time.Minute)) {
			t.Fatalf("second call at %v, want %v", got, t0.Add(2*time.Minute))
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the second call did not come after the clock moved by the interval")
	}
	close(release)
}
