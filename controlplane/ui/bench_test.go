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
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/dispatch"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/telemetry"
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

// seed100k stores 100,000 jobs in ten collections of sub-a (copies of one job made through the
// API, written with the store's JobPut from 32 goroutines), runs one execution of each of 20,000
// of them (one in ten faulted: 20,000 history entries), fills the daemon's counts with 24 hours
// of executions (about 60 a minute, one in ten failed or faulted) and returns a signed-in admin
// session and a sub-a session.
func seed100k(b *testing.B) (h *harness, admin, tenant string) {
	h = newHarness(b, false)
	const colls, perColl = 10, 10000
	var tmpl *store.Job
	for c := range colls {
		coll := fmt.Sprintf("/subscriptions/sub-a/resourceGroups/rg1/providers/Microsoft.Scheduler/jobCollections/big%d", c)
		h.mustAPI(http.MethodPut, coll, `{"location":"westus","properties":{"sku":{"name":"P20Premium"},"quota":{"maxJobCount":10000}}}`)
		if c == 0 {
			h.mustAPI(http.MethodPut, coll+"/jobs/template", `{"properties":{"startTime":"2026-11-01T08:00:00",
				"action":{"type":"Http","request":{"method":"GET","uri":"http://127.0.0.1:9/"}},
				"recurrence":{"frequency":"Minute","interval":5,"timeZone":"Europe/Berlin"}}}`)
			key := store.JobKey{CollectionKey: store.CollectionKey{Subscription: "sub-a", ResourceGroup: "rg1", Name: "big0"}, Name: "template"}
			var err error
			if tmpl, err = h.store.JobGet(b.Context(), store.JobGetParams{Key: key}); err != nil {
				b.Fatal(err)
			}
		}
	}
	type item struct{ c, i int }
	work := make(chan item, 1024)
	errs := make(chan error, 32)
	for range 32 {
		go func() {
			var first error
			for it := range work {
				j := *tmpl
				j.Key.CollectionKey.Name = fmt.Sprintf("big%d", it.c)
				j.Key.Name = fmt.Sprintf("job-%05d", it.i)
				j.Status.NextExecutionTime = t0.Add(time.Duration(it.c*perColl+it.i) * time.Second)
				j.Status.ExecutionCount = 1
				if _, _, err := h.store.JobPut(b.Context(), store.JobPutParams{Job: j, Now: t0}); err != nil && first == nil {
					first = err
				}
			}
			errs <- first
		}()
	}
	for c := range colls {
		for i := range perColl {
			if c == 0 && i == perColl-1 {
				continue // the template is the 10,000th
			}
			work <- item{c, i}
		}
	}
	close(work)
	for range 32 {
		if err := <-errs; err != nil {
			b.Fatal(err)
		}
	}
	seedHistory(b, h, []string{"big1", "big2"})
	tel, ok := h.ui.tel.(*telemetry.Collector)
	if !ok {
		b.Fatalf("the harness's telemetry is a %T", h.ui.tel)
	}
	now := h.clock.Now()
	for m := range telemetry.Minutes {
		for k := range 60 {
			o := dispatch.Outcome{Job: store.JobKey{CollectionKey: store.CollectionKey{Subscription: "sub-a", ResourceGroup: "rg1", Name: "big1"},
				Name: fmt.Sprintf("job-%05d", k)}, Tag: fmt.Sprintf("t-%d-%d", m, k), Outcome: dispatch.OutcomeCompleted,
				End: now.Add(-time.Duration(m)*time.Minute - time.Duration(k)*time.Second)}
			switch k % 10 {
			case 3:
				o.Outcome = dispatch.OutcomeFailed
			case 7:
				o.Outcome = dispatch.OutcomeFaulted
			}
			tel.Observe(o)
		}
	}
	var err error
	if admin, err = h.ui.sessions.create(api.Principal{Admin: true}); err != nil {
		b.Fatal(err)
	}
	if tenant, err = h.ui.sessions.create(api.Principal{Subscription: "sub-a"}); err != nil {
		b.Fatal(err)
	}
	return h, admin, tenant
}

