package telemetry

import (
	"compress/gzip"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"google.golang.org/protobuf/proto"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/dispatch"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store/sqlite"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/clock"
)

// exposedCollector returns a collector with per-job series of several shapes (succeeded,
// failed, faulted, names that need escaping) and the registry of its daemon-wide metrics.
func exposedCollector(t testing.TB, perJob bool) (*Collector, *prometheus.Registry) {
	t.Helper()
	c, reg := registered(t, perJob)
	exposeSeries(c)
	return c, reg
}

// registered returns a collector on a fresh SQLite store, with its daemon-wide metrics
// registered in a registry of their own. Its clock stands still (the count of jobs by state's
// age is the same in every scrape).
func registered(t testing.TB, perJob bool) (*Collector, *prometheus.Registry) {
	t.Helper()
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	c, err := New(Config{Store: st, PerJob: perJob, Clock: clock.NewFake(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))})
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	if err := c.Register(reg); err != nil {
		t.Fatal(err)
	}
	return c, reg
}

// exposeSeries observes outcomes of several shapes.
func exposeSeries(c *Collector) {
	key := func(sub, coll, job string) store.JobKey {
		return store.JobKey{CollectionKey: store.CollectionKey{Subscription: sub, ResourceGroup: "rg", Name: coll}, Name: job}
	}
	for _, o := range []dispatch.Outcome{
		{Job: key("s", "c", "fine"), Outcome: dispatch.OutcomeCompleted, End: time.Unix(1_800_000_000, 250_000_000)},
		{Job: key("s", "c", "fine"), Outcome: dispatch.OutcomeCompleted, End: time.Unix(1_800_000_060, 0)},
		{Job: key("s", "c", "paged"), Outcome: dispatch.OutcomeFailed, End: time.Unix(1_800_000_000, 0)},
		{Job: key("s2", "c", "broken"), Outcome: dispatch.OutcomeFaulted, End: time.Unix(1_800_000_000, 0)},
		{Job: key("s2", "c", "broken"), Outcome: dispatch.OutcomeCompleted, End: time.Unix(1_800_000_001, 0)},
		{Job: key("s", `we"ird\`, "new\nline"), Outcome: dispatch.OutcomeCompleted, End: time.Unix(1, 0)},
	} {
		c.Observe(o)
	}
}

// scrape GETs /metrics from h with the headers given and returns the response and its body
// (decompressed when gzipped).
func scrape(t *testing.T, h http.Handler, header ...string) (*http.Response, []byte) {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	resp := rec.Result()
	var r io.Reader = resp.Body
	if resp.Header.Get("Content-Encoding") == "gzip" {
		gz, err := gzip.NewReader(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		r = gz
	}
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return resp, b
}

// families decodes an exposition in format f into families by name, each family's metrics
// sorted, as Gather sorts them.
func families(t *testing.T, body []byte, f expfmt.Format) map[string]*dto.MetricFamily {
	t.Helper()
	out := map[string]*dto.MetricFamily{}
	dec := expfmt.NewDecoder(strings.NewReader(string(body)), f)
	for {
		mf := &dto.MetricFamily{}
		err := dec.Decode(mf)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("decoding the exposition: %v\n%s", err, body)
		}
		if out[mf.GetName()] != nil {
			t.Fatalf("family %s twice", mf.GetName())
		}
		out[mf.GetName()] = mf
	}
	for _, mf := range out {
		normalize(mf)
	}
	return out
}

// normalize sorts a family's metrics and drops the counters' created timestamps (which the text
// format does not carry).
func normalize(mf *dto.MetricFamily) {
	for _, m := range mf.Metric {
		if m.Counter != nil {
			m.Counter.CreatedTimestamp = nil
		}
	}
	slices.SortFunc(mf.Metric, func(a, b *dto.Metric) int { return strings.Compare(a.String(), b.String()) })
}

// TestHandlerWritesThePerJobSeriesAsPromhttpWould: /metrics in the text format (what Prometheus
// asks for by default, plain and gzipped) and in the protobuf format holds exactly the families
// promhttp would serve from the registry and the per-job gatherer: same names, help, types,
// label sets and values, escaping included; failed and faulted only once non-zero; and the
// daemon's registry alone holds no per-job series.
func TestHandlerWritesThePerJobSeriesAsPromhttpWould(t *testing.T) {
	c, reg := exposedCollector(t, true)
	want, err := prometheus.Gatherers{reg, c.PerJobGatherer()}.Gather()
	if err != nil {
		t.Fatal(err)
	}
	wantBy := map[string]*dto.MetricFamily{}
	for _, mf := range want {
		normalize(mf)
		wantBy[mf.GetName()] = mf
	}
	if n := len(wantBy[MetricJobExecutions].GetMetric()); n != 6 {
		t.Fatalf("%d execution series gathered, want 6 (4 completed, 1 failed, 1 faulted)", n)
	}
	h := c.Handler(reg)
	for _, tc := range []struct {
		name, accept, encoding string
		format                 expfmt.Format
	}{
		{"no Accept", "", "", expfmt.NewFormat(expfmt.TypeTextPlain)},
		{"Prometheus's default", "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1", "gzip", expfmt.NewFormat(expfmt.TypeTextPlain)},
		{"protobuf", "application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited;q=0.7,text/plain;version=0.0.4;q=0.3", "", expfmt.NewFormat(expfmt.TypeProtoDelim)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := scrape(t, h, "Accept", tc.accept, "Accept-Encoding", tc.encoding)
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("status %d: %s", resp.StatusCode, body)
			}
			ct := resp.Header.Get("Content-Type")
			if got := expfmt.Format(ct).FormatType(); got != tc.format.FormatType() {
				t.Fatalf("Content-Type %q, want a %v format", ct, tc.format)
			}
			if (resp.Header.Get("Content-Encoding") == "gzip") != (tc.encoding == "gzip") {
				t.Errorf("Content-Encoding %q with Accept-Encoding %q", resp.Header.Get("Content-Encoding"), tc.encoding)
			}
			got := families(t, body, expfmt.Format(ct))
			if len(got) != len(wantBy) {
				t.Errorf("%d families, want %d", len(got), len(wantBy))
			}
			for name, w := range wantBy {
				if !proto.Equal(got[name], w) {
					t.Errorf("family %s:\n got %v\nwant %v", name, got[name], w)
				}
			}
		})
	}
	if n, err := seriesOf(reg, MetricJobLastSuccess); err != nil || n != 0 {
		t.Errorf("the daemon's registry holds %d last-success series (%v), want 0", n, err)
	}
}

// TestHandlerTextIsWhatExpfmtWrites: the per-job part of the text exposition is, line for line,
// what expfmt.MetricFamilyToText writes for the same families (in another order of series); and
// promtool check metrics (when installed: Debian's prometheus package) accepts the whole of
// /metrics, the registry's families (the Go runtime's among them) followed by the per-job series.
func TestHandlerTextIsWhatExpfmtWrites(t *testing.T) {
	c, _ := exposedCollector(t, true)
	_, body := scrape(t, c.Handler(prometheus.NewRegistry()))
	mfs, err := c.PerJobGatherer().Gather()
	if err != nil {
		t.Fatal(err)
	}
	var want strings.Builder
	for _, mf := range mfs {
		if _, err := expfmt.MetricFamilyToText(&want, mf); err != nil {
			t.Fatal(err)
		}
	}
	lines := func(s string) []string {
		l := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
		slices.Sort(l)
		return l
	}
	if g, w := lines(string(body)), lines(want.String()); !slices.Equal(g, w) {
		t.Errorf("text exposition:\n%s\nwant (in some order):\n%s", strings.Join(g, "\n"), strings.Join(w, "\n"))
	}
	if path, err := exec.LookPath("promtool"); err == nil {
		// The whole of /metrics as the daemon serves it: the registry's families (the Go
		// runtime's among them) and then the per-job series.
		c2, reg := exposedCollector(t, true)
		reg.MustRegister(collectors.NewGoCollector())
		_, all := scrape(t, c2.Handler(reg), "Accept-Encoding", "gzip")
		cmd := exec.Command(path, "check", "metrics")
		cmd.Stdin = strings.NewReader(string(all))
		// promtool's lint rules (a counter named *_total, help present) apply; it exits non-zero
		// on a problem and prints it.
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("promtool check metrics: %v\n%s", err, out)
		}
	} else {
		t.Log("promtool is not installed: the exposition is checked against expfmt only")
	}
}

// TestHandlerWithoutPerJobSeries: with PerJob off /metrics is the registry's, nothing more.
func TestHandlerWithoutPerJobSeries(t *testing.T) {
	c, reg := exposedCollector(t, false)
	_, body := scrape(t, c.Handler(reg))
	if strings.Contains(string(body), "scheduler_job_") {
		t.Errorf("per-job series with PerJob off:\n%s", body)
	}
	if !strings.Contains(string(body), MetricMissed) {
		t.Errorf("no %s in\n%s", MetricMissed, body)
	}
}

// TestGzipScrapesReuseTheirWriters: gzipped scrapes after the first reuse the compressor and
// the buffer (a gzip.Writer allocates about 1 MB) and each still says the same. The allocations
// of the least of five scrapes are bounded (the pool may drop a writer now and then); with a new
// writer per scrape each allocated 1.0 MB.
func TestGzipScrapesReuseTheirWriters(t *testing.T) {
	const maxBytes = 256 << 10
	c, _ := exposedCollector(t, true)
	h := c.Handler(prometheus.NewRegistry())
	_, first := scrape(t, h, "Accept-Encoding", "gzip")
	least := uint64(math.MaxUint64)
	for range 5 {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		resp, body := scrape(t, h, "Accept-Encoding", "gzip")
		runtime.ReadMemStats(&after)
		least = min(least, after.TotalAlloc-before.TotalAlloc)
		if resp.Header.Get("Content-Encoding") != "gzip" || string(body) != string(first) {
			t.Fatalf("Content-Encoding %q, body:\n%s\nwant\n%s", resp.Header.Get("Content-Encoding"), body, first)
		}
	}
	if least > maxBytes {
		t.Errorf("a gzipped scrape allocated %d bytes, want at most %d", least, maxBytes)
	} else {
		t.Logf("a gzipped scrape allocated %d bytes", least)
	}
}

// TestAcceptsGzip pins the Accept-Encoding reading.
func TestAcceptsGzip(t *testing.T) {
	for h, want := range map[string]bool{
		"": false, "gzip": true, "identity": false, "deflate, gzip;q=1.0, *;q=0.5": true,
		"gzip;q=0": false, "GZIP ; q=0.5": true, "br,zstd": false,
	} {
		if got := acceptsGzip(h); got != want {
			t.Errorf("acceptsGzip(%q) = %v, want %v", h, got, want)
		}
	}
}

// BenchmarkScrape measures a scrape of /metrics with 60,000 jobs that fired (the
// schedbench shape) in the text format Prometheus scrapes by default: "text" is Handler (the
// per-job series written from the counts), "dto" promhttp over the per-job series as
// client_golang metrics (how every scrape was served before Handler, and still the protobuf
// formats' path).
func BenchmarkScrape(b *testing.B) {
	const jobs = 60_000
	c, reg := registered(b, true)
	for i := range jobs {
		k := store.JobKey{CollectionKey: store.CollectionKey{Subscription: "00000000-0000-0000-0000-000000000000", ResourceGroup: "rg",
			Name: "c" + strconv.Itoa(i%60)}, Name: "job-" + strconv.Itoa(i)}
		c.Observe(dispatch.Outcome{Job: k, Outcome: dispatch.OutcomeCompleted, End: time.Unix(1_800_000_000+int64(i), 0)})
	}
	run := func(b *testing.B, h http.Handler) {
		req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
		req.Header.Set("Accept", "text/plain;version=0.0.4")
		b.ReportAllocs()
		for b.Loop() {
			rec := &discard{h: http.Header{}}
			h.ServeHTTP(rec, req)
		}
	}
	b.Run("text", func(b *testing.B) { run(b, c.Handler(reg)) })
	b.Run("dto", func(b *testing.B) {
		run(b, promhttp.HandlerFor(prometheus.Gatherers{reg, c.PerJobGatherer()}, promhttp.HandlerOpts{}))
	})
}

// discard is a ResponseWriter that drops the body.
type discard struct{ h http.Header }

func (d *discard) Header() http.Header         { return d.h }
func (d *discard) Write(p []byte) (int, error) { return len(p), nil }
func (d *discard) WriteHeader(int)             {}
