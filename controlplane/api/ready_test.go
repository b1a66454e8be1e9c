package api

import (
	"net/http"
	"testing"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store/faulty"
)

// TestReadyzFailsWhenTheStoreCannotCommit: /readyz commits a write probe, so a store that still
// answers reads but cannot commit makes it 503 naming the cause; the probe's answer is reused for
// a second (one probe, not one per request), and readiness comes back once commits succeed.
func TestReadyzFailsWhenTheStoreCannotCommit(t *testing.T) {
	var st *faulty.Driver
	h := newHarness(t, func(c *Config) {
		st = faulty.Wrap(c.Store)
		c.Store = st
	})
	ready := func(want int, body string) {
		t.Helper()
		r := h.do(http.MethodGet, "/readyz", "", nil)
		if r.status != want || string(r.body) != body {
			t.Fatalf("readyz: %d %s, want %d %s", r.status, r.body, want, body)
		}
	}
	const ok = `{"dispatcher":"ok","store":"ok"}`
	const failing = `{"dispatcher":"ok","store":"cannot commit: injected fault"}`
	ready(200, ok)
	if n := st.Calls("MetaPut"); n != 1 {
		t.Fatalf("%d probes, want 1", n)
	}
	ready(200, ok) // reused: no second probe within the second
	if n := st.Calls("MetaPut"); n != 1 {
		t.Fatalf("%d probes, want 1", n)
	}

	st.Fail("MetaPut", -1)
	h.clock.Advance(readyProbeTTL)
	ready(503, failing)
	// Reads still work: the API answers GETs, only readiness says the store cannot commit.
	h.must(http.StatusNotFound, http.MethodGet, collPath+apiVersion, nil)

	st.Clear("MetaPut")
	ready(503, failing) // the failed probe's answer is reused for its second
	h.clock.Advance(readyProbeTTL + time.Millisecond)
	ready(200, ok)
	if n := st.Calls("MetaPut"); n != 3 {
		t.Fatalf("%d probes, want 3", n)
	}
}
