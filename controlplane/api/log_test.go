package api

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/schedulerhq/terraform-provider-scheduler/internal/testlog"
)

// TestRequestLog: one JSON line per request with the request id (the x-ms-request-id answered)
// and the job id; secrets never appear.
func TestRequestLog(t *testing.T) {
	var logs testlog.Buffer
	h := newHarness(t, func(c *Config) { c.Logger = slog.New(slog.NewJSONHandler(&logs, nil)) })
	h.collection(collPath, `{"sku":{"name":"Standard"}}`)
	r := h.must(201, http.MethodPut, jobPath, `{"properties":{"action":{"type":"Https","request":{"uri":"https://e.com","method":"GET",`+
		`"authentication":{"type":"Basic","username":"u","password":"pa55word"}}}}}`)
	id := r.header.Get("x-ms-request-id")
	job := h.storedJob("j1")
	var found bool
	for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var m struct {
			Msg       string  `json:"msg"`
			RequestID string  `json:"request_id"`
			JobID     int64   `json:"job_id"`
			Method    string  `json:"method"`
			Status    int     `json:"status"`
			Path      string  `json:"path"`
			Duration  float64 `json:"duration_ms"`
		}
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		if m.RequestID == id {
			found = true
			if m.Msg != "request" || m.JobID != job.ID || m.Method != "PUT" || m.Status != 201 ||
				m.Path != "/subscriptions/sub-a/resourceGroups/rg1/providers/Microsoft.Scheduler/jobCollections/jc1/jobs/j1" {
				t.Errorf("log line %s", line)
			}
		}
	}
	if !found {
		t.Fatalf("no log line with request id %s:\n%s", id, logs.String())
	}
	h.must(400, http.MethodPut, jobPath, `{"properties":{"action":{"type":"Https","request":{"uri":"http://e.com","method":"GET",`+
		`"authentication":{"type":"Basic","username":"u","password":"pa55word"}}}}}`)
	if strings.Contains(logs.String(), "pa55word") {
		t.Fatalf("a secret is in the log:\n%s", logs.String())
	}
}
