package dispatch_test

import (
	"context"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/dispatch"
)

// replicas runs two replicas' executors ("a" and "b", their region their name) on e's store and,
// when term is above 0, the leader's scheduler of that term, which wakes both executors when it
// claims; all with their test signals on, until the test ends. lease is the executors' lease: longer
// than the test's clock jumps, so that no execution is rescued from a replica that is merely slower
// to renew than the fake clock is to move. It returns once all of them are ready.
func (e *env) replicas(term int64, lease time.Duration) (*dispatch.Scheduler, []*dispatch.Executor) {
	t := e.t
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var running sync.WaitGroup
	t.Cleanup(func() {
		cancel()
		running.Wait()
	})
	var (
		actors    []interface{ Run(context.Context) error }
		executors []*dispatch.Executor
		s         *dispatch.Scheduler
	)
	for _, owner := range []string{"a", "b"} {
		cfg := e.cfg
		cfg.Owner, cfg.Region, cfg.Lease, cfg.Poll, cfg.Workers, cfg.TargetConcurrency = owner, owner, lease, time.Second, 4, 4
		cfg.Registerer = prometheus.NewRegistry()
		x, err := dispatch.NewExecutor(cfg)
		if err != nil {
			t.Fatal(err)
		}
		x.TestSignals.Init()
		executors = append(executors, x)
		actors = append(actors, x)
	}
	if term > 0 {
		cfg := e.cfg
		cfg.Term, cfg.Registerer = term, prometheus.NewRegistry()
		cfg.OnTakeable = func() {
			for _, x := range executors {
				x.Wake()
			}
		}
		var err error
		if s, err = dispatch.NewScheduler(cfg); err != nil {
			t.Fatal(err)
		}
		s.TestSignals().Init()
		actors = append(actors, s)
	}
	for _, a := range actors {
		running.Go(func() {
			if err := a.Run(ctx); err != nil {
				t.Errorf("Run: %v", err)
			}
		})
	}
	for !executors[0].Ready() || !executors[1].Ready() || s != nil && !s.Ready() {
		time.Sleep(time.Millisecond)
	}
	return s, executors
}
