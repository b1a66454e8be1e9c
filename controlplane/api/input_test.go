package api

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
)

// raw sends a request with exactly the headers given (name, value pairs; a name may repeat) and
// the admin token.
func (h *harness) raw(method, path string, body string, headers ...string) response {
	h.t.Helper()
	req, err := http.NewRequestWithContext(h.t.Context(), method, h.srv.URL+path, strings.NewReader(body))
	if err != nil {
		h.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+adminToken)
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Add(headers[i], headers[i+1])
	}
	resp, err := h.srv.Client().Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		h.t.Fatal(err)
	}
	return response{status: resp.StatusCode, header: resp.Header, body: b}
}

// unchanged fails the test when the stored collection jc1 or its job j1 changed since before.
func unchanged(t *testing.T, h *harness, before []string, versions [2]int64) {
	t.Helper()
	if after := storedCollections(t, h, "sub-a"); strings.Join(after, " ") != strings.Join(before, " ") {
		t.Fatalf("stored names: %v, were %v", after, before)
	}
	if v := [2]int64{h.storedCollection().Version, h.storedJob("j1").Version}; v != versions {
		t.Fatalf("stored versions %v, were %v", v, versions)
	}
}

func (h *harness) storedCollection() *store.Collection {
	h.t.Helper()
	c, err := h.store.CollectionGet(h.t.Context(), store.CollectionGetParams{Key: store.CollectionKey{Subscription: "sub-a", ResourceGroup: "rg1", Name: "jc1"}})
	if err != nil {
		h.t.Fatal(err)
	}
	return c
}

// inputFixture is a collection jc1 with a job j1, and what was stored.
func inputFixture(t *testing.T) (*harness, []string, [2]int64) {
	h := newHarness(t)
	h.collection(collPath, `{"sku":{"name":"Standard"}}`)
	h.must(http.StatusCreated, http.MethodPut, collPath+"/jobs/j1"+apiVersion, goodJob)
	return h, storedCollections(t, h, "sub-a"), [2]int64{h.storedCollection().Version, h.storedJob("j1").Version}
}

// bodyRoutes are the requests that take a body, each with a valid one.
var bodyRoutes = []struct{ method, path, body string }{
	{http.MethodPut, collPath + apiVersion, `{"location":"local","properties":{"sku":{"name":"P20Premium"}}}`},
	{http.MethodPatch, collPath + apiVersion, `{"properties":{"state":"Disabled"}}`},
	{http.MethodPut, collPath + "/jobs/j1" + apiVersion, goodJob},
	{http.MethodPatch, collPath + "/jobs/j1" + apiVersion, `{"properties":{"state":"Disabled"}}`},
	{http.MethodPut, collPath + "/jobs/j2" + apiVersion, goodJob},
	{http.MethodPost, "/preview/occurrences?count=2", goodJob},
}

func TestContentType(t *testing.T) {
	h, before, versions := inputFixture(t)
	for _, ct := range [][]string{
		nil,
		{"Content-Type", "text/plain"},
		{"Content-Type", "text/plain; charset=utf-8"},
		{"Content-Type", "application/x-www-form-urlencoded"},
		{"Content-Type", "application/xml"},
		{"Content-Type", "application/json; charset=latin1"},
		{"Content-Type", "application/json; charset=utf-16"},
		{"Content-Type", "text/json; charset=iso-8859-1"},
		{"Content-Type", "application/jsonx"},
		{"Content-Type", "application/json;;"},
		{"Content-Type", ""},
		{"Content-Type", "application/json", "Content-Type", "text/plain"},
	} {
		for _, rt := range bodyRoutes {
			r := h.raw(rt.method, rt.path, rt.body, ct...)
			code, msg := r.errorBody(t)
			if r.status != http.StatusUnsupportedMediaType || code != "UnsupportedMediaType" || !strings.Contains(msg, "send Content-Type: application/json") {
				t.Errorf("%s %s with %q: %d %s, want 415 UnsupportedMediaType", rt.method, rt.path, ct, r.status, r.body)
			}
		}
	}
	unchanged(t, h, before, versions)
	// What is accepted.
	for _, ct := range []string{"application/json", "APPLICATION/JSON; charset=UTF-8", "text/json", `application/json; charset="utf-8"`, "application/json; odata=minimalmetadata"} {
		r := h.raw(http.MethodPatch, collPath+"/jobs/j1"+apiVersion, `{"properties":{"state":"Enabled"}}`, "Content-Type", ct)
		if r.status != http.StatusOK {
			t.Errorf("PATCH with %q: %d %s", ct, r.status, r.body)
		}
	}
}

func TestInvalidUTF8Body(t *testing.T) {
	h, before, versions := inputFixture(t)
	for _, body := range []string{
		"\xff",
		`{"properties":{"state":"Disab` + "\xffled" + `"}}`,
		`{"location":"loc` + "\xfe" + `","properties":{}}`,
		`{"tags":{"a` + "\xc3" + `":"b"},"properties":{}}`,
		`{"properties":{"action":{"type":"Https","request":{"uri":"https://example.com/` + "\xed\xa0\x80" + `","method":"GET"}}}}`,
		`{"properties":{}}` + "\xff",
	} {
		for _, rt := range bodyRoutes {
			r := h.do(rt.method, rt.path, adminToken, body)
			code, msg := r.errorBody(t)
			if r.status != http.StatusBadRequest || code != "BadRequest" || !strings.Contains(msg, "the document is not valid UTF-8: byte 0x") {
				t.Errorf("%s %s with %q: %d %s, want 400 naming the byte", rt.method, rt.path, body, r.status, r.body)
			}
		}
	}
	unchanged(t, h, before, versions)
}

