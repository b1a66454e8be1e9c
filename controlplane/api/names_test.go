package api

import (
	"net/http"
	"strings"
	"testing"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
)

// goodJob is a valid job body.
const goodJob = `{"properties":{"startTime":"2026-12-01T10:00:00Z","action":{"type":"Https","request":{"uri":"https://example.com/x","method":"GET"}},"recurrence":{"frequency":"Month","schedule":{"monthDays":[1,15]}}}}`

// withTokens makes the harness accept these scoped tokens (subscription to token) besides the admin's.
func withTokens(t *testing.T, scoped map[string]string) func(*Config) {
	tokens, err := NewTokens(adminToken, scoped)
	if err != nil {
		t.Fatal(err)
	}
	return func(c *Config) { c.Tokens = tokens }
}

func armPath(sub, rg, coll, job string) string {
	p := "/subscriptions/" + sub
	if rg != "" {
		p += "/resourceGroups/" + rg
	}
	p += "/providers/Microsoft.Scheduler/jobCollections"
	if coll != "" {
		p += "/" + coll
	}
	if job != "" {
		p += "/jobs/" + job
	}
	return p
}

// storedCollections lists every collection of the subscriptions straight from the store.
func storedCollections(t *testing.T, h *harness, subs ...string) []string {
	t.Helper()
	var out []string
	for _, s := range subs {
		cs, err := h.store.CollectionList(t.Context(), store.CollectionListParams{Subscription: s})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cs {
			jobs, err := h.store.JobList(t.Context(), store.JobListParams{Collection: c.Key})
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, c.Key.ID())
			for _, j := range jobs {
				out = append(out, j.Key.ID())
			}
		}
	}
	return out
}

