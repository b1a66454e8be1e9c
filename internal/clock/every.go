package clock

import (
	"context"
	"time"
)

// Every calls fn every interval on c until ctx is done: interval after Every is called, then
// interval after each call of fn returns (calls never overlap). A receive on wake (nil: never)
// calls fn at once and starts the interval again. Callers that also want a call at the start make
// it before calling Every.
func Every(ctx context.Context, c Clock, interval time.Duration, wake <-chan struct{}, fn func(ctx context.Context)) {
	for {
		t := c.NewTimer(interval)
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
		fn(ctx)
	}
}
