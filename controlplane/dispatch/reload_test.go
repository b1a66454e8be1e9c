package dispatch_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/dispatch"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"
)

// readCounter is the test's store: it counts the loop's job reads, and holds the first
// JobGetByID until gate is closed.
type readCounter struct {
	store.Driver
	gate    chan struct{}
	held    chan struct{}
	mu      sync.Mutex
	byID    int
	many    int
	manyIDs int
}

func (c *readCounter) JobGetByID(ctx context.Context, p store.JobGetByIDParams) (*store.Job, error) {
	c.mu.Lock()
	c.byID++
	first := c.byID == 1
	c.mu.Unlock()
	if first {
		close(c.held)
		<-c.gate
	}
	return c.Driver.JobGetByID(ctx, p)
}

func (c *readCounter) JobGetMany(ctx context.Context, p store.JobGetManyParams) ([]*store.Job, error) {
	c.mu.Lock()
	c.many++
	c.manyIDs += len(p.IDs)
	c.mu.Unlock()
	return c.Driver.JobGetMany(ctx, p)
}

// TestChangedJobsAreReloadedInBatches: the jobs changed while the loop was busy are reloaded in
// one read (JobGetMany), not one round trip each (after 60,000 PUTs through the replicas of a
// PostgreSQL store the leader was still reading them one by one when they fell due), and each
// then fires once, as changed.
func TestChangedJobsAreReloadedInBatches(t *testing.T) {
	const jobs = 300
	tg := newTarget(t)
	counter := &readCounter{gate: make(chan struct{}), held: make(chan struct{})}
	e := newEnv(t, t0, func(c *dispatch.Config) {
		c.Workers = 64
		counter.Driver = c.Store
		c.Store = counter
	})
	e.start()
	due := t0.Add(time.Minute)
	job := func(i int) wire.JobProperties {
		return wire.JobProperties{StartTime: due.Format(time.RFC3339), Action: httpAction(fmt.Sprintf("%s/job/%d", tg.URL, i))}
	}
	e.changeJob("job-first", job(jobs), "Enabled") // its reload holds the loop
	select {
	case <-counter.held:
	case <-time.After(wait):
		t.Fatal("the loop did not reload the first job")
	}
	for i := range jobs {
		e.changeJob(fmt.Sprintf("job-%03d", i), job(i), "Enabled")
	}
	close(counter.gate) // the loop takes the 300 changes in its next turn
	e.quiet(due.Add(-lookahead))
	e.clock.Set(due)
	seen := map[string]bool{}
	for range jobs + 1 {
		h := tg.next(t)
		if seen[h.Path] {
			t.Fatalf("%s ran twice", h.Path)
		}
		seen[h.Path] = true
	}
	counter.mu.Lock()
	byID, many, manyIDs := counter.byID, counter.many, counter.manyIDs
	counter.mu.Unlock()
	if byID != 1 || many != 1 || manyIDs != jobs {
		t.Fatalf("reads: %d JobGetByID and %d JobGetMany of %d jobs, want 1 and 1 of %d", byID, many, manyIDs, jobs)
	}
}
