package ui

import (
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/schedulerhq/terraform-provider-scheduler/internal/testsignal"
)

// Metric names read from the daemon's registry (defined by package dispatch).
const (
	latenessMetric = "scheduler_execution_lateness_seconds"
	backlogMetric  = "scheduler_due_backlog"
	runningMetric  = "scheduler_attempts_running"
)

// sampleEvery is how often the lateness histogram is sampled; ringSize samples cover an hour.
const (
	sampleEvery = time.Minute
	ringSize    = 62
)

// histSample is the lateness histogram (cumulative since the daemon started) at one moment.
type histSample struct {
	at      time.Time
	count   uint64
	sum     float64
	uppers  []float64
	buckets []uint64 // cumulative counts, per upper bound
	// backlog and running are the gauges at that moment (NaN: not exported).
	backlog, running float64
}

// lateness keeps a ring of samples of the dispatcher's lateness histogram, so that the
// histogram of the last hour is the difference between now and the sample of an hour ago.
type lateness struct {
	gatherer prometheus.Gatherer
	mu       sync.Mutex
	ring     []histSample
	// sampled is sent the time of each sample Run takes (tests).
	sampled testsignal.Signal[time.Time]
}

// read returns the histogram now; ok is false when the registry has none.
func (l *lateness) read(now time.Time) (histSample, bool) {
	if l.gatherer == nil {
		return histSample{}, false
	}
	fams, err := l.gatherer.Gather()
	if err != nil {
		return histSample{}, false
	}
	for _, f := range fams {
		if f.GetName() != latenessMetric || len(f.GetMetric()) == 0 {
			continue
		}
		h := f.GetMetric()[0].GetHistogram()
		s := histSample{at: now, count: h.GetSampleCount(), sum: h.GetSampleSum()}
		for _, b := range h.GetBucket() {
			s.uppers = append(s.uppers, b.GetUpperBound())
			s.buckets = append(s.buckets, b.GetCumulativeCount())
		}
		return s, true
	}
	return histSample{}, false
}

// sample appends the histogram and the gauges now to the ring.
func (l *lateness) sample(now time.Time) {
	s, ok := l.read(now)
	if !ok {
		return
	}
	s.backlog, s.running = math.NaN(), math.NaN()
	if v, ok := gaugeValue(l.gatherer, backlogMetric); ok {
		s.backlog = v
	}
	if v, ok := gaugeValue(l.gatherer, runningMetric); ok {
		s.running = v
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.ring = append(l.ring, s)
	if len(l.ring) > ringSize {
		l.ring = append(l.ring[:0], l.ring[len(l.ring)-ringSize:]...)
	}
}

// latenessStats is the lateness of the executions that started in a window.
type latenessStats struct {
	Since              time.Time
	Count              uint64
	Mean               string
	P50, P90, P99, Max string
}

// lastHour is the lateness since the newest sample at least an hour old (else the oldest one;
// Since says which); ok is false without a histogram.
func (l *lateness) lastHour(now time.Time) (latenessStats, bool) {
	cur, ok := l.read(now)
	if !ok {
		return latenessStats{}, false
	}
	l.mu.Lock()
	base := histSample{at: time.Time{}, uppers: cur.uppers, buckets: make([]uint64, len(cur.buckets))}
	found := false
	for i := len(l.ring) - 1; i >= 0; i-- {
		if !l.ring[i].at.After(now.Add(-time.Hour)) {
			base, found = l.ring[i], true
			break
		}
	}
	if !found && len(l.ring) > 0 {
		base = l.ring[0]
	}
	l.mu.Unlock()
	if len(base.buckets) != len(cur.buckets) {
		base.buckets = make([]uint64, len(cur.buckets))
		base.count, base.sum = 0, 0
	}
	st := latenessStats{Since: base.at, Count: cur.count - base.count}
	if st.Count == 0 {
		return st, true
	}
	st.Mean = seconds((cur.sum - base.sum) / float64(st.Count))
	q := func(p float64) string {
		want := uint64(math.Ceil(p * float64(st.Count)))
		for i := range cur.buckets {
			if cur.buckets[i]-base.buckets[i] >= want {
				return "≤ " + seconds(cur.uppers[i])
			}
		}
		if n := len(cur.uppers); n > 0 {
			return "> " + seconds(cur.uppers[n-1])
		}
		return "?"
	}
	st.P50, st.P90, st.P99, st.Max = q(0.5), q(0.9), q(0.99), q(1)
	return st, true
}

// gaugeValue reads one gauge of the registry.
func gaugeValue(g prometheus.Gatherer, name string) (float64, bool) {
	if g == nil {
		return 0, false
	}
	fams, err := g.Gather()
	if err != nil {
		return 0, false
	}
	for _, f := range fams {
		if f.GetName() == name && len(f.GetMetric()) > 0 {
			m := f.GetMetric()[0]
			if f.GetType() == dto.MetricType_GAUGE {
				return m.GetGauge().GetValue(), true
			}
			return m.GetUntyped().GetValue(), true
		}
	}
	return 0, false
}

// seconds formats a duration in seconds for people: 2.5 ms, 1.2 s, 5 min.
func seconds(s float64) string {
	d := time.Duration(s * float64(time.Second))
	switch {
	case d < time.Millisecond:
		return fmt.Sprintf("%.0f µs", float64(d)/float64(time.Microsecond))
	case d < time.Second:
		return trim(fmt.Sprintf("%.1f", float64(d)/float64(time.Millisecond))) + " ms"
	case d < time.Minute:
		return trim(fmt.Sprintf("%.1f", d.Seconds())) + " s"
	default:
		return trim(fmt.Sprintf("%.1f", d.Minutes())) + " min"
	}
}

func trim(s string) string {
	if len(s) > 2 && s[len(s)-2:] == ".0" {
		return s[:len(s)-2]
	}
	return s
}

// minuteStats is the lateness of the executions that started between two samples, and the
// gauges at the second.
type minuteStats struct {
	At               time.Time
	P50, P90, P99    float64 // seconds; NaN: no execution started
	Backlog, Running float64 // NaN: not exported
}

// perMinute returns the samples' minutes of the last hour, oldest first.
func (l *lateness) perMinute(now time.Time) []minuteStats {
	l.mu.Lock()
	ring := append([]histSample(nil), l.ring...)
	l.mu.Unlock()
	var out []minuteStats
	for i := 1; i < len(ring); i++ {
		a, b := ring[i-1], ring[i]
		if b.at.Before(now.Add(-time.Hour)) {
			continue
		}
		m := minuteStats{At: b.at, P50: math.NaN(), P90: math.NaN(), P99: math.NaN(), Backlog: b.backlog, Running: b.running}
		if len(a.buckets) == len(b.buckets) && b.count > a.count {
			m.P50, m.P90, m.P99 = quantile(a, b, 0.5), quantile(a, b, 0.9), quantile(a, b, 0.99)
		}
		out = append(out, m)
	}
	return out
}

// quantile estimates the q-quantile of the observations between samples a and b, linearly
// within the bucket that holds it (as Prometheus's histogram_quantile does); past the last
// finite bound it is that bound.
func quantile(a, b histSample, q float64) float64 {
	n := float64(b.count - a.count)
	rank := q * n
	lower, below := 0.0, 0.0
	for i := range b.buckets {
		c := float64(b.buckets[i] - a.buckets[i])
		if c >= rank {
			upper := b.uppers[i]
			if math.IsInf(upper, 1) {
				return lower
			}
			if c == below {
				return upper
			}
			return lower + (upper-lower)*(rank-below)/(c-below)
		}
		lower, below = b.uppers[i], c
	}
	return lower
}
