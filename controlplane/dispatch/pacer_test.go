package dispatch

import (
	"context"
	"testing"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/internal/clock"
)

// TestPurgeWaitsAsLongAsEachStatementTook: after a purge statement that took 40 ms (from the
// purge's start), the purge waits 40 ms before its next one; a statement that took no time is
// not waited for.
func TestPurgeWaitsAsLongAsEachStatementTook(t *testing.T) {
	start := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	c := clock.NewFake(start)
	p := &pacer{clock: c, last: start}
	c.Advance(40 * time.Millisecond) // the first statement
	done := make(chan error, 1)
	go func() { done <- p.pause(context.Background()) }()
	select {
	case <-c.TimerCreated():
	case <-time.After(10 * time.Second):
		t.Fatal("the purge did not wait after its statement")
	}
	c.Advance(39 * time.Millisecond)
	select {
	case err := <-done:
		t.Fatalf("the purge went on after 39 ms of a 40 ms statement (err %v)", err)
	default:
	}
	c.Advance(time.Millisecond)
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the purge still waits 40 ms after a 40 ms statement")
	}
	if !p.last.Equal(start.Add(80 * time.Millisecond)) {
		t.Fatalf("the next statement is timed from %s, want the end of the wait (%s)", p.last, start.Add(80*time.Millisecond))
	}
	// A statement that took no (fake) time: no wait, no timer.
	if err := p.pause(context.Background()); err != nil {
		t.Fatal(err)
	}
}
