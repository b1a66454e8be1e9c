package clock

import (
	"context"
	"time"
)

// Sleep waits d on c, or until ctx is done; it reports whether the whole d passed (false: ctx
// ended first). Retry loops wait with it so that tests move them with a Fake.
func Sleep(ctx context.Context, c Clock, d time.Duration) bool {
	t := c.NewTimer(d)
	select {
	case <-ctx.Done():
		t.Stop()
		return false
	case <-t.C():
		return true
	}
}
