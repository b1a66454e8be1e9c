package api

import (
	"net/http"
	"strings"
	"testing"
)

func TestAuthentication(t *testing.T) {
	h := newHarness(t)
	h.collection(collPath, `{"sku":{"name":"Standard"}}`)
	otherSub := "/subscriptions/sub-b/resourceGroups/rg1/providers/Microsoft.Scheduler/jobCollections/jc1" + apiVersion
	for _, tc := range []struct {
		name, path, token string
		status            int
		code              string
	}{
		{"no credential", collPath + apiVersion, "", 401, "AuthenticationFailed"},
		{"unknown token", collPath + apiVersion, "nope", 401, "AuthenticationFailed"},
		{"scoped token, own subscription", collPath + apiVersion, subAToken, 200, ""},
		{"scoped token, other subscription (absent)", otherSub, subAToken, 403, "AuthenticationFailed"},
		{"admin, other subscription (absent)", otherSub, adminToken, 404, "ResourceNotFound"},
		{"no credential for preview", "/preview/occurrences", "", 401, "AuthenticationFailed"},
		{"no credential for metrics", "/metrics", "", 401, "AuthenticationFailed"},
		{"admin reads metrics", "/metrics", adminToken, 200, ""},
		{"metrics token reads metrics", "/metrics", metricsToken, 200, ""},
		{"a subscription's token does not read the daemon-wide metrics", "/metrics", subAToken, 403, "AuthenticationFailed"},
		{"metrics token reads no collection", collPath + apiVersion, metricsToken, 403, "AuthenticationFailed"},
		{"metrics token lists no collections", "/subscriptions/sub-a/providers/Microsoft.Scheduler/jobCollections" + apiVersion, metricsToken, 403, "AuthenticationFailed"},
		{"metrics token reads no job", collPath + "/jobs/j1" + apiVersion, metricsToken, 403, "AuthenticationFailed"},
		{"metrics token previews nothing", "/preview/occurrences", metricsToken, 403, "AuthenticationFailed"},
		{"health needs none", "/healthz", "", 200, ""},
		{"readiness needs none", "/readyz", "", 200, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := h.do(http.MethodGet, tc.path, tc.token, nil)
			if r.status != tc.status {
				t.Fatalf("status %d, want %d: %s", r.status, tc.status, r.body)
			}
			if tc.code != "" {
				if code, _ := r.errorBody(t); code != tc.code {
					t.Errorf("code %q, want %q", code, tc.code)
				}
			}
			if tc.status == 401 && r.header.Get("WWW-Authenticate") != `Bearer realm="schedulerd"` {
				t.Errorf("WWW-Authenticate = %q", r.header.Get("WWW-Authenticate"))
			}
		})
	}
	// A scoped token cannot create in another subscription either, and nothing is created.
	r := h.do(http.MethodPut, otherSub, subAToken, `{"properties":{"sku":{"name":"Free"}}}`)
	if r.status != 403 {
		t.Fatalf("PUT with another subscription's token: %d %s", r.status, r.body)
	}
	h.must(404, http.MethodGet, otherSub, nil)
}

func TestAPIVersion(t *testing.T) {
	h := newHarness(t)
	for _, tc := range []struct {
		query  string
		status int
		msg    string
	}{
		{"", 400, "the api-version query parameter is required (2016-03-01 or 2016-01-01)"},
		{"?api-version=2015-01-01", 400, `api-version "2015-01-01" is not supported: use 2016-03-01 (or 2016-01-01)`},
		{"?api-version=2016-01-01", 404, "job collection jc1 was not found"},
		{"?api-version=2016-03-01", 404, "job collection jc1 was not found"},
	} {
		r := h.do(http.MethodGet, collPath+tc.query, adminToken, nil)
		code, msg := r.errorBody(t)
		if r.status != tc.status || msg != tc.msg {
			t.Errorf("%q: %d %s %q, want %d %q", tc.query, r.status, code, msg, tc.status, tc.msg)
		}
	}
}

