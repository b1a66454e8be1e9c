package api

import (
	"log/slog"
	"net/http"
	"testing"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/jobstate"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/testlog"
)

// TestChangeCancelsTheWaitingOccurrence: a PUT or PATCH of a job is a change
// (jobstate.WaitingOnChange): the occurrence its BufferOne policy keeps waiting for its
// unfinished execution is cancelled in the write (not stored, off executionCount, as the answer
// says); the unfinished execution stays.
func TestChangeCancelsTheWaitingOccurrence(t *testing.T) {
	var logs testlog.Buffer
	h := newHarness(t, func(c *Config) { c.Logger = slog.New(slog.NewJSONHandler(&logs, nil)) })
	h.collection(collPath, `{"sku":{"name":"Standard"}}`)
	jobPath := collPath + "/jobs/j1" + apiVersion
	seen := 0 // cancels logged so far
	for _, change := range []struct{ method, body string }{
		{http.MethodPatch, `{"properties":{"overlap":"Allow"}}`},
		{http.MethodPut, whenJob(`"overlap":"BufferOne","note":"replaced while one waits"`)},
	} {
		if r := h.do(http.MethodPut, jobPath, adminToken, whenJob(`"overlap":"BufferOne"`)); r.status != 201 && r.status != 200 {
			t.Fatalf("PUT: %d %s", r.status, r.body)
		}
		j := h.storedJob("j1")
		claim := func(c store.ExecutionClaim) store.ExecutionClaimResult {
			t.Helper()
			res, err := h.store.ExecutionClaimMany(t.Context(), store.ExecutionClaimManyParams{Now: h.clock.Now(), Claims: []store.ExecutionClaim{c}})
			if err != nil || res[0].Err != nil {
				t.Fatalf("claim: %v %+v", err, res)
			}
			return res[0]
		}
		now := h.clock.Now()
		first := claim(store.ExecutionClaim{Execution: store.Execution{JobID: j.ID, Tag: "first", Scheduled: now, Phase: store.ActionMain, DueAt: now, ClaimedAt: now},
			ExpectVersion: j.Version, NextExecutionTime: j.Status.NextExecutionTime})
		j = h.storedJob("j1")
		if !claim(store.ExecutionClaim{Execution: store.Execution{JobID: j.ID, Tag: "waiting", Scheduled: now, Phase: store.ActionMain, DueAt: now, ClaimedAt: now},
			ExpectVersion: j.Version, NextExecutionTime: j.Status.NextExecutionTime, Overlap: jobstate.OverlapBufferOne}).Buffered {
			t.Fatal("not buffered")
		}
		before := h.storedJob("j1").Status.ExecutionCount

		r := h.must(200, change.method, jobPath, change.body)
		xs, err := h.store.ExecutionListUnfinished(t.Context(), store.ExecutionListUnfinishedParams{JobID: j.ID})
		if err != nil {
			t.Fatal(err)
		}
		tags := []string{}
		for _, x := range xs {
			tags = append(tags, x.Tag)
		}
		got := []any{tags, get(r.json(t), "properties", "status", "executionCount"), h.storedJob("j1").Status.ExecutionCount}
		want := []any{[]string{"first"}, float64(before - 1), before - 1}
		if len(tags) != 1 || tags[0] != "first" || got[1] != want[1] || got[2] != want[2] {
			t.Fatalf("%s: after the change %v, want %v", change.method, got, want)
		}
		// The cancel is logged with the job and the tag.
		ls := cancelLogs(t, logs.String())[seen:]
		if len(ls) != 1 || ls[0].Msg != "waiting occurrence cancelled: its job changed" || ls[0].JobID != j.ID || ls[0].Tag != "waiting" ||
			!ls[0].Expected.Equal(now) {
			t.Fatalf("%s: cancels logged %+v", change.method, ls)
		}
		seen++
		// The first ends: the next round starts from a job with nothing stored.
		if _, err := h.store.AttemptRecordMany(t.Context(), store.AttemptRecordManyParams{Now: now, Records: []store.AttemptRecord{{
			ExecutionID: first.Execution.ID, JobID: j.ID, Finished: true, Release: true,
			History: store.HistoryEntry{ExecutionTag: "first", ActionName: store.ActionMain, Status: store.HistoryCompleted, StartTime: now, EndTime: now}}}}); err != nil {
			t.Fatal(err)
		}
	}
}
