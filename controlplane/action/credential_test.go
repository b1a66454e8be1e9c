package action_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/action"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"
)

// tokenAuthority is a real OAuth token endpoint handing out one fixed token.
func tokenAuthority(t *testing.T, token string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"token_type":"Bearer","expires_in":3600,"access_token":%q}`, token)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestCredentialsAreNotSentToAnotherOrigin: an attempt redirected to another port (a second real
// server on the same host) or another host does not carry its Authorization (Basic, OAuth bearer,
// or a header the job set) or Cookie there, as curl does; a redirect within the same origin keeps
// them.
func TestCredentialsAreNotSentToAnotherOrigin(t *testing.T) {
	other := &recorder{}
	otherSrv := httptest.NewServer(other) // another port of 127.0.0.1
	defer otherSrv.Close()
	same := &recorder{}
	var origin *httptest.Server
	origin = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/to-other-port":
			http.Redirect(w, r, otherSrv.URL+"/landed", http.StatusFound)
		case "/to-localhost":
			// Another host name for the same machine and port: another origin.
			http.Redirect(w, r, strings.Replace(otherSrv.URL, "127.0.0.1", "localhost", 1)+"/landed", http.StatusTemporaryRedirect)
		case "/to-same":
			http.Redirect(w, r, origin.URL+"/same", http.StatusFound)
		default:
			same.ServeHTTP(w, r)
		}
	}))
	defer origin.Close()

	e := action.New(action.Config{OAuthAuthority: tokenAuthority(t, "bearer-token-xyz")})
	auths := map[string]*wire.HTTPRequest{
		"Basic":  {Method: "GET", Authentication: &wire.HTTPAuthentication{Type: "Basic", Username: "alice", Password: "hunter2"}},
		"OAuth":  {Method: "GET", Authentication: &wire.HTTPAuthentication{Type: "ActiveDirectoryOAuth", Tenant: "t", Audience: "a", ClientID: "c", Secret: "s"}},
		"header": {Method: "GET", Headers: map[string]string{"Authorization": "Token own-header", "Cookie": "session=abc"}},
	}
	for name, req := range auths {
		for _, path := range []string{"/to-other-port", "/to-localhost"} {
			before := len(other.requests())
			r := *req
			r.URI = origin.URL + path
			if res := e.Do(t.Context(), attempt("Http", &r)); !res.Success {
				t.Fatalf("%s %s: %+v", name, path, res)
			}
			got := other.requests()
			if len(got) != before+1 {
				t.Fatalf("%s %s: the redirect was not followed", name, path)
			}
			h := got[len(got)-1].Header
			if a, c := h.Get("Authorization"), h.Get("Cookie"); a != "" || c != "" {
				t.Errorf("%s %s: the other origin got Authorization %q Cookie %q", name, path, a, c)
			}
			if h.Get("X-Ms-Execution-Tag") != "tag-1" {
				t.Errorf("%s %s: the scheduler's headers were dropped too", name, path)
			}
		}
		r := *req
		r.URI = origin.URL + "/to-same"
		if res := e.Do(t.Context(), attempt("Http", &r)); !res.Success {
			t.Fatalf("%s same origin: %+v", name, res)
		}
		got := same.requests()
		if a := got[len(got)-1].Header.Get("Authorization"); a == "" {
			t.Errorf("%s: a redirect within the origin lost the Authorization header", name)
		}
	}
}

// TestEchoedCredentialsAreScrubbed: a target that echoes what it received (the Authorization
// header, the Basic credentials decoded, the password JSON- and URL-escaped, the OAuth token, a
// SAS-like query) gets its answer stored with "[redacted]" in their place, also when the body is
// cut at MaxMessageBody in the middle of a credential.
func TestEchoedCredentialsAreScrubbed(t *testing.T) {
	echo := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth := r.Header.Get("Authorization")
		var decoded string
		if b, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(auth, "Basic ")); err == nil {
			decoded = string(b)
		}
		_, pw, _ := strings.Cut(decoded, ":")
		j, _ := json.Marshal(pw)
		pad := r.URL.Query().Get("pad")
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprintf(w, "%sheader=%s decoded=%s json=%s query=%s", strings.Repeat(".", len(pad)), auth, decoded, j, r.URL.RawQuery)
	}))
	defer echo.Close()
	e := action.New(action.Config{OAuthAuthority: tokenAuthority(t, "bearer-token-xyz")})

	const password = `p@ss "w0rd"/&`
	basic := &wire.HTTPRequest{URI: echo.URL + "/?x=1", Method: "GET",
		Authentication: &wire.HTTPAuthentication{Type: "Basic", Username: "alice", Password: password}}
	res := e.Do(t.Context(), attempt("Http", basic))
	b64 := base64.StdEncoding.EncodeToString([]byte("alice:" + password))
	for _, leak := range []string{password, b64, `p@ss \"w0rd\"/\u0026`, "w0rd"} {
		if strings.Contains(res.Message, leak) {
			t.Errorf("Basic: the message holds %q: %s", leak, res.Message)
		}
	}
	if want := "HTTP/1.1 401 Unauthorized\n" + "header=[redacted] decoded=[redacted] json=\"[redacted]\" query=x=1"; res.Message != want {
		t.Errorf("Basic: message\n%s\nwant\n%s", res.Message, want)
	}

	oauth := &wire.HTTPRequest{URI: echo.URL + "/", Method: "GET",
		Authentication: &wire.HTTPAuthentication{Type: "ActiveDirectoryOAuth", Tenant: "t", Audience: "a", ClientID: "c", Secret: "client-secret-1"}}
	res = e.Do(t.Context(), attempt("Http", oauth))
	if strings.Contains(res.Message, "bearer-token-xyz") || !strings.Contains(res.Message, "header=[redacted] ") {
		t.Errorf("OAuth: %s", res.Message)
	}

	// The body is cut at MaxMessageBody in the middle of the echoed header: no prefix of the
	// credential is left either.
	pad := strings.Repeat("x", action.MaxMessageBody-len("header=Basic ")-5)
	basic.URI = echo.URL + "/?pad=" + pad
	res = e.Do(t.Context(), attempt("Http", basic))
	if strings.Contains(res.Message, b64[:5]) {
		t.Errorf("cut message holds the start of the credential: ...%s", res.Message[len(res.Message)-40:])
	}
	body := strings.TrimPrefix(res.Message, "HTTP/1.1 401 Unauthorized\n")
	if len(body) != action.MaxMessageBody {
		t.Errorf("kept %d bytes of the body, want %d", len(body), action.MaxMessageBody)
	}
}
