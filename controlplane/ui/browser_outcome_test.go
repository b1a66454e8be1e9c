package ui

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"
)

// TestBrowserOutcomes: against a real schedulerd whose jobs call a failing target, a person sees
// on the overview the failed and faulted executions named, with the main action's message and
// a link to each job; the job page says "Failed, error action ran" with the main action's
// message and charts its runs; the charts are drawn without JavaScript and fit a phone; the
// collection page shows each job's outcome; another tenant sees none of it.
func TestBrowserOutcomes(t *testing.T) {
	ctx := newBrowser(t)
	d := startDaemon(t)
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/pager" || r.URL.Path == "/heartbeat" {
			w.WriteHeader(http.StatusOK)
			return
		}
		http.Error(w, "webhook receiver unavailable", http.StatusServiceUnavailable)
	}))
	t.Cleanup(target.Close)

	coll := "/subscriptions/tenant-a/resourceGroups/ops/providers/Microsoft.Scheduler/jobCollections/night"
	d.api(t, http.MethodPut, coll, `{"location":"westeurope","properties":{"sku":{"name":"Standard"}}}`)
	start := time.Now().Add(2 * time.Second).UTC().Format(time.RFC3339)
	noRetry := `"retryPolicy":{"retryType":"None"}`
	job := func(name, action string) {
		d.api(t, http.MethodPut, coll+"/jobs/"+name, `{"properties":{"startTime":"`+start+`","action":`+action+`,
			"recurrence":{"frequency":"Day","interval":1,"timeZone":"Europe/Berlin"}}}`)
	}
	job("heartbeat", `{"type":"Http","request":{"method":"GET","uri":"`+target.URL+`/heartbeat"},`+noRetry+`}`)
	job("nightly-webhook", `{"type":"Http","request":{"method":"POST","uri":"`+target.URL+`/hook","body":"x"},`+noRetry+`,
		"errorAction":{"type":"Http","request":{"method":"POST","uri":"`+target.URL+`/pager","body":"paged"},`+noRetry+`}}`)
	job("cleanup", `{"type":"Http","request":{"method":"DELETE","uri":"`+target.URL+`/cleanup"},`+noRetry+`}`)
	collB := "/subscriptions/tenant-b/resourceGroups/ops/providers/Microsoft.Scheduler/jobCollections/tenant-b-jobs"
	d.api(t, http.MethodPut, collB, `{"location":"westeurope","properties":{"sku":{"name":"Standard"}}}`)

	// Wait for their executions through the API.
	for name, n := range map[string]int{"heartbeat": 1, "nightly-webhook": 2, "cleanup": 1} {
		deadline := time.Now().Add(30 * time.Second)
		for {
			var h wire.JobHistoryListResult
			if err := json.Unmarshal(d.api(t, http.MethodGet, coll+"/jobs/"+name+"/history", ""), &h); err != nil {
				t.Fatal(err)
			}
			if len(h.Value) >= n {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: %d history entries after 30 s, want %d\n%s", name, len(h.Value), n, d.logs.String())
			}
			time.Sleep(100 * time.Millisecond)
		}
	}

	signInWith(t, ctx, d.base, e2eAdminToken)
	rows := eval[[]string](t, ctx, `[...document.querySelectorAll('#problems tbody tr')].map(r =>
		r.dataset.job + ' | ' + r.querySelector('.outcome').textContent + ' | ' + r.querySelector('.msg').textContent)`)
	if len(rows) != 2 {
		t.Fatalf("overview: recent failures %q, want nightly-webhook and cleanup", rows)
	}
	for _, want := range []string{"nightly-webhook | Failed, error action ran | ", "cleanup | Faulted | "} {
		found := false
		for _, r := range rows {
			if strings.HasPrefix(r, want) && strings.Contains(r, "503") && strings.Contains(r, "webhook receiver unavailable") {
				found = true
			}
		}
		if !found {
			t.Errorf("overview: no failure row %q with the target's answer in %q", want, rows)
		}
	}
	if w := eval[float64](t, ctx, `document.querySelector('#chart-executions').getBoundingClientRect().width`); w < 600 {
		t.Errorf("the executions chart is %.0f px wide", w)
	}
	screenshot(t, ctx, "dashboard-overview-failures")

	// The failure links to its job; the job page names the outcome and the main action's message.
	do(t, ctx, "open the failed job",
		chromedp.Click(chromedp.CSS(`#problems tr[data-job="nightly-webhook"] a[href$="/jobs/nightly-webhook"]`)),
		chromedp.WaitVisible(chromedp.CSS("#executions")),
	)
	first := eval[string](t, ctx, `(r => r.querySelector('.outcome').textContent + ' | ' + r.querySelector('.msg').textContent)(document.querySelector('#executions tbody tr'))`)
	if !strings.HasPrefix(first, "Failed, error action ran | ") || !strings.Contains(first, "webhook receiver unavailable") {
		t.Errorf("job page: newest execution %q, want Failed, error action ran with the main action's message", first)
	}
	if n := eval[int](t, ctx, `document.querySelectorAll('#chart-runs path.s-failed').length`); n != 1 {
		t.Errorf("job page: %d failed series in the chart of runs", n)
	}
	screenshot(t, ctx, "dashboard-job-failed")

	// Without JavaScript the charts are there: they are drawn by the server.
	do(t, ctx, "overview without JavaScript",
		chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			_, err := cdp.Call(ctx, tg, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: true})
			return err
		}),
		chromedp.Navigate(d.base+"/ui/"),
		chromedp.WaitVisible(chromedp.CSS("#chart-executions")),
	)
	do(t, ctx, "JavaScript back on", chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: false})
		return err
	}))

	// Phone width: the overview's charts and tables fit.
	do(t, ctx, "phone width",
		chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(2)),
		chromedp.Navigate(d.base+"/ui/"),
		chromedp.WaitVisible(chromedp.CSS("#chart-executions")),
	)
	if w := eval[int](t, ctx, "document.documentElement.scrollWidth"); w > 390 {
		t.Errorf("at 390 px wide the overview is %d px wide", w)
	}
	screenshot(t, ctx, "dashboard-overview-phone")
	do(t, ctx, "desktop width", chromedp.EmulateViewport(1280, 900))

	// The collection page: each job's last outcome.
	do(t, ctx, "the collection",
		chromedp.Navigate(d.base+"/ui/subscriptions/tenant-a/resourceGroups/ops/jobCollections/night"),
		chromedp.WaitVisible(chromedp.CSS("#jobs")),
	)
	got := eval[string](t, ctx, `[...document.querySelectorAll('#jobs tbody tr')].map(r => r.dataset.job + '=' + r.querySelector('.outcome').textContent).join(', ')`)
	if want := "cleanup=Faulted, heartbeat=Succeeded, nightly-webhook=Failed, error action ran"; got != want {
		t.Errorf("collection outcomes %q, want %q", got, want)
	}
	screenshot(t, ctx, "dashboard-collection-outcomes")

	// Another tenant sees none of it.
	do(t, ctx, "sign out",
		chromedp.Navigate(d.base+"/ui/"),
		chromedp.WaitVisible(chromedp.CSS(".who button")),
		chromedp.Click(chromedp.CSS(".who button")),
		chromedp.WaitVisible(chromedp.CSS("#token")),
	)
	signInWith(t, ctx, d.base, e2eTenantBToken)
	body := eval[string](t, ctx, "document.body.innerText")
	for _, s := range []string{"nightly-webhook", "cleanup", "webhook receiver unavailable", "Lateness"} {
		if strings.Contains(body, s) {
			t.Errorf("tenant-b's overview shows %q", s)
		}
	}
	if !strings.Contains(body, "0 executions succeeded, 0 failed with the error action run, 0 faulted") {
		t.Errorf("tenant-b's executions chart is not empty:\n%s", body)
	}
}
