package telemetry

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
)

// errNoCount is JobStates' answer while no count of jobs by state has succeeded yet.
var errNoCount = errors.New("no count of jobs by state has succeeded yet")

// stateCollector exports scheduler_jobs{state} from the last good count of the store's jobs
// and that count's age. A count that fails never fails the scrape (promhttp answers 500 for
// the whole scrape when one metric is invalid): the last good count is served, older; with
// none yet, scheduler_jobs and its age are left out. Failures are counted
// (scheduler_jobs_count_failures_total, collected here after the count so that a scrape
// includes its own count's failure).
type stateCollector struct{ c *Collector }

func (s stateCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- s.c.jobsDesc
	ch <- s.c.countAgeDesc
	ch <- s.c.countFailures.Desc()
}

func (s stateCollector) Collect(ch chan<- prometheus.Metric) {
	counts, at, err := s.c.JobStates(context.Background())
	ch <- s.c.countFailures
	if err != nil {
		return // logged and counted by JobStates
	}
	states := []string{store.JobStateEnabled, store.JobStateDisabled, store.JobStateCompleted, store.JobStateFaulted}
	for st := range counts {
		if !slices.Contains(states, st) {
			states = append(states, st)
		}
	}
	sort.Strings(states[4:])
	for _, st := range states {
		ch <- prometheus.MustNewConstMetric(s.c.jobsDesc, prometheus.GaugeValue, float64(counts[st]), st)
	}
	ch <- prometheus.MustNewConstMetric(s.c.countAgeDesc, prometheus.GaugeValue, s.c.clock.Now().Sub(at).Seconds())
}

// JobStates returns the last good count of the store's jobs by state and when it was made.
// The store is asked at most once per StateCacheTTL, a failed count included (scrapes waiting
// on a count that timed out do not each wait out the timeout again); each count is bounded by
// Config.CountTimeout. A failed count is logged and counted and the previous good count is
// returned; the error is only for when no count has succeeded yet.
func (c *Collector) JobStates(ctx context.Context) (map[string]int, time.Time, error) {
	c.stateMu.Lock()
	defer c.stateMu.Unlock()
	now := c.clock.Now()
	if !c.stateTried.IsZero() && now.Sub(c.stateTried) < StateCacheTTL {
		return c.cachedStates()
	}
	c.stateTried = now
	counts, err := c.countStates(ctx)
	if err != nil {
		c.countFailures.Inc()
		c.log.Warn("telemetry: counting jobs by state; the last good count is served", "error", err.Error(), "last_good", c.stateAt)
		return c.cachedStates()
	}
	c.stateAt, c.stateVal = now, counts
	return counts, now, nil
}

// cachedStates returns the last good count (under stateMu).
func (c *Collector) cachedStates() (map[string]int, time.Time, error) {
	if c.stateVal == nil {
		return nil, time.Time{}, errNoCount
	}
	return c.stateVal, c.stateAt, nil
}

// countStates asks the store for the jobs by state, within the count's timeout.
func (c *Collector) countStates(ctx context.Context) (map[string]int, error) {
	ctx, cancel := context.WithTimeout(ctx, c.countTimeout)
	defer cancel()
	rows, err := c.store.JobStateCount(ctx, store.JobStateCountParams{})
	if err != nil {
		return nil, fmt.Errorf("counting jobs by state: %w", err)
	}
	counts := map[string]int{}
	for _, r := range rows {
		counts[r.State] += r.N
	}
	return counts, nil
}
