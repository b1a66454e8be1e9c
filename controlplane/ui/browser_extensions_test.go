package ui

import (
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestBrowserJobExtensions: against a real schedulerd started with --trace-url, a person sees on
// a job's page its policies, the "signed" badge (and no secret), its next runs at their jittered
// starts within their windows, its excluded date on the calendar, and after "Run now" the
// history entry's trace id (the one its request carried) linked to the tracing system; a paused
// job says until when and why, its hostile note shown as text, never run, on its page and in the
// collection's list.
func TestBrowserJobExtensions(t *testing.T) {
	ctx := newBrowser(t)
	d := startDaemon(t, "--trace-url", "https://tempo.example/trace/{traceId}")
	var (
		mu     sync.Mutex
		parent string
	)
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		parent = r.Header.Get("traceparent")
		mu.Unlock()
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(target.Close)

	coll := "/subscriptions/tenant-a/resourceGroups/billing/providers/Microsoft.Scheduler/jobCollections/nightly"
	d.api(t, http.MethodPut, coll, `{"location":"westeurope","properties":{"sku":{"name":"Standard"}}}`)
	// An excluded date in the coming month, so that the next month's calendar shows it.
	excluded := time.Now().In(time.UTC).AddDate(0, 1, 0)
	excluded = time.Date(excluded.Year(), excluded.Month(), 10, 0, 0, 0, 0, time.UTC)
	d.api(t, http.MethodPut, coll+"/jobs/invoice-run", `{"properties":{"startTime":"2026-01-01T02:30:00",
		"recurrence":{"frequency":"Day","interval":1,"timeZone":"Europe/Berlin","jitter":"PT10M","excludeDates":["`+excluded.Format("2006-01-02")+`"]},
		"overlap":"BufferOne","misfire":{"policy":"RunAll","threshold":"PT15M"},
		"action":{"type":"Http","request":{"method":"POST","uri":"`+target.URL+`/invoice","signing":{"secret":"`+signingSecret+`"}},
			"retryPolicy":{"retryType":"Exponential","retryInterval":"PT30S","retryCount":5,"maxRetryInterval":"PT8M"},"timeout":"PT90S"}}}`)
	resume := time.Now().Add(50 * time.Hour).UTC().Truncate(time.Second)
	d.api(t, http.MethodPut, coll+"/jobs/frozen", `{"properties":{"startTime":"2026-01-01T02:30:00Z",
		"recurrence":{"frequency":"Day","interval":1},"state":"Disabled","resumeAt":"`+resume.Format(time.RFC3339)+`",
		"note":"<script>window.pwned=1</script><img src=x onerror=\"window.pwned=2\"> change freeze",
		"action":{"type":"Http","request":{"method":"GET","uri":"`+target.URL+`/frozen"}}}}`)

	signInWith(t, ctx, d.base, e2eAdminToken)
	job := d.base + "/ui/subscriptions/tenant-a/resourceGroups/billing/jobCollections/nightly/jobs/invoice-run"
	do(t, ctx, "open the job", chromedp.Navigate(job), chromedp.WaitVisible(chromedp.CSS("#policies")))
	texts := eval[map[string]string](t, ctx, `Object.fromEntries([...document.querySelectorAll('#policies dl > div')].map(e => [e.id, e.querySelector('dd').textContent]))`)
	for id, want := range map[string]string{
		"policy-overlap": "BufferOne: an occurrence due while the previous execution is unfinished waits for it, one at most (further ones are skipped)",
		"policy-misfire": "RunAll, threshold PT15M: occurrences missed by more than that each run, oldest first, 100 at most",
		"policy-retry":   "Exponential: 5 retries, the first PT30S after the failure, each delay twice the previous (±20 %) up to PT8M",
		"policy-timeout": "PT90S per attempt",
		"policy-signing": "signed: Standard Webhooks (webhook-id, webhook-timestamp, webhook-signature); the secrets are never shown",
		"policy-jitter":  "each occurrence starts up to PT10M after its scheduled time (the same offset on every replica)",
		"policy-exclude": "1: " + excluded.Format("2006-01-02"),
	} {
		if texts[id] != want {
			t.Errorf("%s: %q, want %q", id, texts[id], want)
		}
	}
	if badge := eval[string](t, ctx, `(e => e && getComputedStyle(e).display !== 'none' ? e.textContent : '')(document.querySelector('h1 #signed'))`); badge != "signed" {
		t.Errorf("the signed badge in the title: %q", badge)
	}
	if html := eval[string](t, ctx, "document.documentElement.outerHTML"); strings.Contains(html, "whsec_") || strings.Contains(html, signingSecret[6:30]) {
		t.Error("the job page shows signing secret material")
	}
	// Each next run starts within its window: [scheduled, scheduled + 10 min), scheduled at 02:30.
	runs := eval[[][]string](t, ctx, `[...document.querySelectorAll('#next-runs li')].map(li => [li.querySelector('time').getAttribute('datetime'),
		li.querySelector('.window').dataset.scheduled, li.querySelector('.window').dataset.windowEnd, li.querySelector('.window').textContent])`)
	if len(runs) != 10 {
		t.Fatalf("%d next runs", len(runs))
	}
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	offsets := map[time.Duration]bool{}
	for _, r := range runs {
		start, err1 := time.Parse(time.RFC3339, r[0])
		sched, err2 := time.Parse(time.RFC3339, r[1])
		end, err3 := time.Parse(time.RFC3339, r[2])
		if err1 != nil || err2 != nil || err3 != nil || sched.In(berlin).Format("15:04") != "02:30" || end.Sub(sched) != 10*time.Minute ||
			start.Before(sched) || !start.Before(end) || r[3] != "scheduled 02:30, window 02:30–02:40" {
			t.Errorf("next run %q", r)
		}
		if sched.In(berlin).Format("2006-01-02") == excluded.Format("2006-01-02") {
			t.Errorf("a next run on the excluded date: %q", r)
		}
		offsets[start.Sub(sched)] = true
	}
	if len(offsets) < 5 {
		t.Errorf("10 jittered runs with %d distinct offsets", len(offsets))
	}
	// Next month's calendar marks the excluded date, with no run on it.
	do(t, ctx, "next month", chromedp.Click(chromedp.CSS(`#calendar-section .pager a[href*="month="]`)),
		chromedp.WaitVisible(chromedp.CSS("#calendar td.excluded")))
	day := eval[string](t, ctx, `(td => td.querySelector('.day').textContent + ' ' + td.querySelector('.excluded-label').textContent + ' ' + td.querySelectorAll('time').length)(document.querySelector('#calendar td.excluded'))`)
	if day != "10 excluded 0" {
		t.Errorf("the excluded day on the calendar: %q", day)
	}

	// Run it now: the history entry's trace id is the one in the request's traceparent, linked.
	do(t, ctx, "run now",
		chromedp.Navigate(job), chromedp.WaitVisible(chromedp.CSS("#run-now")),
		chromedp.Click(chromedp.CSS("#run-now")),
		chromedp.Poll[chromedp.Void](`document.querySelectorAll('#history-table tbody tr').length === 1`, chromedp.WithPollingTimeout(30*time.Second)),
	)
	mu.Lock()
	m := regexp.MustCompile(`^00-([0-9a-f]{32})-[0-9a-f]{16}-01$`).FindStringSubmatch(parent)
	mu.Unlock()
	if m == nil {
		t.Fatalf("the target got traceparent %q", parent)
	}
	link := eval[[]string](t, ctx, `(a => a ? [a.textContent, a.href] : [])(document.querySelector('#history-table tbody tr a.trace'))`)
	if len(link) != 2 || link[0] != m[1] || link[1] != "https://tempo.example/trace/"+m[1] {
		t.Errorf("the history entry's trace link %q, want %s", link, m[1])
	}
	screenshot(t, ctx, "dashboard-job-extensions")
	// At phone width the policies, windows and trace ids fit: nothing overflows sideways.
	do(t, ctx, "phone width", chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(2)), chromedp.Reload(),
		chromedp.WaitVisible(chromedp.CSS("#policies")))
	if w := eval[int](t, ctx, "document.documentElement.scrollWidth"); w > 390 {
		t.Errorf("at 390 px wide the job page is %d px wide", w)
	}
	do(t, ctx, "desktop width", chromedp.EmulateViewport(1280, 900))

	// The paused job: until when and why, the note as text; no script of the note ran.
	do(t, ctx, "open the paused job",
		chromedp.Navigate(d.base+"/ui/subscriptions/tenant-a/resourceGroups/billing/jobCollections/nightly/jobs/frozen"),
		chromedp.WaitVisible(chromedp.CSS("#pause")))
	pause := eval[string](t, ctx, `document.querySelector('#pause').textContent`)
	wantPause := "Paused until " + resume.Format("2006-01-02 15:04:05 MST") + " (in 2 days; then Enabled by itself, nothing missed replayed), note: " +
		`<script>window.pwned=1</script><img src=x onerror="window.pwned=2"> change freeze`
	if pause != wantPause {
		t.Errorf("pause:\n %q\nwant\n %q", pause, wantPause)
	}
	if got := eval[string](t, ctx, `document.querySelector('#resume-at').getAttribute('datetime')`); got != resume.Format(time.RFC3339) {
		t.Errorf("resumeAt %q", got)
	}
	do(t, ctx, "the collection", chromedp.Navigate(d.base+"/ui/subscriptions/tenant-a/resourceGroups/billing/jobCollections/nightly"),
		chromedp.WaitVisible(chromedp.CSS("#jobs")))
	row := eval[string](t, ctx, `document.querySelector('tr[data-job="frozen"] .pause').textContent`)
	if want := "until " + resume.Format("2006-01-02 15:04:05 MST") + `, note: <script>window.pwned=1</script><img src=x onerror="window.pwned=2"> change freeze`; row != want {
		t.Errorf("the collection's row: %q, want %q", row, want)
	}
	if pwned := eval[bool](t, ctx, `window.pwned !== undefined || document.querySelectorAll('main script, main img').length > 0`); pwned {
		t.Error("the note's markup ran or was inserted")
	}

	// Enabled by hand, the pause line becomes the note alone, in place.
	do(t, ctx, "enable the paused job",
		chromedp.Navigate(d.base+"/ui/subscriptions/tenant-a/resourceGroups/billing/jobCollections/nightly/jobs/frozen"),
		chromedp.WaitVisible(chromedp.CSS("#enable")),
		chromedp.Click(chromedp.CSS("#enable")),
		chromedp.Poll[chromedp.Void](`document.querySelector('#pause').textContent.startsWith('Note: ')`, chromedp.WithPollingTimeout(20*time.Second)),
	)
	if got, want := eval[string](t, ctx, `document.querySelector('#pause').textContent`), `Note: <script>window.pwned=1</script><img src=x onerror="window.pwned=2"> change freeze`; got != want {
		t.Errorf("after enable: %q, want %q", got, want)
	}
	if pwned := eval[bool](t, ctx, `window.pwned !== undefined || document.querySelectorAll('main script, main img').length > 0`); pwned {
		t.Error("the note's markup ran or was inserted after the page's refresh")
	}
}
