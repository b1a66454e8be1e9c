package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
)

func history(t *testing.T, d store.Driver, j *store.Job, p store.HistoryListParams) []*store.HistoryEntry {
	t.Helper()
	p.Job = j.Key
	hs, err := d.HistoryList(t.Context(), p)
	if err != nil {
		t.Fatal(err)
	}
	return hs
}

func testHistoryList(t *testing.T, d store.Driver) {
	putCollection(t, d, "c", "Enabled")
	j := putJob(t, d, "c", "j", "Enabled", t0)
	other := putJob(t, d, "c", "other", "Enabled", t0)
	e := claim(t, d, scheduledClaim(j, "tag", t0.Add(time.Minute))).Execution
	eo := claim(t, d, scheduledClaim(other, "o", t0.Add(time.Minute))).Execution
	statuses := []string{store.HistoryFailed, store.HistoryPostponed, store.HistoryFailed, store.HistoryCompleted, store.HistoryFailed}
	for i, st := range statuses {
		record(t, d, store.AttemptRecord{ExecutionID: e.ID, JobID: j.ID, History: entry(e, store.ActionMain, st, i, fmt.Sprintf("m%d", i)),
			Next: t0, Phase: store.ActionMain, Attempt: i + 1})
	}
	record(t, d, store.AttemptRecord{ExecutionID: eo.ID, JobID: other.ID, History: entry(eo, store.ActionMain, store.HistoryFailed, 0, "other"),
		Next: t0, Phase: store.ActionMain, Attempt: 1})
	msgs := func(p store.HistoryListParams) []string {
		t.Helper()
		out := []string{}
		for _, h := range history(t, d, j, p) {
			out = append(out, h.Message)
		}
		return out
	}
	equal(t, "newest first", msgs(store.HistoryListParams{}), []string{"m4", "m3", "m2", "m1", "m0"})
	equal(t, "status filter", msgs(store.HistoryListParams{Status: "failed"}), []string{"m4", "m2", "m0"})
	equal(t, "skip and limit", msgs(store.HistoryListParams{Skip: 1, Limit: 2}), []string{"m3", "m2"})
	equal(t, "filter with skip", msgs(store.HistoryListParams{Status: "FAILED", Skip: 2, Limit: 5}), []string{"m0"})
	_, err := d.HistoryList(t.Context(), store.HistoryListParams{Job: store.JobKey{CollectionKey: collectionKey("c"), Name: "absent"}})
	wantErr(t, "history of an absent job", err, store.ErrNotFound)

	// Overlapping executions: the second one starts while the first still retries. Each
	// execution's entries stay together, the newest execution first.
	k := putJob(t, d, "c", "k", "Enabled", t0)
	first := claim(t, d, scheduledClaim(k, "first", t0.Add(time.Minute))).Execution
	second := claim(t, d, scheduledClaim(getJob(t, d, k.ID), "second", t0.Add(2*time.Minute))).Execution
	record(t, d, store.AttemptRecord{ExecutionID: first.ID, JobID: k.ID, History: entry(first, store.ActionMain, store.HistoryFailed, 0, "first 0"),
		Next: t0, Phase: store.ActionMain, Attempt: 1})
	record(t, d, store.AttemptRecord{ExecutionID: second.ID, JobID: k.ID, History: entry(second, store.ActionMain, store.HistoryCompleted, 0, "second 0"),
		Finished: true})
	record(t, d, store.AttemptRecord{ExecutionID: first.ID, JobID: k.ID, History: entry(first, store.ActionMain, store.HistoryCompleted, 1, "first 1"),
		Finished: true})
	var got []string
	for _, h := range history(t, d, k, store.HistoryListParams{}) {
		got = append(got, h.Message)
	}
	equal(t, "overlapping executions", got, []string{"second 0", "first 1", "first 0"})
}
