package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
)

// fuzzTenant is one of the two tenants of FuzzAPI. Every name and value of its resources holds
// its marker, so an answer that reveals them to the other tenant is found by a substring search.
type fuzzTenant struct {
	sub, token, marker string
}

func (ft fuzzTenant) rg() string   { return "rg-" + ft.marker }
func (ft fuzzTenant) coll() string { return "jc-" + ft.marker }
func (ft fuzzTenant) job() string  { return "job-" + ft.marker }

// secret is the tenant's Basic password: no answer, to anyone, may hold it.
func (ft fuzzTenant) secret() string { return "pw-" + ft.marker + "-secret" }

// revealing are the strings of the tenant that the other tenant must never read (its
// subscription and its marker, which every name and value of its resources holds).
func (ft fuzzTenant) revealing() []string { return []string{ft.sub, ft.marker} }

var fuzzTenants = [2]fuzzTenant{
	{sub: "sub-a", token: "tok-fuzz-a", marker: "alphaqz7"},
	{sub: "sub-b", token: "tok-fuzz-b", marker: "bravoqx9"},
}

// fuzzJob is a job body of a tenant; extra is put raw into a header value.
func fuzzJob(ft fuzzTenant, extra string) string {
	return `{"properties":{"startTime":"2026-12-01T10:00:00Z","action":{"type":"Https","request":{"uri":"https://` + ft.marker +
		`.example/x","method":"POST","body":"body-` + ft.marker + `","headers":{"X-Fuzz":"` + extra + `"},` +
		`"authentication":{"type":"Basic","username":"user-` + ft.marker + `","password":"` + ft.secret() + `"}}},` +
		`"recurrence":{"frequency":"Day","interval":1}}}`
}

// fuzzEnv is a daemon (the api harness: a real store over real HTTP) with two tenants.
type fuzzEnv struct {
	h *harness
}

func newFuzzEnv(tb testing.TB) *fuzzEnv {
	tokens, err := NewTokens(adminToken, map[string]string{fuzzTenants[0].sub: fuzzTenants[0].token, fuzzTenants[1].sub: fuzzTenants[1].token})
	if err != nil {
		tb.Fatal(err)
	}
	return &fuzzEnv{h: newHarness(tb, func(c *Config) { c.Tokens = tokens })}
}

// reseed makes sure both tenants' collection and job exist (a fuzzed DELETE may remove its own).
func (e *fuzzEnv) reseed(t *testing.T) {
	for _, ft := range fuzzTenants {
		key := store.JobKey{CollectionKey: store.CollectionKey{Subscription: ft.sub, ResourceGroup: ft.rg(), Name: ft.coll()}, Name: ft.job()}
		if _, err := e.h.store.JobGet(t.Context(), store.JobGetParams{Key: key}); err == nil {
			continue
		} else if !errors.Is(err, store.ErrNotFound) {
			t.Fatal(err)
		}
		base := "/subscriptions/" + ft.sub + "/resourceGroups/" + ft.rg() + "/providers/Microsoft.Scheduler/jobCollections/" + ft.coll()
		for _, req := range []struct{ path, body string }{
			{base, `{"location":"loc-` + ft.marker + `","tags":{"team":"tag-` + ft.marker + `"},"properties":{"sku":{"name":"P20Premium"}}}`},
			{base + "/jobs/" + ft.job(), fuzzJob(ft, "hdr-"+ft.marker)},
		} {
			st, body := e.send(t, http.MethodPut, req.path+apiVersion, adminToken, "application/json", []byte(req.body))
			if st != http.StatusOK && st != http.StatusCreated {
				t.Fatalf("seeding %s: %d %s", req.path, st, body)
			}
		}
	}
}

