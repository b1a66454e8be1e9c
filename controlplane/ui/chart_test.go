package ui

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// TestLatenessPerMinute: the percentiles of each minute are those of the observations between
// two samples of the dispatcher's histogram (interpolated within the bucket that holds them),
// the gauges are those at the second sample, and a minute without executions has none.
func TestLatenessPerMinute(t *testing.T) {
	reg := prometheus.NewRegistry()
	h := prometheus.NewHistogram(prometheus.HistogramOpts{Name: latenessMetric, Buckets: []float64{0.01, 0.1, 1, 10}})
	backlog := prometheus.NewGauge(prometheus.GaugeOpts{Name: backlogMetric})
	reg.MustRegister(h, backlog)
	l := &lateness{gatherer: reg}
	now := time.Date(2026, 11, 18, 12, 0, 0, 0, time.UTC)
	for range 50 {
		h.Observe(5) // before the first sample: not in any minute
	}
	l.sample(now)
	// Minute 1: 100 observations, 90 in (0, 0.01], 10 in (1, 10].
	for range 90 {
		h.Observe(0.005)
	}
	for range 10 {
		h.Observe(2)
	}
	backlog.Set(7)
	l.sample(now.Add(time.Minute))
	// Minute 2: nothing started.
	backlog.Set(3)
	l.sample(now.Add(2 * time.Minute))
	ms := l.perMinute(now.Add(2 * time.Minute))
	if len(ms) != 2 {
		t.Fatalf("%d minutes, want 2", len(ms))
	}
	m := ms[0]
	// p50: rank 50 of 90 in (0, 0.01] → 0.01 × 50/90; p90: rank 90, the bucket's top, 0.01;
	// p99: rank 99, 9 of the 10 in (1, 10] → 1 + 9 × 9/10.
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"p50", m.P50, 0.01 * 50 / 90}, {"p90", m.P90, 0.01}, {"p99", m.P99, 1 + 9*0.9}, {"backlog", m.Backlog, 7},
	} {
		if math.Abs(c.got-c.want) > 1e-12 {
			t.Errorf("minute 1 %s: %v, want %v", c.name, c.got, c.want)
		}
	}
	if !m.At.Equal(now.Add(time.Minute)) || !math.IsNaN(m.Running) {
		t.Errorf("minute 1 at %s, running %v (want NaN: not exported)", m.At, m.Running)
	}
	if m := ms[1]; !math.IsNaN(m.P50) || !math.IsNaN(m.P99) || m.Backlog != 3 {
		t.Errorf("minute 2: %+v, want no percentiles and a backlog of 3", m)
	}
}

// TestChartSVG: bars stack by series and a line breaks where a value is missing; the title and
// the description are escaped.
func TestChartSVG(t *testing.T) {
	at := time.Date(2026, 11, 18, 12, 0, 0, 0, time.UTC)
	c := chart{ID: "c", Title: "A <b>", Desc: "x & y", Bars: true, Times: []time.Time{at, at.Add(time.Minute)},
		Series: []chartSeries{{Name: "a", Class: "succeeded", Values: []float64{1, 0}}, {Name: "b", Class: "faulted", Values: []float64{1, 2}}}}
	svg := string(c.SVG())
	for _, want := range []string{
		`<title id="c-t">A &lt;b&gt;</title><desc id="c-d">x &amp; y</desc>`,
		// The plot is 656 wide from x 56, 148 high from y 10; top 2. Two slots of 328, bars 80 %
		// of it: a's bar at slot 0 fills the lower half; b's sits on it, and fills slot 1.
		`<path class="s-succeeded" d="M56.00 84.00h262.40v74.00h-262.40z"/>`,
		`<path class="s-faulted" d="M56.00 10.00h262.40v74.00h-262.40zM384.00 10.00h262.40v148.00h-262.40z"/>`,
	} {
		if !strings.Contains(svg, want) {
			t.Errorf("bars lack %s:\n%s", want, svg)
		}
	}
	l := chart{ID: "l", Times: []time.Time{at, at.Add(time.Minute), at.Add(2 * time.Minute), at.Add(3 * time.Minute)},
		Series: []chartSeries{{Name: "p", Class: "p99", Values: []float64{1, 2, math.NaN(), 2}}}}
	svg = string(l.SVG())
	// Points at 56, 56+656/3, ...; the lone last point is a dot.
	if want := `<path class="line s-p99" d="M56.00 84.00L274.67 10.00M712.00 10.00"/><circle class="s-p99" cx="712.00" cy="10.00" r="2"/>`; !strings.Contains(svg, want) {
		t.Errorf("line lacks %s:\n%s", want, svg)
	}
}