func TestDuplicateMembers(t *testing.T) {
	h, before, versions := inputFixture(t)
	const action = `"action":{"type":"Https","request":{"uri":"https://example.com/x","method":"GET"}}`
	for _, tc := range []struct{ body, path, msg string }{
		{`{"properties":{"state":"Disabled"},"Properties":{"state":"Enabled"}}`, "Properties", `repeats the member "properties" in another case`},
		{`{"properties":{"state":"Disabled"},"properties":{"state":"Enabled"}}`, "properties", "appears twice"},
		{`{"properties":{"state":"Disabled"},"\u0070roperties":{"state":"Enabled"}}`, "properties", "appears twice"},
		{`{"properties":{"state":"Disabled","STATE":"Enabled"}}`, "properties.STATE", `repeats the member "state"`},
		{`{"properties":{` + action + `,"Action":{}}}`, "properties.Action", `repeats the member "action"`},
		{`{"properties":{"action":{"type":"Https","request":{"uri":"https://e.com","method":"GET","Method":"PUT"}}}}`, "properties.action.request.Method", `repeats the member "method"`},
		{`{"properties":{"action":{"type":"Https","request":{"uri":"https://e.com","method":"GET","headers":{"X-A":"1","x-a":"2"}}}}}`, "properties.action.request.headers.x-a", `repeats the member "X-A"`},
		{`{"tags":{"team":"a","Team":"b"},"properties":{}}`, "tags.Team", `repeats the member "team"`},
		{`{"properties":{"recurrence":{"frequency":"Month","schedule":{"monthlyOccurrences":[{"day":"Friday"},{"day":"Monday","occurrence":1,"Occurrence":-1}]}}}}`,
			"properties.recurrence.schedule.monthlyOccurrences[1].Occurrence", `repeats the member "occurrence"`},
		{`{"properties":{"ſtate":"Disabled","state":"Enabled"}}`, "properties.state", `repeats the member "ſtate"`},
	} {
		for _, rt := range bodyRoutes {
			if rt.method == http.MethodPost && strings.HasPrefix(tc.path, "tags") {
				continue // the preview takes no tags
			}
			r := h.do(rt.method, rt.path, adminToken, tc.body)
			code, msg := r.errorBody(t)
			if r.status != http.StatusBadRequest || code != "BadRequest" || !strings.Contains(msg, tc.path+": "+tc.msg) {
				t.Errorf("%s %s with %s: %d %s, want 400: %s: %s", rt.method, rt.path, tc.body, r.status, r.body, tc.path, tc.msg)
			}
		}
	}
	unchanged(t, h, before, versions)
	// A member name that Unicode folds onto a field's name is not that field.
	r := h.do(http.MethodPatch, collPath+"/jobs/j1"+apiVersion, adminToken, `{"properties":{"ſtate":"Disabled"}}`)
	if _, msg := r.errorBody(t); r.status != 400 || !strings.Contains(msg, "properties.ſtate: unknown field") {
		t.Errorf("ſtate: %d %s", r.status, r.body)
	}
	unchanged(t, h, before, versions)
}

// TestSamePatchFortyTimes: one request, one answer. A PATCH whose members repeat in another case
// flipped between two states with the order a map was iterated in.
func TestSamePatchFortyTimes(t *testing.T) {
	h, before, versions := inputFixture(t)
	for _, body := range []string{
		`{"properties":{"state":"Disabled"},"Properties":{"state":"Enabled"}}`,
		`{"properties":{"state":"Disabled","State":"Enabled"}}`,
		`{"properties":{"action":{"request":{"headers":{"X-A":"1","x-a":"2"}}}}}`,
	} {
		first := h.do(http.MethodPatch, collPath+"/jobs/j1"+apiVersion, adminToken, body)
		if first.status != http.StatusBadRequest {
			t.Errorf("PATCH %s: %d %s, want 400", body, first.status, first.body)
		}
		for i := range 39 {
			r := h.do(http.MethodPatch, collPath+"/jobs/j1"+apiVersion, adminToken, body)
			if r.status != first.status || string(r.body) != string(first.body) {
				t.Fatalf("PATCH %s, try %d: %d %s; the first answer was %d %s", body, i+2, r.status, r.body, first.status, first.body)
			}
		}
	}
	unchanged(t, h, before, versions)
}

// TestMonthlyOccurrenceSpelledAsTheSwagger: the 2016-03-01 swagger (and Azure's SDKs) spell the
// member "Occurrence"; both spellings are read, "Occurrence" is written, both at once are a 400.
func TestMonthlyOccurrenceSpelledAsTheSwagger(t *testing.T) {
	h := newHarness(t)
	h.collection(collPath, `{"sku":{"name":"Standard"}}`)
	for i, member := range []string{"occurrence", "Occurrence", "OCCURRENCE"} {
		body := `{"properties":{"startTime":"2026-12-01T10:00:00Z","action":{"type":"Https","request":{"uri":"https://example.com/x","method":"GET"}},` +
			`"recurrence":{"frequency":"Month","schedule":{"monthlyOccurrences":[{"day":"friday","` + member + `":-1}]}}}}`
		path := collPath + "/jobs/m" + string(rune('0'+i)) + apiVersion
		for _, r := range []response{h.must(http.StatusCreated, http.MethodPut, path, body), h.must(http.StatusOK, http.MethodGet, path, nil)} {
			if !strings.Contains(string(r.body), `"monthlyOccurrences":[{"day":"Friday","Occurrence":-1}]`) {
				t.Errorf("sent %q, read back %s", member, r.body)
			}
		}
	}
}