// send sends one request; contentType "" sends none.
func (e *fuzzEnv) send(t *testing.T, method, target, token, contentType string, body []byte) (int, []byte) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(t.Context(), method, target, rd)
	if err != nil {
		t.Fatalf("%s %s: %v", method, target, err)
	}
	if !strings.HasPrefix(target, "http") {
		req.URL, err = url.Parse(e.h.srv.URL + target)
		if err != nil {
			t.Fatalf("%s %s: %v", method, target, err)
		}
		req.Host = req.URL.Host
	}
	req.Header.Set("Authorization", "Bearer "+token)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := e.h.srv.Client().Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, target, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var hdr strings.Builder
	for k, vs := range resp.Header {
		if k != "X-Ms-Request-Id" && k != "Date" {
			fmt.Fprintf(&hdr, "%s: %s\n", k, strings.Join(vs, ", "))
		}
	}
	return resp.StatusCode, append([]byte(hdr.String()), b...)
}

// snapshot is everything stored for each tenant (by subscription), records with their versions
// and times.
func (e *fuzzEnv) snapshot(t *testing.T) map[string]string {
	ctx := t.Context()
	out := map[string]string{}
	for _, ft := range fuzzTenants {
		var b strings.Builder
		cs, err := e.h.store.CollectionList(ctx, store.CollectionListParams{Subscription: ft.sub})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cs {
			enc, _ := json.Marshal(c)
			b.Write(enc)
			b.WriteByte('\n')
			jobs, err := e.h.store.JobList(ctx, store.JobListParams{Collection: c.Key})
			if err != nil {
				t.Fatal(err)
			}
			for _, j := range jobs {
				enc, _ := json.Marshal(j)
				b.Write(enc)
				b.WriteByte('\n')
			}
		}
		out[ft.sub] = b.String()
	}
	return out
}

var (
	fuzzMethods      = []string{http.MethodGet, http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodPost, http.MethodHead, http.MethodOptions}
	fuzzContentTypes = []string{"application/json", "application/json; charset=utf-8", "text/json", "text/plain", "", "application/json; charset=latin1"}
)

// pick chooses a name: the tenant's own (0), the other tenant's (1), the fuzzed one (2) or the
// tenant's own in upper case (3).
func pick(sel uint8, own, other, fuzzed string) string {
	switch sel % 4 {
	case 0:
		return own
	case 1:
		return other
	case 2:
		return fuzzed
	default:
		return strings.ToUpper(own)
	}
}

// fuzzRequest builds one request from the fuzzer's values: method's low 3 bits choose the method,
// the next 2 a body template (0: the fuzzed body alone; 1: a job, 2: a collection, 3: a patch, each
// holding it); shape's low nibble the route, its high one the subscription; names 2 bits per name
// (resource group, collection, job; see pick).
func fuzzRequest(me, other fuzzTenant, method, shape, names uint8, name, raw string, body []byte, query string) (string, string, []byte) {
	m := fuzzMethods[int(method&7)%len(fuzzMethods)]
	sub := pick(shape>>4, me.sub, other.sub, name)
	rg := pick(names, me.rg(), other.rg(), name)
	coll := pick(names>>2, me.coll(), other.coll(), name)
	job := pick(names>>4, me.job(), other.job(), name)
	base := "/subscriptions/" + sub + "/resourceGroups/" + rg + "/providers/Microsoft.Scheduler/jobCollections/"
	var path string
	switch (shape & 0x0f) % 12 {
	case 0:
		path = "/subscriptions/" + sub + "/providers/Microsoft.Scheduler/jobCollections"
	case 1:
		path = base[:len(base)-1]
	case 2:
		path = base + coll
	case 3:
		path = base + coll + "/enable"
	case 4:
		path = base + coll + "/disable"
	case 5:
		path = base + coll + "/jobs"
	case 6:
		path = base + coll + "/jobs/" + job
	case 7:
		path = base + coll + "/jobs/" + job + "/run"
	case 8:
		path = base + coll + "/jobs/" + job + "/history"
	case 9:
		path = "/preview/occurrences"
	case 10:
		path = "/metrics"
	default:
		path = "/" + raw
	}
	if q, ok := strings.CutPrefix(query, "!"); ok {
		path += "?" + q
	} else {
		path += "?api-version=2016-03-01"
		if query != "" {
			path += "&" + query
		}
	}
	switch (method >> 3) & 3 {
	case 1:
		body = []byte(fuzzJob(me, string(body)))
	case 2:
		body = []byte(`{"location":"loc","properties":{"state":"` + string(body) + `"}}`)
	case 3:
		body = []byte(`{"properties":{"state":"Disabled","action":{"request":{"headers":{"X-Fuzz":"` + string(body) + `"}}}}}`)
	}
	if m == http.MethodGet || m == http.MethodDelete || m == http.MethodHead {
		body = nil
	}
	return m, path, body
}