// seedHistory runs one execution of every job of the collections (manual claims), each ended by
// one attempt of the main action: one in ten faulted, the others completed.
func seedHistory(b *testing.B, h *harness, colls []string) {
	ctx := b.Context()
	var jobs []*store.Job
	for _, c := range colls {
		js, err := h.store.JobList(ctx, store.JobListParams{Collection: store.CollectionKey{Subscription: "sub-a", ResourceGroup: "rg1", Name: c}})
		if err != nil {
			b.Fatal(err)
		}
		jobs = append(jobs, js...)
	}
	now := h.clock.Now()
	for i := 0; i < len(jobs); i += 256 {
		batch := jobs[i:min(i+256, len(jobs))]
		claims := make([]store.ExecutionClaim, len(batch))
		for k, j := range batch {
			claims[k] = store.ExecutionClaim{Execution: store.Execution{JobID: j.ID, Tag: fmt.Sprintf("seed-%d", j.ID), Scheduled: now,
				Manual: true, Phase: store.ActionMain, DueAt: now, ClaimedAt: now}}
		}
		res, err := h.store.ExecutionClaimMany(ctx, store.ExecutionClaimManyParams{Claims: claims, Now: now})
		if err != nil {
			b.Fatal(err)
		}
		recs := make([]store.AttemptRecord, len(batch))
		for k, r := range res {
			if r.Err != nil {
				b.Fatal(r.Err)
			}
			e := r.Execution
			end := now.Add(-time.Duration(len(jobs)-i-k) * time.Second)
			recs[k] = store.AttemptRecord{ExecutionID: e.ID, JobID: e.JobID, Finished: true, History: store.HistoryEntry{
				ExecutionTag: e.Tag, ActionName: store.ActionMain, Status: store.HistoryCompleted, Message: "HTTP/1.1 200 OK",
				RepeatCount: e.RepeatCount, ExpectedExecutionTime: now, StartTime: end.Add(-time.Second), EndTime: end}}
			if (i+k)%10 == 7 {
				recs[k].History.Status, recs[k].History.Message = store.HistoryFailed, "HTTP/1.1 503 Service Unavailable"
				recs[k].Failure, recs[k].Faulted = true, true
			}
		}
		if _, err := h.store.AttemptRecordMany(ctx, store.AttemptRecordManyParams{Records: recs, Now: now}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPages100k renders the overview (as the admin and as the tenant that owns the
// 100,000 jobs), a collection page of 100 of them and a job page, in the server (ms/page is
// reported per page).
func BenchmarkPages100k(b *testing.B) {
	h, admin, tenant := seed100k(b)
	h.ui.late.sample(h.clock.Now())
	for range 60 {
		h.clock.Advance(time.Minute)
		h.ui.late.sample(h.clock.Now())
	}
	for _, pg := range []struct{ name, session, path, want string }{
		{"overview-admin", admin, "/ui/", `<table id="problems">`},
		{"overview-tenant", tenant, "/ui/", `<table id="problems">`},
		{"collection-100", admin, "/ui/subscriptions/sub-a/resourceGroups/rg1/jobCollections/big3", `data-job="job-00099"`},
		{"job", admin, "/ui/subscriptions/sub-a/resourceGroups/rg1/jobCollections/big3/jobs/job-00042", `id="calendar"`},
	} {
		b.Run(pg.name, func(b *testing.B) {
			cpu0 := cpuTime(b)
			for b.Loop() {
				req := httptest.NewRequest(http.MethodGet, pg.path, nil)
				req.AddCookie(&http.Cookie{Name: cookieName, Value: pg.session})
				w := httptest.NewRecorder()
				h.ui.ServeHTTP(w, req)
				if w.Code != http.StatusOK || !strings.Contains(w.Body.String(), pg.want) {
					b.Fatalf("%s: %d, lacks %s", pg.path, w.Code, pg.want)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/page")
			b.ReportMetric(float64((cpuTime(b)-cpu0).Microseconds())/1000/float64(b.N), "cpu-ms/page")
		})
	}
}
