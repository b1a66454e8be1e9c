package clock

import (
	"context"
	"time"
)

// Every calls fn every interval on c until ctx is done: interval after Every is called, then
// interval after each call of fn starts. Calls never overlap: one that takes longer than
// interval is followed at once by the next. A receive on wake (nil: never) calls fn at once and
// starts the interval again. Callers that also want a call at the start make it before calling
// Every.
//
// The next call's timer exists before fn runs, so that whatever fn signals, a test that then
// moves a Fake by interval reaches the next call (a timer made after fn returned could be made
// after the move, and be due one interval later).
func Every(ctx context.Context, c Clock, interval time.Duration, wake <-chan struct{}, fn func(ctx context.Context)) {
	t := c.NewTimer(interval)
	for {
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C():
		case <-wake:
			t.Stop()
		}
		if ctx.Err() != nil {
			return
		}
		t = c.NewTimer(interval)
		fn(ctx)
	}
}
