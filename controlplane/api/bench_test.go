package api

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
)

// BenchmarkJobPut measures creating a job through the API: HTTP, strict decoding, validation,
// quota checks (1,000 occurrences), sealing and the SQLite write.
func BenchmarkJobPut(b *testing.B) {
	h := newHarness(b)
	h.collection(collPath, `{"sku":{"name":"P20Premium"},"quota":{"maxJobCount":1000000}}`)
	body := `{"properties":{"startTime":"2026-12-01T10:00:00Z","action":{"type":"Https","request":{"uri":"https://example.com/hook","method":"POST","body":"x",` +
		`"authentication":{"type":"Basic","username":"u","password":"p"}}},"recurrence":{"frequency":"Hour","schedule":{"minutes":[0,30]}}}}`
	b.ResetTimer()
	for i := range b.N {
		h.must(http.StatusCreated, http.MethodPut, fmt.Sprintf("%s/jobs/job-%d%s", collPath, i, apiVersion), body)
	}
}

// BenchmarkJobReplace measures replacing one job through the API (one client): the read of
// the collection and the job, validation, sealing and the SQLite write; since job creates in a
// known collection are tried blind, also the refused create before the read.
func BenchmarkJobReplace(b *testing.B) {
	h := newHarness(b)
	h.collection(collPath, `{"sku":{"name":"P20Premium"},"quota":{"maxJobCount":1000000}}`)
	body := `{"properties":{"startTime":"2026-12-01T10:00:00Z","action":{"type":"Https","request":{"uri":"https://example.com/hook","method":"POST","body":"x",` +
		`"authentication":{"type":"Basic","username":"u","password":"p"}}},"recurrence":{"frequency":"Hour","schedule":{"minutes":[0,30]}}}}`
	h.must(http.StatusCreated, http.MethodPut, jobPath, body)
	b.ResetTimer()
	for range b.N {
		h.must(http.StatusOK, http.MethodPut, jobPath, body)
	}
}

// BenchmarkJobGet measures reading a job through the API.
func BenchmarkJobGet(b *testing.B) {
	h := newHarness(b)
	h.collection(collPath, `{"sku":{"name":"P20Premium"},"quota":{"maxJobCount":1000000}}`)
	h.must(http.StatusCreated, http.MethodPut, jobPath, `{"properties":{`+httpsAction+`,"recurrence":{"frequency":"Minute"}}}`)
	b.ResetTimer()
	for range b.N {
		h.must(http.StatusOK, http.MethodGet, jobPath, "")
	}
}

// BenchmarkJobListPage measures one page of 100 jobs.
func BenchmarkJobListPage(b *testing.B) {
	h := newHarness(b)
	h.collection(collPath, `{"sku":{"name":"P20Premium"},"quota":{"maxJobCount":1000000}}`)
	for i := range 150 {
		h.must(http.StatusCreated, http.MethodPut, fmt.Sprintf("%s/jobs/job-%03d%s", collPath, i, apiVersion), `{"properties":{`+httpsAction+`}}`)
	}
	b.ResetTimer()
	for range b.N {
		h.must(http.StatusOK, http.MethodGet, collPath+"/jobs"+apiVersion+"&$top=100", "")
	}
}

