package action

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"sort"
	"strings"
)

// maxRedirects is how many redirects an attempt follows (Go's default, and curl's sensible one).
const maxRedirects = 10

// credentialHeaders are the request headers that carry credentials: like curl, they are not sent
// again when a redirect leads to another scheme, host or port.
var credentialHeaders = []string{"Authorization", "Proxy-Authorization", "Cookie"}

// checkRedirect follows up to maxRedirects redirects and drops the credential headers from a
// request that leaves the original request's origin (scheme, host, port). Go's own rule keeps
// them for another port of the same host, for a subdomain and for an https to http downgrade.
func checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) >= maxRedirects {
		return errors.New("stopped after 10 redirects")
	}
	if !sameOrigin(req.URL, via[0].URL) {
		for _, h := range credentialHeaders {
			req.Header.Del(h)
		}
	}
	return nil
}

// noRedirect is the redirect policy of requests whose body is a credential (the OAuth token
// request): a redirect is not followed; its answer is the response.
func noRedirect(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

// sameOrigin compares scheme, host (case-insensitively) and port (the scheme's default when
// absent).
func sameOrigin(a, b *url.URL) bool {
	return strings.EqualFold(a.Scheme, b.Scheme) && strings.EqualFold(a.Hostname(), b.Hostname()) && port(a) == port(b)
}

func port(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	switch strings.ToLower(u.Scheme) {
	case "https":
		return "443"
	case "http":
		return "80"
	}
	return ""
}

// redacted replaces a credential found in a response kept in history.
const redacted = "[redacted]"

// minScrubbed is the shortest credential scrubbed: shorter ones ("s", "pw") would erase letters
// from every word of the message while hiding nothing a guess would not find.
const minScrubbed = 4

// scrubber replaces the credentials of a request in the text of its response: a target that
// echoes what it received (a debugging endpoint, an error page quoting the headers) must not put
// the job's secrets into history, which every reader of the job sees.
type scrubber struct {
	forms []string // longest first
}

// newScrubber returns a scrubber of the secrets (plain values such as a password or a SAS token)
// and of the credential headers the request carries, in the forms a response may quote them:
// as sent, URL-escaped, JSON-escaped, and for a Basic header its decoded user:password.
func newScrubber(req *http.Request, secrets []string) *scrubber {
	seen := map[string]bool{}
	var forms []string
	add := func(s string) {
		if len(s) >= minScrubbed && !seen[s] {
			seen[s] = true
			forms = append(forms, s)
		}
	}
	addAll := func(s string) {
		if s == "" {
			return
		}
		add(s)
		add(url.QueryEscape(s))
		add(url.PathEscape(s))
		if b, err := json.Marshal(s); err == nil {
			add(strings.Trim(string(b), `"`))
		}
	}
	for _, s := range secrets {
		addAll(s)
	}
	if req != nil {
		for _, h := range credentialHeaders {
			for _, v := range req.Header.Values(h) {
				addAll(v)
				scheme, cred, ok := strings.Cut(v, " ")
				if !ok {
					continue
				}
				addAll(strings.TrimSpace(cred))
				if strings.EqualFold(scheme, "Basic") {
					if raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(cred)); err == nil {
						addAll(string(raw))
						if _, pw, ok := strings.Cut(string(raw), ":"); ok {
							addAll(pw)
						}
					}
				}
			}
		}
	}
	if len(forms) == 0 {
		return nil // nothing to scrub: no allocation on the attempts without credentials
	}
	sort.Slice(forms, func(i, j int) bool { return len(forms[i]) > len(forms[j]) })
	return &scrubber{forms: forms}
}

// longest is the length of the longest form: capture reads this much beyond what it keeps, so
// that a credential cut by the truncation is still found whole.
func (s *scrubber) longest() int {
	if s == nil || len(s.forms) == 0 {
		return 0
	}
	return len(s.forms[0])
}

// scrub replaces every form of every credential in text.
func (s *scrubber) scrub(text string) string {
	if s == nil {
		return text
	}
	for _, f := range s.forms {
		text = strings.ReplaceAll(text, f, redacted)
	}
	return text
}
