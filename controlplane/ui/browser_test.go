package ui

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"github.com/schedulerhq/terraform-provider-scheduler/internal/recurrence"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/testlog"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"
)

// The browser tests drive Debian's Chromium (tools/chromium.sh installs it; CHROMIUM names
// another binary) against a real schedulerd process. They are skipped only when
// SCHEDULER_SKIP_BROWSER_TESTS=1 asks for it; without Chromium they fail.
// SCHEDULER_SCREENSHOTS=<dir> writes the README's screenshots there (docs/images).
const (
	skipBrowserEnv  = "SCHEDULER_SKIP_BROWSER_TESTS"
	screenshotsEnv  = "SCHEDULER_SCREENSHOTS"
	chromiumEnv     = "CHROMIUM"
	e2eAdminToken   = "e2e-admin-token-0123456789abcdef"
	e2eTenantBToken = "e2e-tenant-b-token-0123456789abcdef"
)

// daemon is a schedulerd process started for a test.
type daemon struct {
	base string
	logs *testlog.Buffer
}

// startDaemon builds schedulerd and runs it on a free port with a fresh data directory, with
// flags added to serve's.
func startDaemon(t *testing.T, flags ...string) *daemon {
	t.Helper()
	dir := t.TempDir()
	bin := filepath.Join(dir, "schedulerd")
	build := exec.Command("go", "build", "-o", bin, "github.com/schedulerhq/terraform-provider-scheduler/controlplane/cmd/schedulerd")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build schedulerd: %v\n%s", err, out)
	}
	data := filepath.Join(dir, "data")
	d := &daemon{logs: &testlog.Buffer{}}
	cmd := exec.Command(bin, append([]string{"serve", "--listen", "127.0.0.1:0", "--data", data}, flags...)...)
	cmd.Env = append(os.Environ(), "SCHEDULERD_ADMIN_TOKEN="+e2eAdminToken, "SCHEDULERD_TOKENS=tenant-b="+e2eTenantBToken)
	cmd.Stderr = d.logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(waited)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		select {
		case <-waited:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-waited
		}
	})
	deadline := time.Now().Add(30 * time.Second)
	for {
		b, err := os.ReadFile(filepath.Join(data, "listen-address"))
		if err == nil && strings.HasSuffix(string(b), "\n") {
			d.base = "http://" + strings.TrimSpace(string(b))
			return d
		}
		select {
		case <-waited:
			t.Fatalf("schedulerd exited:\n%s", d.logs.String())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("schedulerd did not listen within 30 s:\n%s", d.logs.String())
		}
	}
}

// api sends an API request with the admin token; it fails the test on a status of 300 or more.
func (d *daemon) api(t *testing.T, method, path, body string) []byte {
	t.Helper()
	req, err := http.NewRequest(method, d.base+path+apiVersion, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+e2eAdminToken)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var buf bytes.Buffer
	_, _ = buf.ReadFrom(resp.Body)
	if resp.StatusCode >= 300 {
		t.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, buf.String())
	}
	return buf.Bytes()
}

// receiver is the jobs' HTTP target: it counts the calls by path.
type receiver struct {
	mu    sync.Mutex
	calls map[string]int
}

func (r *receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	r.mu.Lock()
	r.calls[req.URL.Path]++
	r.mu.Unlock()
	w.WriteHeader(http.StatusOK)
}

// newBrowser starts a headless Chromium with a fresh profile.
func newBrowser(t *testing.T) context.Context {
	t.Helper()
	if os.Getenv(skipBrowserEnv) == "1" {
		t.Skipf("%s=1: browser tests skipped", skipBrowserEnv)
	}
	path := os.Getenv(chromiumEnv)
	if path == "" {
		path = "/usr/bin/chromium"
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("no Chromium at %s (%v): run tools/chromium.sh (make test does), set %s, or set %s=1 to skip", path, err, chromiumEnv, skipBrowserEnv)
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("hide-scrollbars", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 900),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() {
		cancel()
		cancelAlloc()
	})
	ctx, cancelTimeout := context.WithTimeout(ctx, 3*time.Minute)
	t.Cleanup(cancelTimeout)
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("starting Chromium: %v", err)
	}
	return ctx
}