// BenchmarkJobPutParallel measures job creates from 32 concurrent clients, as schedbench sends
// them (1,000 jobs per P20Premium collection, each at its quota when full), and reports PUT/s:
// HTTP, validation, quota checks, sealing and the SQLite write, the clients included.
func BenchmarkJobPutParallel(b *testing.B) {
	h := newHarness(b)
	const perCollection = 1000
	collections := b.N/perCollection + 1
	for c := range collections {
		h.collection(fmt.Sprintf("%s-%03d", collPath, c), `{"sku":{"name":"P20Premium"},"quota":{"maxJobCount":1000}}`)
	}
	body := `{"properties":{"startTime":"2026-12-01T10:00:00Z","action":{"type":"Http","request":{"uri":"http://127.0.0.1:1/fire","method":"POST","body":"bench"},` +
		`"retryPolicy":{"retryType":"None"}},"recurrence":{"frequency":"Minute","interval":1},"state":"Enabled"}}`
	client := h.srv.Client()
	tr, ok := client.Transport.(*http.Transport)
	if !ok {
		b.Fatalf("transport %T, want *http.Transport", client.Transport)
	}
	tr.MaxIdleConnsPerHost = 64
	var next atomic.Int64
	b.SetParallelism(16) // 2 CPUs: 32 clients
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			i := next.Add(1) - 1
			url := fmt.Sprintf("%s%s-%03d/jobs/job-%08d%s", h.srv.URL, collPath, i/perCollection, i, apiVersion)
			req, err := http.NewRequestWithContext(b.Context(), http.MethodPut, url, strings.NewReader(body))
			if err != nil {
				b.Error(err)
				return
			}
			req.Header.Set("Authorization", "Bearer "+adminToken)
			req.Header.Set("Content-Type", "application/json")
			resp, err := client.Do(req)
			if err != nil {
				b.Error(err)
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
			if resp.StatusCode != http.StatusCreated {
				b.Errorf("PUT %s: status %d", url, resp.StatusCode)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "PUT/s")
}

// BenchmarkCollectionDisable measures disabling then enabling a collection of 200 jobs through
// the API, a quarter of them backfilling (3 occurrences each, restored after each enable with
// the store's own call, outside the timer): the collection's write (which cancels the backfills'
// waiting executions), then the rescheduling write of every job, both ways.
func BenchmarkCollectionDisable(b *testing.B) {
	h := newHarness(b)
	h.collection(collPath, `{"sku":{"name":"P20Premium"}}`)
	body := `{"properties":{"startTime":"2026-11-18T00:00:00Z","action":{"type":"Http","request":{"uri":"http://127.0.0.1:1/hook","method":"POST"}},` +
		`"recurrence":{"frequency":"Hour"}}}`
	var ids []int64
	for i := range 200 {
		h.must(http.StatusCreated, http.MethodPut, fmt.Sprintf("%s/jobs/job-%d%s", collPath, i, apiVersion), body)
		if i%4 == 0 {
			ids = append(ids, h.storedJob(fmt.Sprintf("job-%d", i)).ID)
		}
	}
	ctx := b.Context()
	backfill := func() {
		for _, id := range ids {
			p := store.ExecutionBackfillParams{JobID: id, Now: h.clock.Now()}
			for k := range 3 {
				p.Executions = append(p.Executions, store.Execution{Tag: fmt.Sprintf("b%d-%d-%d", id, k, h.clock.Now().UnixNano()),
					Scheduled: t0.Add(time.Duration(k-5) * time.Hour)})
			}
			if _, err := h.store.ExecutionBackfill(ctx, p); err != nil {
				b.Fatal(err)
			}
		}
		// The executions under way finish: nothing is left of the backfills but what waits.
		xs, err := h.store.ExecutionListUnfinished(ctx, store.ExecutionListUnfinishedParams{})
		if err != nil {
			b.Fatal(err)
		}
		var recs []store.AttemptRecord
		for _, x := range xs {
			if !x.DueAt.Equal(store.BackfillWaiting) {
				recs = append(recs, store.AttemptRecord{ExecutionID: x.ID, JobID: x.JobID, Finished: true, Cancelled: true})
			}
		}
		if _, err := h.store.AttemptRecordMany(ctx, store.AttemptRecordManyParams{Records: recs, Now: h.clock.Now()}); err != nil {
			b.Fatal(err)
		}
		h.clock.Advance(time.Millisecond)
	}
	for b.Loop() {
		b.StopTimer()
		backfill()
		b.StartTimer()
		h.must(http.StatusOK, http.MethodPost, collPath+"/disable"+apiVersion, nil)
		h.must(http.StatusOK, http.MethodPost, collPath+"/enable"+apiVersion, nil)
	}
}
