package telemetry

import (
	"bufio"
	"compress/gzip"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/common/expfmt"
)

// Help texts of the per-job families (the text the descriptors carry too).
const (
	helpJobExecutions  = "Finished executions of a job on this process by outcome: completed (main action succeeded), failed (main action failed, error action succeeded), faulted."
	helpJobLastSuccess = "Unix time of the job's last execution whose main action succeeded (its creation time when none did)."
)

// PerJobGatherer gathers the per-job series as client_golang metric families (none with
// Config.PerJob off). It is the slow path: /metrics writes them without it in the text format
// (Handler); tests and the protobuf formats use it.
func (c *Collector) PerJobGatherer() prometheus.Gatherer { return c.perJobReg }

// Handler serves /metrics: the families g gathers and, with Config.PerJob, the per-job series.
// The format is negotiated as promhttp negotiates it (Accept: the Prometheus text format unless
// a protobuf format is asked for; gzip when accepted). In the text format the per-job series are
// written straight from the collector's counts after g's families, with no metric built per
// series: with tens of thousands of jobs they are most of the response, and building them as
// client_golang metrics cost more CPU and memory than firing the jobs. A protobuf format is
// served by promhttp from g and PerJobGatherer.
func (c *Collector) Handler(g prometheus.Gatherer) http.Handler {
	slow := promhttp.HandlerFor(prometheus.Gatherers{g, c.perJobReg}, promhttp.HandlerOpts{})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		format := expfmt.NegotiateAccept(r.Header, expfmt.DefaultAcceptedFormats()...)
		if !c.perJob || format.FormatType() != expfmt.TypeTextPlain {
			slow.ServeHTTP(w, r)
			return
		}
		mfs, err := g.Gather()
		if err != nil {
			http.Error(w, "An error has occurred while serving metrics:\n\n"+err.Error(), http.StatusInternalServerError)
			return
		}
		h := w.Header()
		h.Add("Vary", "Accept")
		h.Add("Vary", "Accept-Encoding")
		h.Set("Content-Type", string(format))
		sw, _ := c.writers.Get().(*scrapeWriters)
		if sw == nil {
			sw = &scrapeWriters{bw: bufio.NewWriterSize(nil, 64<<10)}
		}
		defer c.writers.Put(sw)
		var out io.Writer = w
		if acceptsGzip(r.Header.Get("Accept-Encoding")) {
			h.Set("Content-Encoding", "gzip")
			if sw.gz == nil {
				sw.gz = gzip.NewWriter(w)
			} else {
				sw.gz.Reset(w)
			}
			defer func() {
				_ = sw.gz.Close()
				sw.gz.Reset(nil) // keeps no hold on w in the pool
			}()
			out = sw.gz
		}
		bw := sw.bw
		bw.Reset(out)
		defer bw.Reset(nil)
		enc := expfmt.NewEncoder(bw, format)
		for _, mf := range mfs {
			if err := enc.Encode(mf); err != nil {
				return // the client went away: nothing more can be said to it
			}
		}
		c.writePerJob(bw)
		if cl, ok := enc.(expfmt.Closer); ok {
			_ = cl.Close()
		}
		_ = bw.Flush()
	})
}

// scrapeWriters are a text scrape's buffer and gzip compressor, reused by the next scrapes
// (Collector.writers): a gzip.Writer allocates about 1 MB.
type scrapeWriters struct {
	bw *bufio.Writer
	gz *gzip.Writer
}

// acceptsGzip reports whether an Accept-Encoding header accepts gzip (not with q=0).
func acceptsGzip(header string) bool {
	for part := range strings.SplitSeq(header, ",") {
		coding, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if !strings.EqualFold(strings.TrimSpace(coding), "gzip") {
			continue
		}
		q := strings.ReplaceAll(params, " ", "")
		return q != "q=0" && q != "q=0.0" && q != "q=0.00" && q != "q=0.000"
	}
	return false
}

// writePerJob writes the per-job families in the Prometheus text format (0.0.4), as
// expfmt.MetricFamilyToText writes them (labels in name order, values formatted alike),
// straight from the counts, copied a chunk at a time (eachChunk): no allocation per series,
// and a scrape's copy is one chunk, whatever the number of jobs. Series are in no particular
// order, which the format allows.
func (c *Collector) writePerJob(w *bufio.Writer) {
	var num [32]byte
	sample := func(name string, cn collName, job, outcome string, v float64) {
		_, _ = w.WriteString(name)
		_, _ = w.WriteString(`{collection="`)
		writeLabelValue(w, cn.collection)
		_, _ = w.WriteString(`",job="`)
		writeLabelValue(w, job)
		if outcome != "" {
			_, _ = w.WriteString(`",outcome="`)
			writeLabelValue(w, outcome)
		}
		_, _ = w.WriteString(`",subscription="`)
		writeLabelValue(w, cn.subscription)
		_, _ = w.WriteString(`"} `)
		_, _ = w.Write(appendFloat(num[:0], v))
		_ = w.WriteByte('\n')
	}
	header := false
	c.eachChunk(func(sc seriesChunk) {
		if !header && len(sc.rows) > 0 {
			_, _ = w.WriteString("# HELP " + MetricJobExecutions + " " + helpJobExecutions + "\n# TYPE " + MetricJobExecutions + " counter\n")
			header = true
		}
		for j := range sc.rows {
			r := &sc.rows[j]
			for i, oc := range outcomes {
				if i > 0 && r.n[i] == 0 {
					continue
				}
				sample(MetricJobExecutions, sc.colls[r.coll], r.job, oc, float64(r.n[i]))
			}
			for oc, n := range sc.other[sc.first+uint32(j)] {
				sample(MetricJobExecutions, sc.colls[r.coll], r.job, oc, float64(n))
			}
		}
	})
	header = false
	c.eachChunk(func(sc seriesChunk) {
		for j := range sc.rows {
			r := &sc.rows[j]
			if !r.hasLast {
				continue
			}
			if !header {
				_, _ = w.WriteString("# HELP " + MetricJobLastSuccess + " " + helpJobLastSuccess + "\n# TYPE " + MetricJobLastSuccess + " gauge\n")
				header = true
			}
			sample(MetricJobLastSuccess, sc.colls[r.coll], r.job, "", r.last)
		}
	})
}

// writeLabelValue writes a label value escaped as the text format wants (\\, \" and \n).
func writeLabelValue(w *bufio.Writer, v string) {
	if !strings.ContainsAny(v, "\\\"\n") {
		_, _ = w.WriteString(v)
		return
	}
	for i := 0; i < len(v); i++ {
		switch v[i] {
		case '\\':
			_, _ = w.WriteString(`\\`)
		case '"':
			_, _ = w.WriteString(`\"`)
		case '\n':
			_, _ = w.WriteString(`\n`)
		default:
			_ = w.WriteByte(v[i])
		}
	}
}

// appendFloat formats a sample value as expfmt does.
func appendFloat(b []byte, f float64) []byte {
	switch {
	case f == 1:
		return append(b, '1')
	case f == 0:
		return append(b, '0')
	case f == -1:
		return append(b, "-1"...)
	case math.IsNaN(f):
		return append(b, "NaN"...)
	case math.IsInf(f, +1):
		return append(b, "+Inf"...)
	case math.IsInf(f, -1):
		return append(b, "-Inf"...)
	}
	return strconv.AppendFloat(b, f, 'g', -1, 64)
}
