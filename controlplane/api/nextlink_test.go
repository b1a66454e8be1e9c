package api

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestNextLinkIgnoresForgedHost: nextLink is built from the configured public URL, else from the
// address the connection arrived on; a request's Host header (which a client or a man in the
// middle chooses) never shows in it, for collections, jobs and history alike.
func TestNextLinkIgnoresForgedHost(t *testing.T) {
	const coll = "/subscriptions/sub-a/resourceGroups/rg1/providers/Microsoft.Scheduler/jobCollections/"
	for _, tc := range []struct {
		name, public, want string
	}{
		{"listen address", "", ""}, // want: the harness's URL
		{"public URL", "https://sched.example.com/api/", "https://sched.example.com/api"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, func(c *Config) { c.PublicURL = tc.public })
			want := tc.want
			if want == "" {
				want = h.srv.URL
			}
			h.collection(coll+"a", `{"sku":{"name":"Standard"}}`)
			h.collection(coll+"b", `{"sku":{"name":"Standard"}}`)
			for _, j := range []string{"j1", "j2"} {
				h.must(http.StatusCreated, http.MethodPut, coll+"a/jobs/"+j+apiVersion,
					`{"properties":{"state":"Disabled","action":{"type":"Http","request":{"uri":"http://127.0.0.1:1/","method":"GET"}}}}`)
			}
			for _, path := range []string{
				"/subscriptions/sub-a/providers/Microsoft.Scheduler/jobCollections" + apiVersion + "&$top=1",
				coll + "a/jobs" + apiVersion + "&$top=1",
			} {
				req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, h.srv.URL+path, nil)
				if err != nil {
					t.Fatal(err)
				}
				req.Host = "evil.example:443"
				req.Header.Set("Authorization", "Bearer "+adminToken)
				resp, err := h.srv.Client().Do(req)
				if err != nil {
					t.Fatal(err)
				}
				b, err := io.ReadAll(resp.Body)
				_ = resp.Body.Close()
				if err != nil || resp.StatusCode != http.StatusOK {
					t.Fatalf("%s: %d %s %v", path, resp.StatusCode, b, err)
				}
				var page struct{ NextLink string }
				if err := json.Unmarshal(b, &page); err != nil {
					t.Fatal(err)
				}
				u, _, _ := strings.Cut(path, "?")
				if wantLink := want + u + "?%24skip=1&%24top=1&api-version=2016-03-01"; page.NextLink != wantLink {
					t.Errorf("%s with Host evil.example: nextLink %q, want %q", path, page.NextLink, wantLink)
				}
			}
		})
	}
}

// TestPublicURLMustBeAURL: a public URL that is not http(s)://host[/prefix] is refused.
func TestPublicURLMustBeAURL(t *testing.T) {
	for _, bad := range []string{"sched.example.com", "ftp://x", "https://", "https://x/?a=b", "https://u:p@x"} {
		h := newHarness(t)
		cfg := Config{Store: h.store, Dispatcher: h.disp, Secrets: h.box, Tokens: mustTokens(t), PublicURL: bad}
		if _, err := New(cfg); err == nil {
			t.Errorf("public URL %q accepted", bad)
		}
	}
}

func mustTokens(t *testing.T) *Tokens {
	t.Helper()
	tok, err := NewTokens(adminToken, nil)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}
