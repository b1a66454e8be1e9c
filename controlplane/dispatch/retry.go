package dispatch

import (
	"context"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/internal/clock"
)

// changeRetry is how long after a failed read of what a change changed (a job, a collection's
// jobs) the loop handles the change again.
const changeRetry = time.Second

// again posts a change once more to in after changeRetry: reading the job or collection it
// changed failed (the database unreachable a moment, a connection cut). Dropped, the change
// would be lost until the schedule is next loaded in full; the notification and the change feed
// that delivered it do not deliver it twice.
func again[E any](ctx context.Context, clk clock.Clock, in *inbox[E], ev E) {
	t := clk.NewTimer(changeRetry)
	go func() {
		defer t.Stop()
		select {
		case <-t.C():
			in.post(ev)
		case <-ctx.Done():
		}
	}()
}
