package ui

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/api"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
)

// seed1000 creates collection jc1 with 1,000 jobs that have all executed (so that each row reads
// its last history entry) and returns a signed-in admin session's cookie value.
func seed1000(b *testing.B) (*harness, string) {
	h := newHarness(b, false)
	h.mustAPI(http.MethodPut, collA, `{"location":"westus","properties":{"sku":{"name":"P20Premium"}}}`)
	for i := range 1000 {
		h.mustAPI(http.MethodPut, fmt.Sprintf("%s/jobs/job-%04d", collA, i), fmt.Sprintf(`{"properties":{
			"startTime":"2026-11-01T08:%02d:00","action":{"type":"Http","request":{"method":"GET","uri":"http://127.0.0.1:9/%d"}},
			"recurrence":{"frequency":"Day","interval":1,"timeZone":"Europe/Berlin","schedule":{"hours":[8,20],"minutes":[%d]}}}}`, i%60, i, i%60))
	}
	jobs, err := h.store.JobList(b.Context(), store.JobListParams{Collection: jobKeyA().CollectionKey})
	if err != nil || len(jobs) != 1000 {
		b.Fatalf("%d jobs, %v", len(jobs), err)
	}
	for _, j := range jobs {
		j.Status.ExecutionCount = 1
		if _, _, err := h.store.JobPut(b.Context(), store.JobPutParams{Job: *j, ExpectVersion: j.Version, Now: t0}); err != nil {
			b.Fatal(err)
		}
	}
	id, err := h.ui.sessions.create(api.Principal{Admin: true})
	if err != nil {
		b.Fatal(err)
	}
	return h, id
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkCollectionPage1000 renders the page of a collection of 1,000 jobs, all on one page
// (?per=1000), in the server: the store reads (jobs, count, each job's last history entry), the
// schedule in words and the template. Target: under 200 ms per page (ms/page is reported).
func BenchmarkCollectionPage1000(b *testing.B) {
	h, id := seed1000(b)
	cpu0 := cpuTime(b)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		req := httptest.NewRequest(http.MethodGet, uiCollA+"?per=1000", nil)
		req.AddCookie(&http.Cookie{Name: cookieName, Value: id})
		w := httptest.NewRecorder()
		h.ui.ServeHTTP(w, req)
		if w.Code != http.StatusOK || strings.Count(w.Body.String(), "<tr data-job=") != 1000 {
			b.Fatalf("%d, %d rows", w.Code, strings.Count(w.Body.String(), "<tr data-job="))
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/page")
	b.ReportMetric(float64((cpuTime(b)-cpu0).Microseconds())/1000/float64(b.N), "cpu-ms/page")
}

// BenchmarkAPIJobList1000 is the baseline of the same run: the API's own list of the same 1,000
// jobs as JSON (ten pages of $top=100, its largest), served in-process.
func BenchmarkAPIJobList1000(b *testing.B) {
	h, _ := seed1000(b)
	handler := h.ui.api.As(api.Principal{Admin: true})
	cpu0 := cpuTime(b)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		n := 0
		for skip := 0; skip < 1000; skip += 100 {
			req := httptest.NewRequest(http.MethodGet, fmt.Sprintf("%s/jobs%s&$top=100&$skip=%d", collA, apiVersion, skip), nil)
			w := httptest.NewRecorder()
			handler.ServeHTTP(w, req)
			if w.Code != http.StatusOK {
				b.Fatalf("%d", w.Code)
			}
			n += strings.Count(w.Body.String(), `"type":"Microsoft.Scheduler/jobCollections/jobs"`)
		}
		if n != 1000 {
			b.Fatalf("%d jobs", n)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/page")
	b.ReportMetric(float64((cpuTime(b)-cpu0).Microseconds())/1000/float64(b.N), "cpu-ms/page")
}