// TestScopedTokenAndFoldingNames: U+017F (ſ) folds to 's' in strings.EqualFold and not in
// strings.ToLower; U+212A (Kelvin) folds to 'k'. A token of sub1 must not reach a subscription
// spelled with them, which cannot be created at all, and no token can be scoped to one.
func TestScopedTokenAndFoldingNames(t *testing.T) {
	h := newHarness(t, withTokens(t, map[string]string{"sub1": "tok-sub1", "key1": "tok-key1"}))
	for _, sub := range []string{"sub1", "key1"} {
		h.must(http.StatusCreated, http.MethodPut, armPath(sub, "rg", "jc", "")+apiVersion, `{"location":"local","properties":{}}`)
		h.must(http.StatusCreated, http.MethodPut, armPath(sub, "rg", "jc", "j")+apiVersion, goodJob)
	}
	for _, tc := range []struct{ alias, token, real string }{
		{"%C5%BFub1", "tok-sub1", "sub1"},    // ſub1
		{"%E2%84%AAey1", "tok-key1", "key1"}, // Kelvin sign + ey1
	} {
		// Nobody can create the look-alike subscription's resources...
		r := h.do(http.MethodPut, armPath(tc.alias, "rg", "jc", "")+apiVersion, adminToken, `{"location":"local","properties":{}}`)
		if _, msg := r.errorBody(t); r.status != 400 || !strings.HasPrefix(msg, "the subscription id ") || !strings.Contains(msg, "non-ASCII character") {
			t.Errorf("admin PUT of a collection in %s: %d %s, want 400 naming the subscription id", tc.alias, r.status, r.body)
		}
		// ...and the real subscription's token cannot reach anything through the look-alike.
		for _, req := range []struct{ method, path string }{
			{http.MethodGet, armPath(tc.alias, "", "", "")},
			{http.MethodGet, armPath(tc.alias, "rg", "", "")},
			{http.MethodGet, armPath(tc.alias, "rg", "jc", "")},
			{http.MethodGet, armPath(tc.alias, "rg", "jc", "j")},
			{http.MethodGet, armPath(tc.alias, "rg", "jc", "") + "/jobs"},
			{http.MethodDelete, armPath(tc.alias, "rg", "jc", "j")},
			{http.MethodDelete, armPath(tc.alias, "rg", "jc", "")},
		} {
			for _, tok := range []string{tc.token, adminToken} {
				r := h.do(req.method, req.path+apiVersion, tok, nil)
				if code, msg := r.errorBody(t); r.status != 400 || code != "BadRequest" || !strings.HasPrefix(msg, "the subscription id ") {
					t.Errorf("%s %s with %s: %d %s, want 400 naming the subscription id", req.method, req.path, tok, r.status, r.body)
				}
			}
		}
		// The real subscription's resources are all still there.
		h.must(http.StatusOK, http.MethodGet, armPath(tc.real, "rg", "jc", "j")+apiVersion, nil)
	}
	// The other way round: a token cannot be scoped to a look-alike subscription, so it can
	// never read sub1's resources.
	for _, alias := range []string{"ſub1", "\u212Aey1", "sub1\xff"} {
		tokens, err := NewTokens(adminToken, map[string]string{alias: "tok-alias"})
		if err == nil {
			t.Errorf("a token scoped to %q was accepted", alias)
			h2 := newHarness(t, func(c *Config) { c.Tokens = tokens })
			h2.must(http.StatusCreated, http.MethodPut, armPath("sub1", "rg", "jc", "")+apiVersion, `{"location":"local","properties":{}}`)
			if r := h2.do(http.MethodGet, armPath("sub1", "rg", "jc", "")+apiVersion, "tok-alias", nil); r.status != http.StatusForbidden {
				t.Errorf("the token of %q reads sub1's collection: %d %s", alias, r.status, r.body)
			}
			continue
		}
		if !strings.Contains(err.Error(), "the subscription id") {
			t.Errorf("NewTokens(%q): %v, want an error naming the subscription id", alias, err)
		}
	}
	// ASCII case is one name: a token scoped to SUB1 is sub1's.
	h3 := newHarness(t, withTokens(t, map[string]string{"SUB1": "tok-upper"}))
	h3.must(http.StatusCreated, http.MethodPut, armPath("sub1", "rg", "jc", "")+apiVersion, `{"location":"local","properties":{}}`)
	if r := h3.do(http.MethodGet, armPath("Sub1", "RG", "JC", "")+apiVersion, "tok-upper", nil); r.status != http.StatusOK ||
		str(get(r.json(t), "id")) != "/subscriptions/sub1/resourceGroups/rg/providers/Microsoft.Scheduler/jobCollections/jc" {
		t.Errorf("token of SUB1 reading sub1: %d %s", r.status, r.body)
	}
	if r := h3.do(http.MethodGet, armPath("sub2", "rg", "jc", "")+apiVersion, "tok-upper", nil); r.status != http.StatusForbidden {
		t.Errorf("token of SUB1 reading sub2: %d %s", r.status, r.body)
	}
}

// badSegments are name forms outside the grammar, as sent in a URL path, with what the 400 says.
var badSegments = []struct{ escaped, want string }{
	{".", "is a dot segment"},
	{"..", "is a dot segment"},
	{"%2E", "is a dot segment"},
	{"%2e%2E", "is a dot segment"},
	{"x.", "ends with '.'"},
	{"%FF", "is not valid UTF-8"},
	{"%FE", "is not valid UTF-8"},
	{"a%C3", "is not valid UTF-8"},
	{"%C5%BFub1", "non-ASCII character U+017F"},
	{"caf%C3%A9", "non-ASCII character U+00E9"},
	{"a%3Fb", `the character '?'`},
	{"a%25b", `the character '%'`},
	{"a%2Fb", `the character '/'`},
	{"a%5Cb", `the character '\\'`},
	{"a%20b", `the character ' '`},
	{"a%00b", `the character '\x00'`},
	{"a%0Ab", `the character '\n'`},
	{"a%7F", `the character '\x7f'`},
	{"a%23b", `the character '#'`},
	{"a%3Bb", `the character ';'`},
	{strings.Repeat("n", 101), "is 101 characters long"},
}

