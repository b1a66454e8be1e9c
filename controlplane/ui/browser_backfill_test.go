package ui

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestBrowserBackfill: against a real schedulerd, a person fills the job page's backfill form
// (from, to, in the job's zone) and presses Backfill: the answer says how many occurrences run,
// the target receives each once with its expected time, in order, and the history lists them; a
// range backwards is refused with the API's message naming the field, and nothing runs.
func TestBrowserBackfill(t *testing.T) {
	ctx := newBrowser(t)
	d := startDaemon(t)
	expected := make(chan string, 32)
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		expected <- r.Header.Get("x-ms-scheduler-expected-execution-time")
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(target.Close)
	coll := "/subscriptions/tenant-a/resourceGroups/ops/providers/Microsoft.Scheduler/jobCollections/etl"
	d.api(t, http.MethodPut, coll, `{"location":"westeurope","properties":{"sku":{"name":"Standard"}}}`)
	// Every minute, disabled: only the backfill runs.
	d.api(t, http.MethodPut, coll+"/jobs/load", `{"properties":{"startTime":"2026-01-01T00:00:00Z","state":"Disabled",
		"recurrence":{"frequency":"Minute","interval":1},
		"action":{"type":"Http","request":{"method":"POST","uri":"`+target.URL+`/load"}}}}`)
	from := time.Now().UTC().Truncate(time.Minute).Add(-10 * time.Minute)
	to := from.Add(3 * time.Minute)

	signInWith(t, ctx, d.base, e2eAdminToken)
	job := d.base + "/ui/subscriptions/tenant-a/resourceGroups/ops/jobCollections/etl/jobs/load"
	do(t, ctx, "open the job", chromedp.Navigate(job), chromedp.WaitVisible(chromedp.CSS("#backfill-form")))
	if zone := eval[string](t, ctx, `document.querySelector('#backfill-form small').textContent`); zone != "times in UTC; 1,000 occurrences at most" {
		t.Errorf("the form's zone: %q", zone)
	}
	fill := func(from, to time.Time) {
		t.Helper()
		eval[bool](t, ctx, `(document.querySelector('#backfill-from').value = '`+from.Format("2006-01-02T15:04:05")+`',
			document.querySelector('#backfill-to').value = '`+to.Format("2006-01-02T15:04:05")+`', true)`)
	}
	fill(from, to)
	wantMsg := "Started a backfill of load: 3 occurrences from " + from.Format(time.RFC3339) + " to " + from.Add(2*time.Minute).Format(time.RFC3339) +
		", run one after the other, oldest first; the history shows each as it ends."
	do(t, ctx, "backfill", chromedp.Click(chromedp.CSS("#backfill")),
		chromedp.Poll[chromedp.Void](`document.querySelector('#result').textContent.startsWith('Started a backfill')`, chromedp.WithPollingTimeout(20*time.Second)))
	if got := eval[string](t, ctx, `document.querySelector('#result').textContent`); got != wantMsg {
		t.Errorf("result %q\nwant %q", got, wantMsg)
	}
	var got []string
	for range 3 {
		select {
		case e := <-expected:
			got = append(got, e)
		case <-time.After(30 * time.Second):
			t.Fatalf("the target got %v", got)
		}
	}
	if want := []string{from.Format(time.RFC3339), from.Add(time.Minute).Format(time.RFC3339), from.Add(2 * time.Minute).Format(time.RFC3339)}; strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("expected times %v, want %v", got, want)
	}
	// The history lists them once their records are committed (within a moment of the calls).
	deadline := time.Now().Add(30 * time.Second)
	for {
		do(t, ctx, "open the job again", chromedp.Navigate(job), chromedp.WaitVisible(chromedp.CSS("#backfill-form")))
		n := eval[int](t, ctx, `document.querySelectorAll('#history-table tbody tr').length`)
		if n == 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the history lists %d entries, want 3", n)
		}
	}

	// A range backwards: the API's 400, naming the field, shown as an error.
	do(t, ctx, "reload", chromedp.Navigate(job), chromedp.WaitVisible(chromedp.CSS("#backfill-form")))
	fill(to, from)
	do(t, ctx, "backfill backwards", chromedp.Click(chromedp.CSS("#backfill")),
		chromedp.Poll[chromedp.Void](`document.querySelector('#result').classList.contains('error')`, chromedp.WithPollingTimeout(20*time.Second)))
	if got := eval[string](t, ctx, `document.querySelector('#result').textContent`); !strings.HasPrefix(got, "The API refused: to: "+from.Format(time.RFC3339)+" is not after from") {
		t.Errorf("backwards: %q", got)
	}
	if n := len(expected); n != 0 {
		t.Errorf("%d more calls after a refused backfill", n)
	}
	screenshot(t, ctx, "dashboard-job-backfill")
}
