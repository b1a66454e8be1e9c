package api

import (
	"fmt"
	"net/http"
	"testing"
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