func TestCollectionLifecycle(t *testing.T) {
	h := newHarness(t)
	r := h.must(201, http.MethodPut, collPath+apiVersion,
		`{"location":"local","tags":{"team":"ops"},"properties":{"sku":{"name":"standard"},"quota":{"maxJobCount":7,"maxRecurrence":{"frequency":"hour","interval":2}}}}`)
	want := `{"id":"/subscriptions/sub-a/resourceGroups/rg1/providers/Microsoft.Scheduler/jobCollections/jc1",` +
		`"type":"Microsoft.Scheduler/jobCollections","name":"jc1","location":"local","tags":{"team":"ops"},` +
		`"properties":{"sku":{"name":"Standard"},"state":"Enabled","quota":{"maxJobCount":7,"maxRecurrence":{"frequency":"Hour","interval":2}}}}`
	if string(r.body) != want {
		t.Fatalf("PUT body\n%s\nwant\n%s", r.body, want)
	}
	if got := h.must(200, http.MethodGet, collPath+apiVersion, nil); string(got.body) != want {
		t.Fatalf("GET body\n%s\nwant\n%s", got.body, want)
	}
	// A second PUT replaces (200); PATCH merges.
	h.must(200, http.MethodPut, collPath+apiVersion, `{"location":"local","properties":{"sku":{"name":"Free"}}}`)
	r = h.must(200, http.MethodPatch, collPath+apiVersion, `{"tags":{"env":"test"},"properties":{"quota":{"maxJobCount":3}}}`)
	want = `{"id":"/subscriptions/sub-a/resourceGroups/rg1/providers/Microsoft.Scheduler/jobCollections/jc1",` +
		`"type":"Microsoft.Scheduler/jobCollections","name":"jc1","location":"local","tags":{"env":"test"},` +
		`"properties":{"sku":{"name":"Free"},"state":"Enabled","quota":{"maxJobCount":3}}}`
	if string(r.body) != want {
		t.Fatalf("PATCH body\n%s\nwant\n%s", r.body, want)
	}
	// Bad input: 400 naming the field, nothing changed.
	for _, body := range []string{
		`{"properties":{"sku":{"name":"Gold"}}}`,
		`{"properties":{"quota":{"maxJobCount":"many"}}}`,
		`{"properties":{"state":"Deleted"}}`,
		`{"properties":{"quota":{"maxJobCount":0}}}`,
		`{"properties":`,
	} {
		bad := h.do(http.MethodPatch, collPath+apiVersion, adminToken, body)
		code, msg := bad.errorBody(t)
		if bad.status != 400 || code != "BadRequest" {
			t.Errorf("PATCH %s: %d %s %s", body, bad.status, code, msg)
		}
		if !strings.Contains(msg, "properties.") && !strings.Contains(msg, "invalid JSON") {
			t.Errorf("PATCH %s: message %q names no field", body, msg)
		}
	}
	if got := h.must(200, http.MethodGet, collPath+apiVersion, nil); string(got.body) != want {
		t.Fatalf("after bad PATCHes\n%s\nwant\n%s", got.body, want)
	}
	if code, msg := h.must(400, http.MethodPatch, collPath+apiVersion, `{"properties":{"sku":{"name":"Gold"}}}`).errorBody(t); msg != `properties.sku.name: "Gold" is not one of Free, Standard, P10Premium, P20Premium` {
		t.Errorf("bad sku: %s %q", code, msg)
	}
	h.must(200, http.MethodDelete, collPath+apiVersion, nil)
	h.must(404, http.MethodGet, collPath+apiVersion, nil)
	h.must(404, http.MethodDelete, collPath+apiVersion, nil)
	h.must(404, http.MethodPatch, collPath+apiVersion, `{"tags":{}}`)
}

func TestCollectionListPaging(t *testing.T) {
	h := newHarness(t)
	base := "/subscriptions/sub-a/resourceGroups/"
	for _, p := range []string{"rg1/providers/Microsoft.Scheduler/jobCollections/a", "rg1/providers/Microsoft.Scheduler/jobCollections/b", "rg2/providers/Microsoft.Scheduler/jobCollections/c"} {
		h.collection(base+p, `{"sku":{"name":"Free"}}`)
	}
	r := h.must(200, http.MethodGet, "/subscriptions/sub-a/providers/Microsoft.Scheduler/jobCollections"+apiVersion+"&$top=2", nil)
	if names(t, r) != "a,b" {
		t.Fatalf("first page %s", r.body)
	}
	next, _ := get(r.json(t), "nextLink").(string)
	if next != h.srv.URL+"/subscriptions/sub-a/providers/Microsoft.Scheduler/jobCollections?%24skip=2&%24top=2&api-version=2016-03-01" {
		t.Fatalf("nextLink %q", next)
	}
	r = h.must(200, http.MethodGet, next, nil)
	if names(t, r) != "c" || get(r.json(t), "nextLink") != nil {
		t.Fatalf("second page %s", r.body)
	}
	r = h.must(200, http.MethodGet, "/subscriptions/sub-a/resourceGroups/rg1/providers/Microsoft.Scheduler/jobCollections"+apiVersion, nil)
	if names(t, r) != "a,b" || get(r.json(t), "nextLink") != nil {
		t.Fatalf("by resource group %s", r.body)
	}
	r = h.must(200, http.MethodGet, "/subscriptions/sub-b/providers/Microsoft.Scheduler/jobCollections"+apiVersion, nil)
	if string(r.body) != `{"value":[]}` {
		t.Fatalf("empty subscription %s", r.body)
	}
	for _, q := range []string{"&$top=0", "&$top=101", "&$top=x", "&$skip=-1"} {
		h.must(400, http.MethodGet, "/subscriptions/sub-a/providers/Microsoft.Scheduler/jobCollections"+apiVersion+q, nil)
	}
}
