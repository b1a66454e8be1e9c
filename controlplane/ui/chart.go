package ui

import (
	"fmt"
	"html/template"
	"math"
	"strconv"
	"strings"
	"time"
)

// A chart is drawn on the server as inline SVG: no script, no build step, no request of its
// own. Colours come from the stylesheet (classes s-<series>), so the page's CSP holds; each chart
// has a title and a description for screen readers, and its figures are also said in words or
// a table next to it.

// chartSeries is one line, or one layer of stacked bars.
type chartSeries struct {
	Name   string
	Class  string    // CSS class suffix: s-<Class>
	Values []float64 // one per point; NaN: no value
}

// chart is a time chart of one or more series over the same points.
type chart struct {
	ID      string
	Title   string
	Desc    string      // what it shows, in words (the SVG's desc)
	Times   []time.Time // the points' times (bars: the start of each bucket)
	Series  []chartSeries
	Bars    bool // stacked bars; else lines
	Slots   int  // bars: at least this many slots across (a few bars stay narrow, from the left)
	Format  func(float64) string
	TimeFmt string // layout of the time axis' labels ("15:04")
	Zone    *time.Location
}

// Chart geometry (SVG user units; the SVG scales to its container's width).
const (
	chartW, chartH           = 720.0, 180.0
	chartLeft, chartRight    = 56.0, 8.0
	chartTop, chartBottom    = 10.0, 22.0
	chartPlotW, chartPlotH   = chartW - chartLeft - chartRight, chartH - chartTop - chartBottom
	chartXTicks, chartYTicks = 6, 2
)

// SVG renders the chart.
func (c chart) SVG() template.HTML {
	var b strings.Builder
	esc := template.HTMLEscapeString
	fmt.Fprintf(&b, `<svg class="chart" id="%s" viewBox="0 0 %g %g" role="img" aria-labelledby="%s-t %s-d" preserveAspectRatio="xMidYMid meet">`,
		esc(c.ID), chartW, chartH, esc(c.ID), esc(c.ID))
	fmt.Fprintf(&b, `<title id="%s-t">%s</title><desc id="%s-d">%s</desc>`, esc(c.ID), esc(c.Title), esc(c.ID), esc(c.Desc))
	n := len(c.Times)
	top := c.maxValue()
	if n == 0 || top <= 0 {
		top = 1
	}
	top = niceCeil(top)
	format := c.Format
	if format == nil {
		format = func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	}
	// Grid and y labels.
	for i := 0; i <= chartYTicks; i++ {
		v := top * float64(i) / chartYTicks
		y := c.y(v, top)
		fmt.Fprintf(&b, `<line class="grid" x1="%g" x2="%g" y1="%.1f" y2="%.1f"/>`, chartLeft, chartW-chartRight, y, y)
		fmt.Fprintf(&b, `<text class="axis" x="%g" y="%.1f" text-anchor="end">%s</text>`, chartLeft-4, y+4, esc(format(v)))
	}
	// X labels.
	if n > 0 {
		zone := c.Zone
		if zone == nil {
			zone = time.UTC
		}
		layout := c.TimeFmt
		if layout == "" {
			layout = "15:04"
		}
		ticks := min(chartXTicks, n-1)
		last := -1
		for i := 0; i <= ticks; i++ {
			k := 0
			if ticks > 0 {
				k = i * (n - 1) / ticks
			}
			if k == last {
				continue
			}
			last = k
			anchor, x := "middle", c.x(k, n)
			switch {
			case c.Bars:
				x += c.slot(n) / 2
				if i == 0 && x-chartLeft < 40 {
					anchor = "start"
					x = c.x(k, n)
				}
			case i == 0:
				anchor = "start"
			case i == ticks:
				anchor = "end"
			}
			if x > chartW-chartRight-40 {
				anchor = "end"
			}
			fmt.Fprintf(&b, `<text class="axis" x="%.1f" y="%g" text-anchor="%s">%s</text>`, x, chartH-6, anchor,
				esc(c.Times[k].In(zone).Format(layout)))
		}
	}
	if c.Bars {
		c.bars(&b, n, top)
	} else {
		c.lines(&b, n, top)
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String()) //nolint:gosec // built here from numbers and escaped text
}

// slot is the width of a bar's slot.
func (c chart) slot(n int) float64 { return chartPlotW / float64(max(n, c.Slots, 1)) }

func (c chart) x(i, n int) float64 {
	if c.Bars {
		return chartLeft + c.slot(n)*float64(i)
	}
	if n <= 1 {
		return chartLeft
	}
	return chartLeft + chartPlotW*float64(i)/float64(n-1)
}

func (c chart) y(v, top float64) float64 { return chartTop + chartPlotH*(1-v/top) }

// maxValue is the highest point (bars: the highest stack).
func (c chart) maxValue() float64 {
	top := 0.0
	for i := range c.Times {
		sum := 0.0
		for _, s := range c.Series {
			v := s.Values[i]
			if math.IsNaN(v) {
				continue
			}
			if c.Bars {
				sum += v
			} else {
				top = max(top, v)
			}
		}
		top = max(top, sum)
	}
	return top
}

// bars draws stacked bars, one path per series.
func (c chart) bars(b *strings.Builder, n int, top float64) {
	// A bar fills 80 % of its slot, and is at least 2 units wide (1,440 minutes in 664 units).
	w := max(c.slot(n)*0.8, 2)
	base := make([]float64, n)
	for _, s := range c.Series {
		fmt.Fprintf(b, `<path class="s-%s" d="`, template.HTMLEscapeString(s.Class))
		for i := 0; i < n; i++ {
			v := s.Values[i]
			if v <= 0 || math.IsNaN(v) {
				continue
			}
			y1, y0 := c.y(base[i]+v, top), c.y(base[i], top)
			fmt.Fprintf(b, "M%.2f %.2fh%.2fv%.2fh%.2fz", c.x(i, n), y1, w, y0-y1, -w)
			base[i] += v
		}
		b.WriteString(`"/>`)
	}
}

// lines draws one polyline per series, broken where a value is missing.
func (c chart) lines(b *strings.Builder, n int, top float64) {
	for _, s := range c.Series {
		fmt.Fprintf(b, `<path class="line s-%s" d="`, template.HTMLEscapeString(s.Class))
		pen := false
		for i := 0; i < n; i++ {
			v := s.Values[i]
			if math.IsNaN(v) {
				pen = false
				continue
			}
			cmd := "L"
			if !pen {
				cmd = "M"
			}
			fmt.Fprintf(b, "%s%.2f %.2f", cmd, c.x(i, n), c.y(v, top))
			pen = true
		}
		b.WriteString(`"/>`)
		// A lone point between gaps is a dot.
		for i := 0; i < n; i++ {
			if !math.IsNaN(s.Values[i]) && (i == 0 || math.IsNaN(s.Values[i-1])) && (i == n-1 || math.IsNaN(s.Values[i+1])) {
				fmt.Fprintf(b, `<circle class="s-%s" cx="%.2f" cy="%.2f" r="2"/>`, template.HTMLEscapeString(s.Class), c.x(i, n), c.y(s.Values[i], top))
			}
		}
	}
}

// niceCeil rounds v up to 1, 2 or 5 times a power of ten.
func niceCeil(v float64) float64 {
	if v <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= v {
			return m * p
		}
	}
	return 10 * p
}

// durationLabel formats seconds for a chart's axis.
func durationLabel(v float64) string {
	if v == 0 {
		return "0"
	}
	return seconds(v)
}
