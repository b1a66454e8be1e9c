package telemetry

import (
	"maps"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/dispatch"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
)

// seriesKey is the label values of a job's series (subscription, collection, job).
type seriesKey struct{ subscription, collection, job string }

func seriesKeyOf(k store.JobKey) seriesKey {
	return seriesKey{k.Subscription, k.CollectionKey.Name, k.Name}
}

// jobSeries is what a job's series hold: its finished executions by outcome and its last success.
type jobSeries struct {
	n           [3]uint64         // completed, failed, faulted
	other       map[string]uint64 // any other outcome (dispatch reports none)
	lastSuccess float64           // unix seconds; 0 with hasLast false: no series yet
	hasLast     bool
}

// outcomes are the outcomes every job that has finished an execution has a series of, in
// jobSeries.n's order.
var outcomes = [3]string{dispatch.OutcomeCompleted, dispatch.OutcomeFailed, dispatch.OutcomeFaulted}

// observeJob counts o in its job's series and reports whether the job had none. c.mu is held.
func (c *Collector) observeJob(o dispatch.Outcome) (first bool) {
	k := seriesKeyOf(o.Job)
	s := c.series[k]
	if s == nil {
		s = &jobSeries{}
		c.series[k] = s
		first = true
	}
	switch o.Outcome {
	case dispatch.OutcomeCompleted:
		s.n[0]++
		s.lastSuccess, s.hasLast = float64(o.End.UnixNano())/1e9, true
	case dispatch.OutcomeFailed:
		s.n[1]++
	case dispatch.OutcomeFaulted:
		s.n[2]++
	default:
		if s.other == nil {
			s.other = map[string]uint64{}
		}
		s.other[o.Outcome]++
	}
	return first
}

// seedLastSuccess sets a job's last success read from the store unless a success observed
// meanwhile is newer. c.mu is held.
func (c *Collector) seedLastSuccess(k store.JobKey, at time.Time) {
	sk := seriesKeyOf(k)
	s := c.series[sk]
	if s == nil {
		s = &jobSeries{}
		c.series[sk] = s
	}
	if cur := s.lastSuccess; cur == 0 || cur < float64(at.Unix()) {
		s.lastSuccess, s.hasLast = float64(at.UnixNano())/1e9, true
	}
}

// perJobCollector exports the per-job series from Collector.series as client_golang metrics:
// the slow path, for the protobuf exposition formats (and tests). The text formats are written
// by writePerJob without building them (exposition.go).
type perJobCollector struct{ c *Collector }

func (p perJobCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- p.c.jobExecDesc
	ch <- p.c.lastSuccessDesc
}

// seriesRow is one job's series, copied.
type seriesRow struct {
	k seriesKey
	s jobSeries
}

// snapshot copies the per-job series under mu, so that a scrape, sent without it, does not hold
// up Observe.
func (c *Collector) snapshot() []seriesRow {
	c.mu.Lock()
	defer c.mu.Unlock()
	rows := make([]seriesRow, 0, len(c.series))
	for k, s := range c.series {
		r := seriesRow{k, *s}
		if s.other != nil {
			r.s.other = maps.Clone(s.other)
		}
		rows = append(rows, r)
	}
	return rows
}

func (p perJobCollector) Collect(ch chan<- prometheus.Metric) {
	for _, r := range p.c.snapshot() {
		for i, oc := range outcomes {
			if i > 0 && r.s.n[i] == 0 {
				continue // failed and faulted only once they happened (see the package doc)
			}
			ch <- prometheus.MustNewConstMetric(p.c.jobExecDesc, prometheus.CounterValue, float64(r.s.n[i]), r.k.subscription, r.k.collection, r.k.job, oc)
		}
		for oc, n := range r.s.other {
			ch <- prometheus.MustNewConstMetric(p.c.jobExecDesc, prometheus.CounterValue, float64(n), r.k.subscription, r.k.collection, r.k.job, oc)
		}
		if r.s.hasLast {
			ch <- prometheus.MustNewConstMetric(p.c.lastSuccessDesc, prometheus.GaugeValue, r.s.lastSuccess, r.k.subscription, r.k.collection, r.k.job)
		}
	}
}
