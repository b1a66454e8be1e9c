package action_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/action"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"
)

// BenchmarkHTTPAttempt measures one Http attempt against a local server answering 200 with a short
// body, without and with Basic authentication (whose credentials are scrubbed from the answer), and
// answering 200 with no body (as schedbench's sink does).
func BenchmarkHTTPAttempt(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		if r.URL.Path != "/empty" {
			_, _ = io.WriteString(w, "accepted")
		}
	}))
	defer srv.Close()
	e := action.New(action.Config{})
	for _, bc := range []struct {
		name, path string
		auth       *wire.HTTPAuthentication
	}{
		{"none", "/hook", nil},
		{"basic", "/hook", &wire.HTTPAuthentication{Type: "Basic", Username: "alice", Password: "hunter2-long-enough"}},
		{"empty", "/empty", nil},
	} {
		b.Run(bc.name, func(b *testing.B) {
			a := action.Attempt{Action: &wire.JobErrorAction{Type: "Http", Request: &wire.HTTPRequest{
				URI: srv.URL + bc.path, Method: "POST", Body: "hello", Authentication: bc.auth,
			}}, ExecutionTag: "t", ClientRequestID: "c", JobID: "/j", JobCollectionID: "/c", Region: "local"}
			b.ReportAllocs()
			for b.Loop() {
				if res := e.Do(b.Context(), a); !res.Success {
					b.Fatal(res.Message)
				}
			}
		})
	}
}