// requestMentions is what the request says, in every decoding the daemon applies (the path and
// query unescaped, JSON strings unescaped), lower-cased: an answer may echo what the caller sent.
func requestMentions(path string, body []byte) string {
	var b strings.Builder
	b.WriteString(path)
	b.WriteByte('\n')
	for _, seg := range strings.Split(path, "/") {
		if u, err := url.PathUnescape(seg); err == nil {
			b.WriteString(u + "\n")
		}
		if u, err := url.QueryUnescape(seg); err == nil {
			b.WriteString(u + "\n")
		}
	}
	b.Write(body)
	b.WriteByte('\n')
	dec := json.NewDecoder(bytes.NewReader(body))
	for {
		tok, err := dec.Token()
		if err != nil {
			break
		}
		if s, ok := tok.(string); ok {
			b.WriteString(s + "\n")
		}
	}
	return strings.ToLower(b.String())
}

// FuzzAPI sends random requests from two tenants to a real daemon over real HTTP and checks,
// after every one: no 5xx; no answer to one tenant holds a name or value of the other's (unless
// the request itself held it) or anyone's secret; a 4xx changed nothing stored.
func FuzzAPI(f *testing.F) {
	seeds := []struct {
		tenant, method, shape, names, ct uint8
		name, raw                        string
		body                             []byte
		query                            string
	}{
		{0, 0, 0, 0, 0, "", "", nil, ""},              // list own collections
		{0, 0, 0x10, 0, 0, "", "", nil, ""},           // list the other tenant's
		{1, 0, 2, 0, 0, "", "", nil, ""},              // get own collection
		{1, 0, 2, 0x04, 0, "", "", nil, ""},           // the other's collection name in own subscription
		{0, 0, 6, 0, 0, "", "", nil, ""},              // get own job
		{0, 0, 6, 0x15, 0, "", "", nil, ""},           // the other's names in own subscription
		{0, 0, 0x16, 0x15, 0, "", "", nil, ""},        // the other's job by its path
		{0, 0, 8, 0x3f, 0, "", "", nil, ""},           // history, own names in upper case
		{0, 0, 5, 0x0a, 0, "..", "", nil, ""},         // dot segments
		{0, 3, 6, 0x20, 0, "..", "", nil, ""},         // delete a job named ..
		{0, 1, 6, 0x20, 0, "%FF", "", nil, ""},        // invalid UTF-8 name
		{1, 1, 6, 0x20, 0, "%FE", "", nil, ""},        // ... and its neighbour
		{0, 0, 0x20, 0, 0, "%C5%BFub-b", "", nil, ""}, // ſub-b
		{0, 0, 0x20, 0, 0, "SUB-B", "", nil, ""},
		{0, 0, 0x22, 0, 0, "sub-b%2F..", "", nil, ""},
		{0, 0, 6, 0x20, 0, "a%2F..%2F..", "", nil, ""},
		{0, 9, 6, 0x20, 0, "j1", "", []byte("x"), ""}, // PUT a new job (template body)
		{1, 9, 6, 0x20, 0, "j1", "", []byte("x"), ""}, // ... the other tenant, same name
		{0, 2, 6, 0, 0, "", "", []byte(`{"properties":{"state":"Disabled"},"Properties":{"state":"Enabled"}}`), ""},
		{0, 2, 6, 0, 0, "", "", []byte(`{"properties":{"state":"Disab` + "\xff" + `led"}}`), ""},
		{0, 2, 6, 0, 3, "", "", []byte(`{"properties":{"state":"Disabled"}}`), ""}, // no Content-Type
		{0, 2, 6, 0, 3, "", "", []byte(`{"properties":{"state":"Disabled"}}`), ""}, // text/plain
		{0, 26, 6, 0, 0, "", "", []byte(`Disabled`), ""},                           // patch template
		{0, 17, 2, 0, 0, "", "", []byte(`Suspended`), ""},                          // collection template
		{0, 1, 2, 0, 0, "", "", []byte(`{"location":"x","properties":{"quota":{"maxJobCount":0}}}`), ""},
		{0, 4, 7, 0, 0, "", "", nil, ""},       // run own job
		{1, 4, 0x17, 0x15, 0, "", "", nil, ""}, // run the other's job
		{0, 4, 3, 0, 0, "", "", nil, ""},       // enable
		{1, 4, 0x14, 0x04, 0, "", "", nil, ""}, // disable the other's collection
		{0, 0, 5, 0, 0, "", "", nil, "$top=1&$skip=0"},
		{0, 0, 5, 0, 0, "", "", nil, "$filter=state%20eq%20'enabled'"},
		{0, 0, 5, 0, 0, "", "", nil, "!api-version=2015-01-01"},
		{0, 4, 9, 0, 0, "", "", []byte(fuzzJob(fuzzTenants[0], "x")), "count=3"},
		{0, 0, 10, 0, 0, "", "", nil, ""}, // metrics
		{0, 0, 11, 0, 0, "", "subscriptions/sub-b/resourceGroups/rg-bravoqx9/providers/Microsoft.Scheduler/jobCollections/jc-bravoqx9", nil, ""},
		{0, 0, 11, 0, 0, "", "subscriptions/sub-a/../sub-b/providers/Microsoft.Scheduler/jobCollections", nil, ""},
		{1, 3, 6, 0, 0, "", "", nil, ""}, // delete own job (reseeded)
		{0, 3, 2, 0, 0, "", "", nil, ""}, // delete own collection (reseeded)
	}
	for _, s := range seeds {
		f.Add(s.tenant, s.method, s.shape, s.names, s.ct, s.name, s.raw, s.body, s.query)
	}
	env := newFuzzEnv(f)
	f.Fuzz(func(t *testing.T, tenant, method, shape, names, ct uint8, name, raw string, body []byte, query string) {
		env.reseed(t)
		me, other := fuzzTenants[tenant%2], fuzzTenants[(tenant+1)%2]
		m, path, reqBody := fuzzRequest(me, other, method, shape, names, name, raw, body, query)
		if _, err := url.Parse(env.h.srv.URL + path); err != nil {
			return // not a URL a client can send
		}
		before := env.snapshot(t)
		status, answer := env.send(t, m, path, me.token, fuzzContentTypes[int(ct)%len(fuzzContentTypes)], reqBody)
		t.Logf("%s %s by %s: %d", m, path, me.sub, status)
		if status >= 500 {
			t.Fatalf("%s %s (%s, body %q): %d %s", m, path, me.sub, reqBody, status, answer)
		}
		// What the caller may read: what it sent, and what its own subscription holds (which may
		// hold the other tenant's marker if it chose such names itself earlier).
		mentioned := requestMentions(path, reqBody) + strings.ToLower(before[me.sub])
		lower := strings.ToLower(string(answer))
		for _, s := range other.revealing() {
			if strings.Contains(lower, strings.ToLower(s)) && !strings.Contains(mentioned, strings.ToLower(s)) {
				t.Fatalf("%s %s by %s (body %q) answered %d holding %q of %s: %s", m, path, me.sub, reqBody, status, s, other.sub, answer)
			}
		}
		for _, ft := range fuzzTenants {
			if strings.Contains(lower, ft.secret()) && !strings.Contains(requestMentions(path, reqBody), ft.secret()) {
				t.Fatalf("%s %s by %s answered %d holding the secret of %s: %s", m, path, me.sub, status, ft.sub, answer)
			}
		}
		if status >= 400 {
			if after := env.snapshot(t); !maps.Equal(after, before) {
				t.Fatalf("%s %s by %s (body %q) answered %d %s and changed the store:\n%v\nwas\n%v", m, path, me.sub, reqBody, status, answer, after, before)
			}
		}
	})
}
