package api

import (
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
)

const httpsAction = `"action":{"type":"Https","request":{"uri":"https://e.com","method":"GET"}}`

func TestJobListPagingAndFilter(t *testing.T) {
	h := newHarness(t)
	h.collection(collPath, `{"sku":{"name":"Standard"}}`)
	for _, n := range []string{"a", "b", "c"} {
		h.must(201, http.MethodPut, collPath+"/jobs/"+n+apiVersion, `{"properties":{"state":"Disabled",`+httpsAction+`}}`)
	}
	h.must(201, http.MethodPut, collPath+"/jobs/d"+apiVersion, `{"properties":{`+httpsAction+`}}`)
	r := h.must(200, http.MethodGet, collPath+"/jobs"+apiVersion+"&$top=2&$filter=state%20eq%20%27disabled%27", nil)
	if names(t, r) != "jc1/a,jc1/b" {
		t.Fatalf("page 1: %s", r.body)
	}
	next, _ := get(r.json(t), "nextLink").(string)
	r = h.must(200, http.MethodGet, next, nil)
	if names(t, r) != "jc1/c" || get(r.json(t), "nextLink") != nil {
		t.Fatalf("page 2 (%s): %s", next, r.body)
	}
	r = h.must(200, http.MethodGet, collPath+"/jobs"+apiVersion+"&$filter=STATE+eq+Enabled", nil)
	if names(t, r) != "jc1/d" {
		t.Fatalf("enabled: %s", r.body)
	}
	r = h.must(400, http.MethodGet, collPath+"/jobs"+apiVersion+"&$filter=state+eq+sleeping", nil)
	if _, msg := r.errorBody(t); msg != `$filter "state eq sleeping": "sleeping" is not a state` {
		t.Errorf("bad filter: %q", msg)
	}
	h.must(404, http.MethodGet, "/subscriptions/sub-a/resourceGroups/rg1/providers/Microsoft.Scheduler/jobCollections/none/jobs"+apiVersion, nil)
}

