package ui

import (
	"context"
	"fmt"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/jobdef"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/jobstate"
)

// waiting is an occurrence the BufferOne overlap policy keeps waiting (buffered) for the end of
// its job's unfinished execution: when it was due and the tag of the execution it waits for
// ("" when none is unfinished: it is being released).
type waiting struct {
	Scheduled time.Time // in the job's zone
	Running   string
}

// waitingPage bounds the executions of a job read for its waiting occurrence: a BufferOne job
// has few (the unfinished ones and the one waiting; a backfill's wait too).
const waitingPage = 64

// waitingOf reads the occurrence of a BufferOne job waiting for its unfinished execution (nil:
// none, or the job's policy is another: nothing of it ever waits).
func (s *Server) waitingOf(ctx context.Context, j *store.Job, loc *time.Location) (*waiting, error) {
	if p, _ := jobdef.Canonical(j.Properties.Overlap, jobstate.OverlapPolicies); p != jobstate.OverlapBufferOne {
		return nil, nil
	}
	xs, err := s.store.ExecutionListUnfinished(ctx, store.ExecutionListUnfinishedParams{JobID: j.ID, Limit: waitingPage})
	if err != nil {
		return nil, fmt.Errorf("waiting occurrence: %w", err)
	}
	var (
		w       *waiting
		running string
	)
	for _, x := range xs {
		switch {
		case !x.DueAt.Equal(store.BufferedDueAt):
			if running == "" {
				running = x.Tag
			}
		case !x.Backfill && w == nil:
			w = &waiting{Scheduled: x.Scheduled.In(loc)}
		}
	}
	if w != nil {
		w.Running = running
	}
	return w, nil
}
