package telemetry

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/dispatch"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
)

// TestSeriesOfManyJobs: 3,000 jobs (three chunks of rows, the index grown several times), the
// same job names in six collections of two subscriptions, each observed twice, some failed or
// faulted, one with an outcome dispatch does not report: the text exposition and the gatherer
// hold exactly one series per job and outcome that happened, with its count, and each job's last
// success.
func TestSeriesOfManyJobs(t *testing.T) {
	const jobs = 3000
	c, reg := registered(t, true)
	key := func(i int) store.JobKey {
		return store.JobKey{CollectionKey: store.CollectionKey{Subscription: "s" + strconv.Itoa(i%2), ResourceGroup: "rg",
			Name: "c" + strconv.Itoa(i%3)}, Name: "j" + strconv.Itoa(i/6)}
	}
	want := map[string]float64{} // "metric subscription collection job outcome" → value
	id := func(metric string, k store.JobKey, outcome string) string {
		return strings.Join([]string{metric, k.Subscription, k.CollectionKey.Name, k.Name, outcome}, " ")
	}
	for pass := range 2 {
		for i := range jobs {
			k := key(i)
			end := time.Unix(1_800_000_000+int64(pass*jobs+i), 0)
			c.Observe(dispatch.Outcome{Job: k, Outcome: dispatch.OutcomeCompleted, End: end})
			want[id(MetricJobExecutions, k, dispatch.OutcomeCompleted)]++
			want[id(MetricJobLastSuccess, k, "")] = float64(end.Unix())
			for _, o := range []struct {
				every   int
				outcome string
			}{{7, dispatch.OutcomeFailed}, {11, dispatch.OutcomeFaulted}, {2500, "cancelled"}} {
				if i%o.every == 0 && i > 0 {
					c.Observe(dispatch.Outcome{Job: k, Outcome: o.outcome, End: end})
					want[id(MetricJobExecutions, k, o.outcome)]++
				}
			}
		}
	}
	if want[id(MetricJobExecutions, key(2500), "cancelled")] != 2 {
		t.Fatal("the test lost its own count")
	}
	check := func(t *testing.T, fams []*dto.MetricFamily) {
		t.Helper()
		got := map[string]float64{}
		for _, f := range fams {
			if f.GetName() != MetricJobExecutions && f.GetName() != MetricJobLastSuccess {
				continue
			}
			for _, m := range f.GetMetric() {
				l := map[string]string{}
				for _, p := range m.GetLabel() {
					l[p.GetName()] = p.GetValue()
				}
				k := store.JobKey{CollectionKey: store.CollectionKey{Subscription: l["subscription"], Name: l["collection"]}, Name: l["job"]}
				s := id(f.GetName(), k, l["outcome"])
				if _, dup := got[s]; dup {
					t.Errorf("series %q twice", s)
				}
				if m.Counter != nil {
					got[s] = m.GetCounter().GetValue()
				} else {
					got[s] = m.GetGauge().GetValue()
				}
			}
		}
		if len(got) != len(want) {
			t.Errorf("%d series, want %d", len(got), len(want))
		}
		for s, w := range want {
			if g, ok := got[s]; !ok || g != w {
				t.Errorf("%s = %v (present %v), want %v", s, g, ok, w)
			}
		}
	}
	t.Run("text", func(t *testing.T) {
		_, body := scrape(t, c.Handler(reg))
		var fams []*dto.MetricFamily
		dec := expfmt.NewDecoder(bytes.NewReader(body), expfmt.NewFormat(expfmt.TypeTextPlain))
		for {
			f := &dto.MetricFamily{}
			if err := dec.Decode(f); err == io.EOF {
				break
			} else if err != nil {
				t.Fatalf("decoding the exposition: %v", err)
			}
			fams = append(fams, f)
		}
		check(t, fams)
	})
	t.Run("gatherer", func(t *testing.T) {
		fams, err := c.PerJobGatherer().Gather()
		if err != nil {
			t.Fatal(err)
		}
		check(t, fams)
	})
}

// TestSeriesStaySmall bounds what the per-job series cost: the heap 100,000 jobs' series keep
// (the jobs' names are the caller's: the series share them), and what a text scrape of them
// allocates. Measured: 70 bytes a job and 218 kB a scrape (with one series per job held in a map
// of pointers and a scrape that copied them all: 135 bytes a job and 5.9 MB a scrape).
func TestSeriesStaySmall(t *testing.T) {
	const (
		jobs           = 100_000
		maxBytesPerJob = 80
		maxScrapeBytes = 512 << 10
	)
	if testing.Short() {
		t.Skip("observes 100,000 jobs")
	}
	keys := make([]store.JobKey, jobs)
	for i := range keys {
		keys[i] = store.JobKey{CollectionKey: store.CollectionKey{Subscription: "00000000-0000-0000-0000-000000000000", ResourceGroup: "rg",
			Name: "c" + strconv.Itoa(i%100)}, Name: "job-" + strconv.Itoa(i)}
	}
	end := time.Unix(1_800_000_000, 0)
	c, _ := registered(t, true)
	heap := settledHeap()
	for _, k := range keys {
		c.Observe(dispatch.Outcome{Job: k, Outcome: dispatch.OutcomeCompleted, End: end})
	}
	if perJob := float64(int64(settledHeap())-int64(heap)) / jobs; perJob > maxBytesPerJob {
		t.Errorf("the series keep %.1f bytes a job, want at most %d", perJob, maxBytesPerJob)
	} else {
		t.Logf("the series keep %.1f bytes a job", perJob)
	}

	h := c.Handler(prometheus.NewRegistry())
	req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
	rec := &discard{h: http.Header{}}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	h.ServeHTTP(rec, req)
	runtime.ReadMemStats(&after)
	if n := after.TotalAlloc - before.TotalAlloc; n > maxScrapeBytes {
		t.Errorf("a scrape of %d jobs allocated %d bytes, want at most %d", jobs, n, maxScrapeBytes)
	} else {
		t.Logf("a scrape of %d jobs allocated %d bytes", jobs, n)
	}
	runtime.KeepAlive(keys)
}

// settledHeap collects garbage until the live heap stops shrinking (what an earlier test left
// with finalizers, such as its store's connections, is freed a collection after them) and
// returns it.
func settledHeap() uint64 {
	var m runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m)
	for range 10 {
		prev := m.HeapAlloc
		runtime.GC()
		runtime.ReadMemStats(&m)
		if m.HeapAlloc >= prev {
			break
		}
	}
	return m.HeapAlloc
}