// TestBadNameSegmentsOnEveryRoute sends every bad form in every name position of every route
// kind, with every method the route has: a 400 that names the segment, and nothing stored.
func TestBadNameSegmentsOnEveryRoute(t *testing.T) {
	h := newHarness(t)
	h.collection(collPath, `{"sku":{"name":"Standard"}}`)
	h.must(http.StatusCreated, http.MethodPut, collPath+"/jobs/j1"+apiVersion, goodJob)
	before := storedCollections(t, h, "sub-a")
	type routeKind struct {
		suffix  string // after the job or collection name
		job     bool   // the route names a job
		rg      bool   // the route names a resource group
		coll    bool
		methods []string
	}
	kinds := []routeKind{
		{"", false, false, false, []string{http.MethodGet}},                // collections of a subscription
		{"", false, true, false, []string{http.MethodGet}},                 // collections of a resource group
		{"", false, true, true, []string{"GET", "PUT", "PATCH", "DELETE"}}, // collection
		{"/enable", false, true, true, []string{http.MethodPost}},          // enable
		{"/disable", false, true, true, []string{http.MethodPost}},         // disable
		{"/jobs", false, true, true, []string{http.MethodGet}},             // jobs
		{"", true, true, true, []string{"GET", "PUT", "PATCH", "DELETE"}},  // job
		{"/run", true, true, true, []string{http.MethodPost}},              // run
		{"/history", true, true, true, []string{http.MethodGet}},           // history
	}
	n := 0
	for _, k := range kinds {
		positions := []string{"subscription id"}
		if k.rg {
			positions = append(positions, "resource group name")
		}
		if k.coll {
			positions = append(positions, "job collection name")
		}
		if k.job {
			positions = append(positions, "job name")
		}
		for _, pos := range positions {
			for _, bad := range badSegments {
				names := map[string]string{"subscription id": "sub-a", "resource group name": "rg1", "job collection name": "jc1", "job name": "j1"}
				names[pos] = bad.escaped
				rg, coll, job := "", "", ""
				if k.rg {
					rg = names["resource group name"]
				}
				if k.coll {
					coll = names["job collection name"]
				}
				if k.job {
					job = names["job name"]
				}
				path := armPath(names["subscription id"], rg, coll, job) + k.suffix + apiVersion
				for _, m := range k.methods {
					var body any
					switch {
					case m == http.MethodPut && k.job, m == http.MethodPatch && k.job:
						body = goodJob
					case m == http.MethodPut, m == http.MethodPatch:
						body = `{"location":"local","properties":{}}`
					}
					r := h.do(m, path, adminToken, body)
					code, msg := r.errorBody(t)
					if r.status != http.StatusBadRequest || code != "BadRequest" || !strings.HasPrefix(msg, "the "+pos+" ") || !strings.Contains(msg, bad.want) {
						t.Errorf("%s %s: %d %s %q, want 400 BadRequest: the %s ... %s", m, path, r.status, code, msg, pos, bad.want)
					}
					// A token scoped to the subscription gets the same answer.
					if r2 := h.do(m, path, subAToken, body); r2.status != r.status || string(r2.body) != string(r.body) {
						t.Errorf("%s %s with the scoped token: %d %s, admin got %d %s", m, path, r2.status, r2.body, r.status, r.body)
					}
					n++
				}
			}
		}
	}
	if n < 500 {
		t.Fatalf("only %d requests", n)
	}
	if after := storedCollections(t, h, "sub-a"); strings.Join(after, "\n") != strings.Join(before, "\n") {
		t.Fatalf("stored names changed:\n%s\nwere\n%s", after, before)
	}
	if _, _, runs := h.disp.calls(); len(runs) != 0 {
		t.Fatalf("runs started: %v", runs)
	}
}

