package action_test

import (
	"net/http"
	"net/http/httptest"
	"regexp"
	"testing"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/action"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"
)

var traceparentRE = regexp.MustCompile(`^00-([0-9a-f]{32})-([0-9a-f]{16})-01$`)

// TestTraceparent: every HTTP attempt carries a W3C traceparent; the attempts of one execution
// (retries, the error action) share its trace and each has its own span; another execution has
// another trace; a traceparent or tracestate in the job's own headers is replaced.
func TestTraceparent(t *testing.T) {
	rc := &recorder{status: http.StatusOK}
	srv := httptest.NewServer(rc)
	defer srv.Close()
	e := action.New(action.Config{})
	send := func(tag, requestID string, errorAction bool) [2]string {
		t.Helper()
		a := attempt("Http", nil)
		a.ExecutionTag, a.ClientRequestID = tag, requestID
		req := &wire.HTTPRequest{URI: srv.URL, Method: "GET",
			Headers: map[string]string{"traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", "tracestate": "x=1"}}
		if errorAction {
			a.ErrorAction(&wire.JobErrorAction{Type: "Http", Request: req})
		} else {
			a.MainAction(&wire.JobAction{Type: "Http", Request: req})
		}
		if res := e.Do(t.Context(), a); !res.Success {
			t.Fatal(res.Message)
		}
		got := rc.requests()
		h := got[len(got)-1].Header
		if h.Get("tracestate") != "" {
			t.Errorf("tracestate %q sent", h.Get("tracestate"))
		}
		m := traceparentRE.FindStringSubmatch(h.Get("traceparent"))
		if m == nil {
			t.Fatalf("traceparent %q", h.Get("traceparent"))
		}
		return [2]string{m[1], m[2]}
	}
	first := send("tag-1", "req-1", false)
	retry := send("tag-1", "req-2", false)
	errAct := send("tag-1", "req-3", true)
	other := send("tag-2", "req-4", false)
	if first[0] != retry[0] || first[0] != errAct[0] {
		t.Errorf("one execution, traces %s %s %s", first[0], retry[0], errAct[0])
	}
	if first[1] == retry[1] || retry[1] == errAct[1] || first[1] == errAct[1] {
		t.Errorf("attempts share a span: %s %s %s", first[1], retry[1], errAct[1])
	}
	if other[0] == first[0] {
		t.Errorf("two executions share trace %s", other[0])
	}
	if first[0] == "0af7651916cd43dd8448eb211c80319c" {
		t.Error("the job's own traceparent was sent")
	}
	// The header is the attempt's Trace, derived again the same way (a replica taking over).
	a := attempt("Http", nil)
	a.ClientRequestID = "req-1"
	if got := a.Trace().Traceparent(); got != "00-"+first[0]+"-"+first[1]+"-01" {
		t.Errorf("Trace() %s, header had %s/%s", got, first[0], first[1])
	}
}
