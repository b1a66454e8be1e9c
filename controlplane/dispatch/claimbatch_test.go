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

// claimCounter is the test's store: it counts the claim transactions and the claims in them.
type claimCounter struct {
	store.Driver
	mu       sync.Mutex
	txs, due int
}

func (c *claimCounter) ExecutionClaimMany(ctx context.Context, p store.ExecutionClaimManyParams) ([]store.ExecutionClaimResult, error) {
	c.mu.Lock()
	c.txs++
	c.due += len(p.Claims)
	c.mu.Unlock()
	return c.Driver.ExecutionClaimMany(ctx, p)
}

// TestABacklogIsClaimedInBatches: 600 occurrences due together, more than the workers and the
// target can take at once, all run, each once, claimed as room frees in batches of at least a
// quarter of BatchSize on average. (The rule that keeps batches whole is TestABacklogWaitsForARefill;
// how many transactions a burst takes without it depends on timing: 59 here, against 30–32 with
// it.)
func TestABacklogIsClaimedInBatches(t *testing.T) {
	const jobs, batch = 600, 32
	tg := newTarget(t)
	counter := &claimCounter{}
	e := newEnv(t, t0, func(c *dispatch.Config) {
		c.Workers, c.TargetConcurrency, c.BatchSize, c.MisfireThreshold = 8, 8, batch, time.Hour
		counter.Driver = c.Store
		c.Store = counter
	})
	due := t0.Add(time.Minute)
	for i := range jobs {
		p := wire.JobProperties{StartTime: due.Format(time.RFC3339), Action: httpAction(fmt.Sprintf("%s/job/%d", tg.URL, i))}
		e.putJob(fmt.Sprintf("job-%03d", i), p, "Enabled")
	}
	e.start()
	e.clock.Set(due)
	seen := map[string]bool{}
	for range jobs {
		h := tg.next(t)
		if seen[h.Path] {
			t.Fatalf("%s ran twice", h.Path)
		}
		seen[h.Path] = true
	}
	for range jobs {
		if r := e.record(); !r.Finished {
			t.Fatalf("record of execution %d did not finish it", r.ExecutionID)
		}
	}
	counter.mu.Lock()
	txs, claimed := counter.txs, counter.due
	counter.mu.Unlock()
	if claimed != jobs {
		t.Fatalf("claimed %d occurrences, want %d", claimed, jobs)
	}
	if most := jobs / (batch / 4); txs > most {
		t.Fatalf("%d claim transactions for %d occurrences (%.1f each), want at most %d", txs, jobs, float64(jobs)/float64(txs), most)
	}
	t.Logf("%d claim transactions for %d occurrences", txs, jobs)
}