func TestRunEnableDisableAndHistory(t *testing.T) {
	h := newHarness(t)
	h.collection(collPath, `{"sku":{"name":"Standard"}}`)
	h.must(201, http.MethodPut, jobPath, `{"properties":{"startTime":"2026-11-18T13:00:00Z",`+httpsAction+`,"recurrence":{"frequency":"Hour"}}}`)
	j := h.storedJob("j1")
	h.must(200, http.MethodPost, collPath+"/jobs/j1/run"+apiVersion, nil)
	if _, _, runs := h.disp.calls(); !slices.Equal(runs, []int64{j.ID}) {
		t.Fatalf("RunNow calls %v, want [%d]", runs, j.ID)
	}
	next := func() string {
		return rfc3339UTC(h.storedJob("j1").Status.NextExecutionTime)
	}
	if got := next(); got != "2026-11-18T13:00:00Z" {
		t.Fatalf("next %q", got)
	}
	h.must(200, http.MethodPost, collPath+"/disable"+apiVersion, nil)
	if got := next(); got != "" {
		t.Fatalf("next after disable %q", got)
	}
	if s := get(h.must(200, http.MethodGet, collPath+apiVersion, nil).json(t), "properties", "state"); s != "Disabled" {
		t.Fatalf("collection state %v", s)
	}
	// Enabled again later: resumes from the next candidate after now, nothing replayed.
	h.clock.Set(time.Date(2026, 11, 18, 15, 30, 0, 0, time.UTC))
	h.must(200, http.MethodPost, collPath+"/enable"+apiVersion, nil)
	if got := next(); got != "2026-11-18T16:00:00Z" {
		t.Fatalf("next after enable %q", got)
	}
	if _, colls, _ := h.disp.calls(); !slices.Equal(colls, []int64{j.CollectionID, j.CollectionID}) {
		t.Errorf("CollectionChanged calls %v, want [%d %d]", colls, j.CollectionID, j.CollectionID)
	}

	// History, newest first, filtered, paged: two attempts of one manual execution.
	res, err := h.store.ExecutionClaimMany(t.Context(), store.ExecutionClaimManyParams{Now: h.clock.Now(), Claims: []store.ExecutionClaim{{
		Execution: store.Execution{JobID: j.ID, Tag: "tag-1", Scheduled: h.clock.Now(), Manual: true, Phase: store.ActionMain, DueAt: h.clock.Now(), ClaimedAt: h.clock.Now()},
	}}})
	if err != nil || res[0].Err != nil {
		t.Fatalf("claim: %v %+v", err, res)
	}
	ex := res[0].Execution
	at := h.clock.Now()
	_, err = h.store.AttemptRecordMany(t.Context(), store.AttemptRecordManyParams{Now: at, Records: []store.AttemptRecord{
		{ExecutionID: ex.ID, JobID: j.ID, Next: at.Add(30 * time.Second), Phase: store.ActionMain, Attempt: 1, History: store.HistoryEntry{
			ActionName: store.ActionMain, Status: store.HistoryFailed, Message: "Http request failed: 500", RetryCount: 0, RepeatCount: 1,
			ExpectedExecutionTime: at, StartTime: at, EndTime: at.Add(time.Second)}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	at2 := at.Add(30 * time.Second)
	_, err = h.store.AttemptRecordMany(t.Context(), store.AttemptRecordManyParams{Now: at2, Records: []store.AttemptRecord{
		{ExecutionID: ex.ID, JobID: j.ID, Finished: true, History: store.HistoryEntry{
			ActionName: store.ActionMain, Status: store.HistoryCompleted, Message: "Http request succeeded: 200", RetryCount: 1, RepeatCount: 1,
			ExpectedExecutionTime: at, StartTime: at2, EndTime: at2.Add(time.Second)}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	r := h.must(200, http.MethodGet, collPath+"/jobs/j1/history"+apiVersion+"&$top=1", nil)
	doc := r.json(t)
	first := get(doc, "value", 0)
	if get(first, "type") != "Microsoft.Scheduler/jobCollections/jobs/history" ||
		get(first, "properties", "status") != "Completed" || get(first, "properties", "retryCount") != 1.0 ||
		get(first, "properties", "startTime") != "2026-11-18T15:30:30Z" || get(first, "properties", "expectedExecutionTime") != "2026-11-18T15:30:00Z" ||
		get(first, "properties", "message") != "Http request succeeded: 200" {
		t.Fatalf("newest entry %s", r.body)
	}
	next2, _ := get(doc, "nextLink").(string)
	r = h.must(200, http.MethodGet, next2, nil)
	if get(r.json(t), "value", 0, "properties", "status") != "Failed" || get(r.json(t), "nextLink") != nil {
		t.Fatalf("second page %s", r.body)
	}
	r = h.must(200, http.MethodGet, collPath+"/jobs/j1/history"+apiVersion+"&$filter=status+eq+'FAILED'", nil)
	if v := list(get(r.json(t), "value")); len(v) != 1 || get(v[0], "properties", "message") != "Http request failed: 500" {
		t.Fatalf("failed only %s", r.body)
	}
	// A skipped occurrence (SPEC 8: overlap, misfire Skip) is an entry with status Skipped, which
	// the filter finds too.
	cur, err := h.store.JobGetByID(t.Context(), store.JobGetByIDParams{ID: j.ID})
	if err != nil {
		t.Fatal(err)
	}
	res, err = h.store.ExecutionClaimMany(t.Context(), store.ExecutionClaimManyParams{Now: at2, Claims: []store.ExecutionClaim{{
		Execution: store.Execution{JobID: j.ID, Tag: "tag-2"}, ExpectVersion: cur.Version, NextExecutionTime: cur.Status.NextExecutionTime,
		Skip: &store.HistoryEntry{ExecutionTag: "tag-2", ActionName: store.ActionMain, Status: store.HistorySkipped, Message: "Skipped 2 occurrences",
			ExpectedExecutionTime: at, StartTime: at2, EndTime: at2},
	}}})
	if err != nil || res[0].Err != nil || !res[0].Skipped {
		t.Fatalf("skip claim: %v %+v", err, res)
	}
	r = h.must(200, http.MethodGet, collPath+"/jobs/j1/history"+apiVersion+"&$filter=status+eq+'skipped'", nil)
	if v := list(get(r.json(t), "value")); len(v) != 1 || get(v[0], "properties", "status") != "Skipped" ||
		get(v[0], "properties", "message") != "Skipped 2 occurrences" {
		t.Fatalf("skipped only %s", r.body)
	}
}

func TestPreview(t *testing.T) {
	h := newHarness(t)
	r := h.do(http.MethodPost, "/preview/occurrences?count=3&now=2015-04-08T13:00:00Z", adminToken,
		`{"properties":{"startTime":"2015-04-07T14:00:00Z","recurrence":{"frequency":"Day","interval":2}}}`)
	if r.status != 200 || string(r.body) != `{"value":["2015-04-09T14:00:00Z","2015-04-11T14:00:00Z","2015-04-13T14:00:00Z"],"describe":"at 14:00 every 2 days, from 2015-04-07 14:00"}` {
		t.Fatalf("preview: %d %s", r.status, r.body)
	}
	// Bare properties, the fake clock as now, a zone.
	r = h.do(http.MethodPost, "/preview/occurrences?count=2", subAToken,
		`{"startTime":"2026-11-19T09:00:00","recurrence":{"frequency":"Day","timeZone":"Europe/Berlin"}}`)
	if r.status != 200 || string(r.body) != `{"value":["2026-11-19T09:00:00+01:00","2026-11-20T09:00:00+01:00"],"describe":"at 09:00 every day, from 2026-11-19 09:00, Europe/Berlin"}` {
		t.Fatalf("preview in a zone: %d %s", r.status, r.body)
	}
	r = h.do(http.MethodPost, "/preview/occurrences", adminToken, `{"recurrence":{"frequency":"Month","schedule":{"monthDays":[32]}}}`)
	if _, msg := r.errorBody(t); r.status != 400 || !strings.HasPrefix(msg, "recurrence.schedule.monthDays[0]") {
		t.Fatalf("bad rule: %d %q", r.status, msg)
	}
	h.must(400, http.MethodPost, "/preview/occurrences?count=1001", `{}`)
}

func TestHealthReadinessMetrics(t *testing.T) {
	h := newHarness(t)
	r := h.do(http.MethodGet, "/healthz", "", nil)
	if r.status != 200 || string(r.body) != `{"status":"ok"}` {
		t.Fatalf("healthz %d %s", r.status, r.body)
	}
	r = h.do(http.MethodGet, "/readyz", "", nil)
	if r.status != 200 || string(r.body) != `{"dispatcher":"ok","store":"ok"}` {
		t.Fatalf("readyz %d %s", r.status, r.body)
	}
	h.disp.mu.Lock()
	h.disp.notReady = true
	h.disp.mu.Unlock()
	r = h.do(http.MethodGet, "/readyz", "", nil)
	if r.status != 503 || string(r.body) != `{"dispatcher":"not ready","store":"ok"}` {
		t.Fatalf("readyz with the dispatcher not ready %d %s", r.status, r.body)
	}
	h.do(http.MethodGet, collPath+apiVersion, adminToken, nil)
	r = h.must(200, http.MethodGet, "/metrics", nil)
	if !strings.Contains(string(r.body), `scheduler_http_requests_total{code="404",method="GET",route="collection"} 1`) {
		t.Fatalf("metrics lack the request counter:\n%s", r.body)
	}
	r = h.do(http.MethodDelete, "/nowhere", adminToken, nil)
	if code, _ := r.errorBody(t); r.status != 404 || code != "ResourceNotFound" {
		t.Fatalf("unknown path %d %s", r.status, r.body)
	}
	r = h.do(http.MethodPost, collPath+apiVersion, adminToken, nil)
	if r.status != 405 {
		t.Fatalf("POST on a collection %d %s", r.status, r.body)
	}
}