// TestInvalidUTF8NamesDoNotAlias: %FF and %FE both decoded to U+FFFD and were one job, the second
// PUT silently replacing the first.
func TestInvalidUTF8NamesDoNotAlias(t *testing.T) {
	h := newHarness(t)
	h.collection(collPath, `{"sku":{"name":"Standard"}}`)
	for _, name := range []string{"%FF", "%FE", "%EF%BF%BD"} {
		r := h.do(http.MethodPut, collPath+"/jobs/"+name+apiVersion, adminToken, goodJob)
		if _, msg := r.errorBody(t); r.status != 400 || !strings.HasPrefix(msg, "the job name ") {
			t.Errorf("PUT job %s: %d %s, want 400 naming the job name", name, r.status, r.body)
		}
	}
	if got := storedCollections(t, h, "sub-a"); len(got) != 1 {
		t.Fatalf("stored: %v, want the collection alone", got)
	}
}

// TestDotSegmentJobCannotExist: a job named ".." would have the id .../jobs/.., which a client
// that normalises URLs sends as the collection's own path: deleting the job deletes the collection.
func TestDotSegmentJobCannotExist(t *testing.T) {
	h := newHarness(t)
	h.collection(collPath, `{"sku":{"name":"Standard"}}`)
	h.must(http.StatusCreated, http.MethodPut, collPath+"/jobs/keep"+apiVersion, goodJob)
	for _, name := range []string{"..", ".", "%2E%2E", "%2e"} {
		for _, m := range []string{http.MethodPut, http.MethodDelete, http.MethodGet} {
			var body any
			if m == http.MethodPut {
				body = goodJob
			}
			r := h.do(m, collPath+"/jobs/"+name+apiVersion, adminToken, body)
			if _, msg := r.errorBody(t); r.status != 400 || !strings.Contains(msg, "is a dot segment") {
				t.Errorf("%s job %s: %d %s, want 400 (a dot segment)", m, name, r.status, r.body)
			}
		}
	}
	h.must(http.StatusOK, http.MethodGet, collPath+"/jobs/keep"+apiVersion, nil)
}

// TestPutIDGetsTheSameResource: the id a PUT answers is a path that reaches the same resource,
// and another ASCII case of it is the same resource, keeping the spelling it was created with.
func TestPutIDGetsTheSameResource(t *testing.T) {
	h := newHarness(t, withTokens(t, map[string]string{"Tenant-1.prod": "tok-t"}))
	for _, names := range [][4]string{
		{"Tenant-1.prod", "RG_(blue).v2", "Coll-1_x.y", "Job.1-a_b"},
		{"Tenant-1.prod", strings.Repeat("r", 90), strings.Repeat("c", 100), strings.Repeat("j", 100)},
		{"Tenant-1.prod", "..a", "-", "_"},
	} {
		coll := h.do(http.MethodPut, armPath(names[0], names[1], names[2], "")+apiVersion, "tok-t", `{"location":"local","properties":{}}`)
		if coll.status != http.StatusCreated {
			t.Fatalf("PUT collection %v: %d %s", names, coll.status, coll.body)
		}
		job := h.do(http.MethodPut, armPath(names[0], names[1], names[2], names[3])+apiVersion, "tok-t", goodJob)
		if job.status != http.StatusCreated {
			t.Fatalf("PUT job %v: %d %s", names, job.status, job.body)
		}
		for _, created := range []response{coll, job} {
			id := str(get(created.json(t), "id"))
			for _, path := range []string{id, strings.ToUpper(id), strings.ToLower(id)} {
				got := h.do(http.MethodGet, path+apiVersion, "tok-t", nil)
				if got.status != http.StatusOK || str(get(got.json(t), "id")) != id {
					t.Errorf("GET %s (the id of a PUT): %d %s", path, got.status, got.body)
				}
			}
		}
		// A PUT in another case replaces the job and keeps its spelling.
		again := h.do(http.MethodPut, strings.ToUpper(armPath(names[0], names[1], names[2], names[3]))+apiVersion, "tok-t", goodJob)
		if again.status != http.StatusOK || str(get(again.json(t), "id")) != str(get(job.json(t), "id")) {
			t.Errorf("PUT in upper case: %d %s", again.status, again.body)
		}
	}
}
