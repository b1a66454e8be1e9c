package main

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/internal/client"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"
)

func collectionID(i int) client.CollectionID {
	return client.CollectionID{Subscription: "bench", ResourceGroup: "bench", Name: fmt.Sprintf("c%04d", i)}
}

func jobID(o options, i int) client.JobID {
	return client.JobID{CollectionID: collectionID(i / o.perColl), Name: fmt.Sprintf("j%07d", i)}
}

// createJobs creates the collections, then the jobs with o.putWorkers concurrent clients, and
// returns how many jobs it created and how long the job PUTs took.
func createJobs(ctx context.Context, o options, d *daemon, sinkURL string) (int, time.Duration, error) {
	collections := (o.jobs + o.perColl - 1) / o.perColl
	maxJobs := o.perColl
	for c := 0; c < collections; c++ {
		def := &wire.JobCollectionDefinition{
			Location: "local",
			Properties: &wire.JobCollectionProperties{
				Sku:   &wire.Sku{Name: "P20Premium"},
				State: "Enabled",
				Quota: &wire.JobCollectionQuota{MaxJobCount: &maxJobs},
			},
		}
		if _, err := d.client.CollectionPut(ctx, collectionID(c), def); err != nil {
			return 0, 0, fmt.Errorf("create collection %d: %w", c, err)
		}
	}
	base := cycleBase(o, time.Now())
	var next atomic.Int64
	var firstErr error
	var errOnce sync.Once
	var wg sync.WaitGroup
	start := time.Now()
	for w := 0; w < o.putWorkers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= o.jobs || ctx.Err() != nil {
					return
				}
				def := jobDefinition(o, i, base, sinkURL)
				if _, err := d.clientFor(i).JobPut(ctx, jobID(o, i), def); err != nil {
					errOnce.Do(func() { firstErr = fmt.Errorf("create job %d: %w", i, err) })
					return
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	if firstErr != nil {
		return 0, 0, firstErr
	}
	return o.jobs, elapsed, ctx.Err()
}

// cycleBase is the start of the cycle (a multiple of the period since the zero time) an hour or
// more before now: every job starts there plus its offset, so its first execution is the first
// candidate at or after its creation and nothing runs late on creation; the observed cycles
// start at later multiples of the period.
func cycleBase(o options, now time.Time) time.Time {
	p := o.period()
	cycles := int64((time.Hour + p - 1) / p)
	return now.UTC().Truncate(p).Add(-time.Duration(cycles) * p)
}

// jobDefinition is job i: it recurs every period (Minute, its interval the period in minutes),
// starting at base plus i mod spread seconds, so spread/1s due instants of each cycle share the
// jobs evenly.
func jobDefinition(o options, i int, base time.Time, sinkURL string) *wire.JobDefinition {
	act := &wire.JobAction{Type: "Http", Request: &wire.HTTPRequest{URI: sinkURL, Method: "POST", Body: "bench"}}
	if o.jobAction != nil {
		act = o.jobAction()
	} else if o.signing {
		act.Request.Signing = &wire.HTTPSigning{Secret: benchSigningSecret}
	}
	act.RetryPolicy = &wire.RetryPolicy{RetryType: "None"}
	interval := int(o.period() / time.Minute)
	spread := int(o.spread / time.Second)
	return &wire.JobDefinition{Properties: &wire.JobProperties{
		StartTime:  base.Add(time.Duration(i%spread) * time.Second).Format(time.RFC3339),
		Action:     act,
		Recurrence: &wire.JobRecurrence{Frequency: "Minute", Interval: &interval},
		State:      "Enabled",
	}}
}

// checkDurable reads a sample of jobs back through the API: each must count the observed cycles
// in its status and have as many history entries.
// historyPage is how many history entries checkDurable reads of a job (the API's page).
const historyPage = 100

func checkDurable(ctx context.Context, d *daemon, o options, created int) error {
	step := max(1, created/20)
	for i := 0; i < created; i += step {
		id := jobID(o, i)
		job, err := d.client.JobGet(ctx, id)
		if err != nil {
			return fmt.Errorf("read back %s: %w", id.Name, err)
		}
		st := job.Properties.Status
		if st == nil || st.ExecutionCount == nil || *st.ExecutionCount < o.cycles {
			return fmt.Errorf("job %s: status %+v, want executionCount >= %d", id.Name, st, o.cycles)
		}
		hist, err := d.client.HistoryList(ctx, client.HistoryListParams{Job: id, Max: historyPage})
		if err != nil {
			return fmt.Errorf("history of %s: %w", id.Name, err)
		}
		// One page of the newest entries: a run of more cycles than a page holds is checked on
		// a full page (its count is the status's, above).
		if want := min(o.cycles, historyPage); len(hist) < want {
			return fmt.Errorf("job %s: %d history entries, want >= %d", id.Name, len(hist), want)
		}
	}
	return nil
}
