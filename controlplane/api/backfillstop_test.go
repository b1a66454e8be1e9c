package api

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/testlog"
)

// TestDisablingCancelsTheBackfill: disabling a job (PATCH) or its collection (POST .../disable)
// while its backfill runs cancels the backfill's executions not yet started in the write (the
// running one stays; executionCount two less in the answer and the store), a Disabled job's
// too when its collection is disabled (its jobs do not run, not even on request); a change of a
// job that was already Disabled (its note) leaves its backfill alone.
func TestDisablingCancelsTheBackfill(t *testing.T) {
	jobPath := collPath + "/jobs/j1" + apiVersion
	for _, tc := range []struct {
		name, state string
		change      func(h *harness) response
		wantTags    []string
		wantCount   int
		wantLogged  []string
	}{
		{"job disabled", "Enabled", func(h *harness) response {
			return h.must(http.StatusOK, http.MethodPatch, jobPath, `{"properties":{"state":"Disabled"}}`)
		}, []string{"b1"}, 1, []string{"b2", "b3"}},
		{"collection disabled", "Enabled", func(h *harness) response {
			h.must(http.StatusOK, http.MethodPost, collPath+"/disable"+apiVersion, nil)
			return response{}
		}, []string{"b1"}, 1, []string{"b2", "b3"}},
		{"a Disabled job's collection disabled", "Disabled", func(h *harness) response {
			h.must(http.StatusOK, http.MethodPost, collPath+"/disable"+apiVersion, nil)
			return response{}
		}, []string{"b1"}, 1, []string{"b2", "b3"}},
		{"a Disabled job's note", "Disabled", func(h *harness) response {
			return h.must(http.StatusOK, http.MethodPatch, jobPath, `{"properties":{"note":"still backfilling"}}`)
		}, []string{"b1", "b2", "b3"}, 3, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var logs testlog.Buffer
			h := newHarness(t, func(c *Config) { c.Logger = slog.New(slog.NewJSONHandler(&logs, nil)) })
			h.collection(collPath, `{"sku":{"name":"Standard"}}`)
			h.must(http.StatusCreated, http.MethodPut, jobPath, whenJob(fmt.Sprintf(`"state":%q`, tc.state)))
			j := h.storedJob("j1")
			p := store.ExecutionBackfillParams{JobID: j.ID, Now: h.clock.Now()}
			for i := range 3 {
				p.Executions = append(p.Executions, store.Execution{Tag: fmt.Sprintf("b%d", i+1), Scheduled: h.clock.Now().Add(time.Duration(i-5) * time.Hour)})
			}
			if _, err := h.store.ExecutionBackfill(t.Context(), p); err != nil {
				t.Fatal(err)
			}
			r := tc.change(h)
			xs, err := h.store.ExecutionListUnfinished(t.Context(), store.ExecutionListUnfinishedParams{JobID: j.ID})
			if err != nil {
				t.Fatal(err)
			}
			tags := []string{}
			for _, x := range xs {
				tags = append(tags, x.Tag)
			}
			got := []any{tags, h.storedJob("j1").Status.ExecutionCount}
			want := []any{tc.wantTags, tc.wantCount}
			if r.status != 0 {
				got = append(got, get(r.json(t), "properties", "status", "executionCount"))
				want = append(want, float64(tc.wantCount))
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("after the change %v, want %v", got, want)
			}
			var logged []string
			for _, m := range cancelLogs(t, logs.String()) {
				if m.Msg != "backfill execution cancelled: its job or its collection was disabled" || m.JobID != j.ID || m.Expected.IsZero() {
					t.Errorf("log line %+v", m)
				}
				logged = append(logged, m.Tag)
			}
			if !reflect.DeepEqual(logged, tc.wantLogged) {
				t.Errorf("cancels logged %v, want %v", logged, tc.wantLogged)
			}
		})
	}
}

// cancelLog is a log line of a cancelled execution.
type cancelLog struct {
	Msg      string    `json:"msg"`
	JobID    int64     `json:"job_id"`
	Tag      string    `json:"execution_tag"`
	Expected time.Time `json:"expected_execution_time"`
}

// cancelLogs are the log lines in logs (JSON lines) that name an execution tag, in order.
func cancelLogs(t *testing.T, logs string) []cancelLog {
	t.Helper()
	var out []cancelLog
	for _, line := range strings.Split(strings.TrimSpace(logs), "\n") {
		var m cancelLog
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		if m.Tag != "" {
			out = append(out, m)
		}
	}
	return out
}
