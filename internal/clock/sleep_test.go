package clock_test

import (
	"context"
	"testing"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/internal/clock"
)

// TestSleep: Sleep returns true once the fake clock has moved by d (not before: a move one
// nanosecond short leaves it waiting), and false at once when ctx ends first.
func TestSleep(t *testing.T) {
	f := clock.NewFake(t0)
	done := make(chan bool, 1)
	go func() { done <- clock.Sleep(t.Context(), f, time.Second) }()
	select {
	case <-f.TimerCreated():
	case <-time.After(10 * time.Second):
		t.Fatal("Sleep made no timer")
	}
	f.Advance(time.Second - time.Nanosecond)
	select {
	case got := <-done:
		t.Fatalf("Sleep returned %v before its duration passed", got)
	default:
	}
	f.Advance(time.Nanosecond)
	select {
	case got := <-done:
		if !got {
			t.Fatal("Sleep = false after its duration passed, want true")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Sleep did not return after its duration passed")
	}

	ctx, cancel := context.WithCancel(t.Context())
	go func() { done <- clock.Sleep(ctx, f, time.Hour) }()
	<-f.TimerCreated()
	cancel()
	select {
	case got := <-done:
		if got {
			t.Fatal("Sleep = true after ctx ended, want false")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Sleep did not return after ctx ended")
	}
}
