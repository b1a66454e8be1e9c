package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestBackfillSurvivesSIGKILL: schedulerd as a real process answers a backfill of five past
// occurrences with 202 and runs them one after the other; killed (SIGKILL) while the third is
// under way, it carries on when it starts again on the same data directory: the third runs again
// with its tag, then the fourth and the fifth, each once, in order; a second backfill while one
// is unfinished is a 409.
func TestBackfillSurvivesSIGKILL(t *testing.T) {
	dataDir := t.TempDir()
	const token = "backfill-test-token-0123456789abcdef0123456789abcdef"
	type call struct{ expected, tag string }
	calls := make(chan call, 64)
	hold := make(chan struct{})
	third := time.Now().UTC().Truncate(time.Minute).Add(-8 * time.Minute)
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c := call{r.Header.Get("x-ms-scheduler-expected-execution-time"), r.Header.Get("x-ms-execution-tag")}
		calls <- c
		if c.expected == third.Format(time.RFC3339) {
			select {
			case <-hold:
			case <-r.Context().Done():
			}
		}
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(recv.Close)
	t.Cleanup(func() {
		select {
		case <-hold:
		default:
			close(hold)
		}
	})
	next := func() call {
		t.Helper()
		select {
		case c := <-calls:
			return c
		case <-time.After(30 * time.Second):
			t.Fatal("no call reached the receiver")
			return call{}
		}
	}
	bin := daemonBinary(t)
	d := crashStart(t, bin, dataDir, token)
	base := func() string {
		b, err := os.ReadFile(filepath.Join(dataDir, "listen-address"))
		if err != nil {
			t.Fatal(err)
		}
		return "http://" + strings.TrimSpace(string(b))
	}
	// send PUTs body at path, or POSTs it to a backfill path.
	send := func(path, body string) (int, string) {
		t.Helper()
		req, err := http.NewRequest(http.MethodPut, base()+path+"?api-version=2016-03-01", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(path, "/backfill") {
			req.Method = http.MethodPost
		}
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, string(raw)
	}
	coll := "/subscriptions/s/resourceGroups/rg/providers/Microsoft.Scheduler/jobCollections/c"
	if st, b := send(coll, `{"location":"local","properties":{"sku":{"name":"Standard"}}}`); st != http.StatusCreated {
		t.Fatalf("collection: %d %s", st, b)
	}
	// Every minute, Disabled: only the backfill runs.
	if st, b := send(coll+"/jobs/etl", `{"properties":{"startTime":"2026-01-01T00:00:00Z","state":"Disabled",
		"recurrence":{"frequency":"Minute","interval":1},"action":{"type":"Http","request":{"method":"POST","uri":"`+recv.URL+`/etl"}}}}`); st != http.StatusCreated {
		t.Fatalf("job: %d %s", st, b)
	}
	from := third.Add(-2 * time.Minute)
	rng := `{"from":"` + from.Format(time.RFC3339) + `","to":"` + from.Add(5*time.Minute).Format(time.RFC3339) + `"}`
	st, b := send(coll+"/jobs/etl/backfill", rng)
	if want := `{"count":5,"first":"` + from.Format(time.RFC3339) + `","last":"` + from.Add(4*time.Minute).Format(time.RFC3339) + `"}`; st != http.StatusAccepted || b != want {
		t.Fatalf("backfill: %d %s, want 202 %s", st, b, want)
	}
	var got []call
	for range 3 {
		got = append(got, next())
	}
	// The first execution still stored is the third (the first two ended): the 409 names it.
	if st, b := send(coll+"/jobs/etl/backfill", rng); st != http.StatusConflict || !strings.Contains(b, "has a backfill that is unfinished (execution tag "+got[2].tag+")") {
		t.Errorf("second backfill: %d %s", st, b)
	}
	if err := d.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if err := <-d.done; err == nil {
		t.Fatal("schedulerd exited cleanly although it was killed")
	}
	close(hold)
	crashStart(t, bin, dataDir, token)
	for range 3 {
		got = append(got, next())
	}
	want := []string{from.Format(time.RFC3339), from.Add(time.Minute).Format(time.RFC3339), third.Format(time.RFC3339),
		third.Format(time.RFC3339), third.Add(time.Minute).Format(time.RFC3339), third.Add(2 * time.Minute).Format(time.RFC3339)}
	for i, c := range got {
		if c.expected != want[i] {
			t.Errorf("call %d: expected time %s, want %s", i, c.expected, want[i])
		}
	}
	if got[3].tag != got[2].tag {
		t.Errorf("the third after the restart has tag %s, before %s", got[3].tag, got[2].tag)
	}
	tags := map[string]bool{}
	for _, c := range got {
		tags[c.tag] = true
	}
	if len(tags) != 5 {
		t.Errorf("%d distinct tags in %+v, want 5", len(tags), got)
	}
}