// do runs browser actions, failing the test with what it was doing.
func do(t *testing.T, ctx context.Context, what string, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(ctx, steps...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

func eval[T any](t *testing.T, ctx context.Context, expr string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

// screenshot writes the whole page (or, with viewport, what the window shows) as
// <dir>/<name>.png when SCHEDULER_SCREENSHOTS names a directory (make screenshots: images/).
func screenshot(t *testing.T, ctx context.Context, name string, viewport ...bool) {
	t.Helper()
	dir := os.Getenv(screenshotsEnv)
	if dir == "" {
		return
	}
	shot := chromedp.FullScreenshot(100)
	if len(viewport) > 0 && viewport[0] {
		shot = chromedp.CaptureScreenshot()
	}
	png, err := chromedp.Run(ctx, shot)
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
}

// signInWith signs in on the sign-in form as a person would.
func signInWith(t *testing.T, ctx context.Context, base, token string) {
	t.Helper()
	do(t, ctx, "sign in",
		chromedp.Navigate(base+"/ui/"),
		chromedp.WaitVisible(chromedp.CSS("#token")),
		chromedp.SendKeys(chromedp.CSS("#token"), token),
		chromedp.Submit(chromedp.CSS("#token")),
		chromedp.WaitVisible(chromedp.CSS("#job-states")),
	)
}

// TestBrowserDashboard: a person signs in, finds a job, sees its next runs as the engine
// computes them, runs it and sees the new history entry, disables it and sees its state, uses
// the page without JavaScript and at phone width; another tenant's token sees nothing of it.
func TestBrowserDashboard(t *testing.T) {
	ctx := newBrowser(t)
	d := startDaemon(t)
	recv := &receiver{calls: map[string]int{}}
	target := httptest.NewServer(recv)
	t.Cleanup(target.Close)

	coll := "/subscriptions/tenant-a/resourceGroups/billing/providers/Microsoft.Scheduler/jobCollections/nightly"
	d.api(t, http.MethodPut, coll, `{"location":"westeurope","properties":{"sku":{"name":"Standard"}}}`)
	job := func(name, recurrenceJSON string) {
		d.api(t, http.MethodPut, coll+"/jobs/"+name, `{"properties":{"startTime":"2026-01-01T02:30:00",
			"action":{"type":"Http","request":{"method":"POST","uri":"`+target.URL+`/`+name+`",
			"authentication":{"type":"Basic","username":"ops","password":"e2e-basic-password"}}},
			"recurrence":`+recurrenceJSON+`}}`)
	}
	job("invoice-run", `{"frequency":"Week","interval":1,"timeZone":"Europe/Berlin","schedule":{"weekDays":["Monday","Thursday"],"hours":[2,14],"minutes":[30]}}`)
	job("cleanup", `{"frequency":"Day","interval":1,"timeZone":"America/New_York","schedule":{"hours":[23],"minutes":[45]}}`)
	job("heartbeat", `{"frequency":"Minute","interval":15}`)
	job("month-end", `{"frequency":"Month","interval":1,"timeZone":"Europe/Berlin","schedule":{"monthDays":[-1],"hours":[18],"minutes":[0]}}`)
	collB := "/subscriptions/tenant-b/resourceGroups/ops/providers/Microsoft.Scheduler/jobCollections/tenant-b-jobs"
	d.api(t, http.MethodPut, collB, `{"location":"westeurope","properties":{"sku":{"name":"Standard"}}}`)
	d.api(t, http.MethodPut, collB+"/jobs/b-only", `{"properties":{"action":{"type":"Http","request":{"method":"GET","uri":"`+target.URL+`/b"}},
		"recurrence":{"frequency":"Hour","interval":6}}}`)

	// Sign in: the pages redirect to the form; the token never shows up in the address.
	signInWith(t, ctx, d.base, e2eAdminToken)
	if loc := eval[string](t, ctx, "location.href"); loc != d.base+"/ui/" || strings.Contains(loc, e2eAdminToken) {
		t.Fatalf("after sign-in at %s", loc)
	}
	if n := eval[int](t, ctx, `Number(document.querySelector('#job-states dd[data-state="Enabled"]').textContent)`); n != 5 {
		t.Errorf("overview: %d Enabled jobs, want 5", n)
	}
	// One row per job that will fire (the five Enabled), not 50 rows of the most frequent one.
	if n := eval[int](t, ctx, `document.querySelectorAll('#next-runs tbody tr').length`); n != 5 {
		t.Errorf("overview: %d next runs, want 5 (one per job)", n)
	}
	screenshot(t, ctx, "dashboard-overview", true)

	// Find the job: collection page, filter, then the job.
	do(t, ctx, "open the collection",
		chromedp.Click(chromedp.CSS(`#collections a[href$="/jobCollections/nightly"]`)),
		chromedp.WaitVisible(chromedp.CSS("#jobs")),
	)
	if n := eval[int](t, ctx, `document.querySelectorAll('#jobs tbody tr').length`); n != 4 {
		t.Errorf("collection: %d rows, want 4", n)
	}
	words := eval[string](t, ctx, `document.querySelector('tr[data-job="invoice-run"] td:nth-child(3)').textContent`)
	if want := "at 02:30 and 14:30, Monday and Thursday, from 2026-01-01 02:30, Europe/Berlin"; words != want {
		t.Errorf("schedule in words: %q (want %q)", words, want)
	}
	do(t, ctx, "open the job",
		chromedp.Click(chromedp.CSS(`#jobs a[href$="/jobs/invoice-run"]`)),
		chromedp.WaitVisible(chromedp.CSS("#calendar")),
	)

	// Its next runs are the engine's: the stored next execution, then the rule's candidates.
	var def wire.JobDefinition
	if err := json.Unmarshal(d.api(t, http.MethodGet, coll+"/jobs/invoice-run", ""), &def); err != nil {
		t.Fatal(err)
	}
	rule, err := recurrence.Compile(def.Properties.StartTime, def.Properties.Recurrence, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	at, err := time.Parse(time.RFC3339, def.Properties.Status.NextExecutionTime)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for range 10 {
		want = append(want, at.UTC().Format(time.RFC3339))
		at, _ = rule.Next(at)
	}
	got := eval[[]string](t, ctx, `[...document.querySelectorAll('#next-runs time')].map(e => e.getAttribute('datetime'))`)
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("next runs on the page\n %v\nthe engine's\n %v", got, want)
	}
	// The calendar lists the month's runs in the job's zone: each is 02:30 or 14:30 Berlin time.
	cal := eval[[]string](t, ctx, `[...document.querySelectorAll('#calendar time')].map(e => e.textContent)`)
	if len(cal) == 0 {
		t.Error("the calendar shows no run")
	}
	for _, c := range cal {
		if c != "02:30" && c != "14:30" {
			t.Errorf("calendar time %q is not in the job's zone", c)
			break
		}
	}
	if html := eval[string](t, ctx, "document.documentElement.outerHTML"); strings.Contains(html, "e2e-basic-password") {
		t.Error("the job page shows the job's password")
	}

	// Run it now: the result shows in place, then the new history entry (the page polls it).
	if n := eval[int](t, ctx, `document.querySelectorAll('#history-table tbody tr').length`); n != 0 {
		t.Fatalf("history before the run: %d entries", n)
	}
	do(t, ctx, "run now",
		chromedp.Click(chromedp.CSS("#run-now")),
		chromedp.Poll[chromedp.Void](`document.querySelector('#result').textContent.startsWith('Started a run of invoice-run')`,
			chromedp.WithPollingTimeout(20*time.Second)),
		chromedp.Poll[chromedp.Void](`document.querySelectorAll('#history-table tbody tr').length === 1`,
			chromedp.WithPollingTimeout(30*time.Second)),
	)
	if st := eval[string](t, ctx, `document.querySelector('#history-table tbody tr td:nth-child(3)').textContent`); st != "Completed" {
		t.Errorf("the new history entry is %q", st)
	}
	recv.mu.Lock()
	calls := recv.calls["/invoice-run"]
	recv.mu.Unlock()
	if calls != 1 {
		t.Errorf("invoice-run's target was called %d times", calls)
	}
	screenshot(t, ctx, "dashboard-job")

	// Disable it: the state changes in place and in the API.
	do(t, ctx, "disable",
		chromedp.Click(chromedp.CSS("#disable")),
		chromedp.Poll[chromedp.Void](`document.querySelector('#job-state').textContent === 'Disabled'`, chromedp.WithPollingTimeout(20*time.Second)),
	)
	var after wire.JobDefinition
	if err := json.Unmarshal(d.api(t, http.MethodGet, coll+"/jobs/invoice-run", ""), &after); err != nil {
		t.Fatal(err)
	}
	if after.Properties.State != "Disabled" || after.Properties.Status.NextExecutionTime != "" {
		t.Errorf("after disable the API says %s, next %q", after.Properties.State, after.Properties.Status.NextExecutionTime)
	}
	if dis := eval[bool](t, ctx, `document.querySelector('#disable').disabled && !document.querySelector('#enable').disabled`); !dis {
		t.Error("the buttons do not follow the state")
	}
	// The next runs and the calendar follow without a reload: a disabled job has none.
	do(t, ctx, "next runs after disable",
		chromedp.Poll[chromedp.Void](`document.querySelector('#next-runs-none') !== null && document.querySelectorAll('#calendar time').length === 0`,
			chromedp.WithPollingTimeout(20*time.Second)),
	)

	// Without JavaScript the same buttons are forms: enable redirects to the page with the result.
	do(t, ctx, "enable without JavaScript",
		chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			_, err := cdp.Call(ctx, tg, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: true})
			return err
		}),
		chromedp.Reload(),
		chromedp.WaitVisible(chromedp.CSS("#enable")),
		chromedp.Click(chromedp.CSS("#enable")),
		chromedp.WaitVisible(chromedp.CSS("#flash")),
	)
	flash, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#flash")))
	if err != nil || !strings.HasPrefix(flash, "invoice-run is Enabled. Next run: ") {
		t.Errorf("flash %q %v", flash, err)
	}
	state, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#job-state")))
	if err != nil || state != "Enabled" {
		t.Errorf("state without JavaScript: %q %v", state, err)
	}
	do(t, ctx, "JavaScript back on", chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: false})
		return err
	}))

	// Keyboard: the first Tab reaches the skip link; Enter on it moves to the content.
	do(t, ctx, "health", chromedp.Navigate(d.base+"/ui/health"), chromedp.WaitVisible(chromedp.CSS("#health")))
	screenshot(t, ctx, "dashboard-health")
	do(t, ctx, "keyboard", chromedp.KeyEvent("\t"))
	if cls := eval[string](t, ctx, "document.activeElement.className"); cls != "skip" {
		t.Errorf("the first Tab focuses %q, want the skip link", cls)
	}

	// Phone width: nothing overflows the page sideways (wide tables scroll inside their box).
	do(t, ctx, "phone width",
		chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(2)),
		chromedp.Navigate(d.base+"/ui/subscriptions/tenant-a/resourceGroups/billing/jobCollections/nightly/jobs/invoice-run"),
		chromedp.WaitVisible(chromedp.CSS("#calendar")),
	)
	if w := eval[int](t, ctx, "document.documentElement.scrollWidth"); w > 390 {
		t.Errorf("at 390 px wide the job page is %d px wide", w)
	}
	screenshot(t, ctx, "dashboard-job-phone")
	do(t, ctx, "desktop width", chromedp.EmulateViewport(1280, 900))
	do(t, ctx, "the collection again",
		chromedp.Navigate(d.base+"/ui/subscriptions/tenant-a/resourceGroups/billing/jobCollections/nightly"),
		chromedp.WaitVisible(chromedp.CSS("#jobs")),
	)
	if st := eval[string](t, ctx, `document.querySelector('tr[data-job="invoice-run"] td:nth-child(5) .outcome').textContent`); st != "Succeeded" {
		t.Errorf("the collection shows invoice-run's last outcome as %q", st)
	}
	screenshot(t, ctx, "dashboard-collection")

	// Sign out; tenant-b's token sees only its own collection, and tenant-a's job is a 404.
	do(t, ctx, "sign out",
		chromedp.Navigate(d.base+"/ui/"),
		chromedp.WaitVisible(chromedp.CSS(".who button")),
		chromedp.Click(chromedp.CSS(".who button")),
		chromedp.WaitVisible(chromedp.CSS("#token")),
	)
	screenshot(t, ctx, "dashboard-signin")
	signInWith(t, ctx, d.base, e2eTenantBToken)
	body := eval[string](t, ctx, "document.body.innerText")
	for _, s := range []string{"nightly", "invoice-run", "tenant-a", "billing", "cleanup"} {
		if strings.Contains(body, s) {
			t.Errorf("tenant-b's overview shows %q", s)
		}
	}
	if !strings.Contains(body, "tenant-b-jobs") {
		t.Errorf("tenant-b's overview lacks its own collection:\n%s", body)
	}
	resp, err := chromedp.Run(ctx, chromedp.NavigateResponse(d.base+"/ui/subscriptions/tenant-a/resourceGroups/billing/jobCollections/nightly/jobs/invoice-run"))
	if err != nil {
		t.Fatal(err)
	}
	body = eval[string](t, ctx, "document.body.innerText")
	if resp.Status != http.StatusNotFound || strings.Contains(body, "invoice-run") || strings.Contains(body, "Europe/Berlin") {
		t.Errorf("tenant-b on tenant-a's job: %d\n%s", resp.Status, body)
	}
	if strings.Contains(d.logs.String(), e2eAdminToken) || strings.Contains(d.logs.String(), e2eTenantBToken) {
		t.Error("the daemon's log contains a token")
	}
}
