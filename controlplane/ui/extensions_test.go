package ui

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/action"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/api"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/dispatch"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/jobstate"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/recurrence"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"
)

// Signing secrets of the tests ("whsec_" + base64 of 32 bytes): they must never show.
const (
	signingSecret  = "whsec_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8="
	previousSecret = "whsec_ZGVmZ2hpamtsbW5vcHFyc3R1dnd4eXp7fH1+f4CBgoM="
)

// wantIn fails the test unless body holds every fragment, exactly.
func wantIn(t *testing.T, what, body string, fragments ...string) {
	t.Helper()
	for _, f := range fragments {
		if !strings.Contains(body, f) {
			t.Errorf("%s lacks\n  %s\nin\n%s", what, f, section(body, "h-policies"))
		}
	}
}

// TestJobPageShowsPolicies: the job page says each policy as the rulebook reads it, with the
// defaults marked as such (deadline PT60S, Fixed 4 x PT30S, Allow, RunOnce at the daemon's
// threshold), an error action's deadline and retries, and a "signed" badge for a signing job,
// with none of its secrets.
func TestJobPageShowsPolicies(t *testing.T) {
	h := newHarness(t, false)
	h.mustAPI(http.MethodPut, collA, `{"location":"westus","properties":{"sku":{"name":"Standard"}}}`)
	h.mustAPI(http.MethodPut, collA+"/jobs/guarded", `{"properties":{"startTime":"2027-01-01T00:00:00Z",
		"recurrence":{"frequency":"Hour","interval":1},
		"overlap":"Skip","misfire":{"policy":"Skip","threshold":"PT5M"},
		"action":{"type":"Http","request":{"method":"POST","uri":"http://127.0.0.1:9/hook",
			"signing":{"secret":"`+signingSecret+`","previousSecret":"`+previousSecret+`"}},
			"retryPolicy":{"retryType":"Exponential","retryInterval":"PT20S","retryCount":6,"maxRetryInterval":"PT10M"},
			"timeout":"PT2M",
			"errorAction":{"type":"Http","request":{"method":"POST","uri":"http://127.0.0.1:9/err"},"timeout":"PT45S",
				"retryPolicy":{"retryType":"None"}}}}}`)
	h.mustAPI(http.MethodPut, collA+"/jobs/plain", `{"properties":{"startTime":"2027-01-01T00:00:00Z",
		"recurrence":{"frequency":"Hour","interval":1},
		"action":{"type":"Http","request":{"method":"GET","uri":"http://127.0.0.1:9/plain"},
			"errorAction":{"type":"Http","request":{"method":"POST","uri":"http://127.0.0.1:9/err"}}}}}`)
	b := h.browser()
	b.signIn(adminToken)

	p := b.get(uiCollA + "/jobs/guarded")
	if p.status != http.StatusOK {
		t.Fatalf("guarded: %d", p.status)
	}
	wantIn(t, "guarded", p.body,
		`<h1>guarded <span class="state state-enabled" id="job-state" data-state="Enabled">Enabled</span><span class="badge badge-signed" id="signed" title="Every HTTP attempt carries a Standard Webhooks signature: two during the secret's rotation">signed</span></h1>`,
		`<div id="policy-overlap"><dt>Overlap</dt><dd><code>Skip</code>: an occurrence due while the previous execution is unfinished is skipped (recorded as Skipped)</dd></div>`,
		`<div id="policy-misfire"><dt>Misfire</dt><dd><code>Skip</code>, threshold <code>PT5M</code>: occurrences missed by more than that are skipped (recorded)</dd></div>`,
		`<div id="policy-retry"><dt>Retries</dt><dd>Exponential: 6 retries, the first <code>PT20S</code> after the failure, each delay twice the previous (±20 %) up to <code>PT10M</code></dd></div>`,
		`<div id="policy-timeout"><dt>Deadline</dt><dd><code>PT2M</code> per attempt</dd></div>`,
		`<div id="policy-error-action"><dt>Error action</dt><dd>deadline <code>PT45S</code> per attempt; retries: None: a failed attempt is not retried</dd></div>`,
		`<div id="policy-signing"><dt>Signing</dt><dd><strong>signed</strong>: Standard Webhooks (<code>webhook-id</code>, <code>webhook-timestamp</code>, <code>webhook-signature</code>), one signature per secret while the previous secret is kept; the secrets are never shown</dd></div>`,
		`<div id="policy-jitter"><dt>Jitter</dt><dd>none</dd></div>`,
	)
	for _, secret := range []string{signingSecret, previousSecret, "whsec_", "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8", "ZGVmZ2hpamtsbW5vcHFyc3R1dnd4eXp7fH1"} {
		if strings.Contains(p.body, secret) {
			t.Errorf("the job page shows signing secret material %q", secret)
		}
	}

	p = b.get(uiCollA + "/jobs/plain")
	wantIn(t, "plain", p.body,
		`<h1>plain <span class="state state-enabled" id="job-state" data-state="Enabled">Enabled</span></h1>`,
		`<div id="policy-overlap"><dt>Overlap</dt><dd><code>Allow</code> <small>(default)</small>: an occurrence runs even while the previous execution is unfinished</dd></div>`,
		`<div id="policy-misfire"><dt>Misfire</dt><dd><code>RunOnce</code> <small>(default)</small>, threshold <code>PT60S</code> <small>(the daemon's)</small>: occurrences missed by more than that run once, coalesced</dd></div>`,
		`<div id="policy-retry"><dt>Retries</dt><dd>Fixed: 4 retries, <code>PT30S</code> apart <small>(default)</small></dd></div>`,
		`<div id="policy-timeout"><dt>Deadline</dt><dd><code>PT60S</code> <small>(default)</small> per attempt</dd></div>`,
		`<div id="policy-error-action"><dt>Error action</dt><dd>deadline <code>PT60S</code> <small>(default)</small> per attempt; retries: Fixed: 4 retries, <code>PT30S</code> apart <small>(default)</small></dd></div>`,
		`<div id="policy-signing"><dt>Signing</dt><dd>not signed</dd></div>`,
	)
	if strings.Contains(p.body, `id="signed"`) || strings.Contains(p.body, `id="policy-exclude"`) || strings.Contains(p.body, `id="pause"`) {
		t.Error("a job without extensions shows a signed badge, excluded dates or a pause")
	}
}

// TestPauseNoteAndResumeAtEscaped: a job paused until a time with a hostile note says "Paused
// until <time in its zone>, note: ..." on its page and in its collection's list, the note
// escaped everywhere (no script reaches the page).
func TestPauseNoteAndResumeAtEscaped(t *testing.T) {
	h := newHarness(t, false)
	h.mustAPI(http.MethodPut, collA, `{"location":"westus","properties":{"sku":{"name":"Standard"}}}`)
	note := `<script>alert("pwned")</script> & back after the freeze`
	noteJSON, _ := json.Marshal(note)
	h.mustAPI(http.MethodPut, collA+"/jobs/frozen", `{"properties":{"startTime":"2026-11-01T08:00:00",
		"recurrence":{"frequency":"Day","interval":1,"timeZone":"Europe/Berlin"},
		"state":"Disabled","resumeAt":"2026-12-01T09:00:00Z","note":`+string(noteJSON)+`,
		"action":{"type":"Http","request":{"method":"GET","uri":"http://127.0.0.1:9/x"}}}}`)
	h.mustAPI(http.MethodPut, collA+"/jobs/noted", `{"properties":{"startTime":"2026-11-01T08:00:00Z",
		"recurrence":{"frequency":"Day","interval":1},"note":"owned by <b>billing</b>",
		"action":{"type":"Http","request":{"method":"GET","uri":"http://127.0.0.1:9/y"}}}}`)
	b := h.browser()
	b.signIn(adminToken)
	escaped := `&lt;script&gt;alert(&#34;pwned&#34;)&lt;/script&gt; &amp; back after the freeze`

	p := b.get(uiCollA + "/jobs/frozen")
	wantIn(t, "frozen's page", p.body,
		`<p class="pause" id="pause"><strong>Paused</strong> until <time datetime="2026-12-01T09:00:00Z" id="resume-at">2026-12-01 10:00:00 CET</time> <small>(in 12 days; then Enabled by itself, nothing missed replayed)</small>, note: <span class="pause-note" id="note">`+escaped+`</span></p>`)
	p2 := b.get(uiCollA)
	wantIn(t, "the collection's list", rowOf(p2.body, "jobs", "frozen"),
		`<td><span class="state state-disabled">Disabled</span><div class="pause">until <time datetime="2026-12-01T09:00:00Z">2026-12-01 10:00:00 CET</time>, note: <span class="pause-note">`+escaped+`</span></div></td>`)
	wantIn(t, "the collection's list", rowOf(p2.body, "jobs", "noted"),
		`<td><span class="state state-enabled">Enabled</span><div class="pause">note: <span class="pause-note">owned by &lt;b&gt;billing&lt;/b&gt;</span></div></td>`)
	wantIn(t, "noted's page", b.get(uiCollA+"/jobs/noted").body,
		`<p class="pause" id="pause">Note: <span class="pause-note" id="note">owned by &lt;b&gt;billing&lt;/b&gt;</span></p>`)
	for what, body := range map[string]string{"job page": p.body, "collection": p2.body} {
		if strings.Contains(body, "<script>alert") || strings.Contains(body, "<b>billing") {
			t.Errorf("the %s lets the note's markup through", what)
		}
	}
}

// TestCalendarExcludedDatesAndJitter: a daily job at midnight (Berlin) with a jitter of 5 minutes
// and two excluded dates: December's calendar marks the dates excluded with no run, and lists 29
// runs, each at the rulebook's start (jobstate.StartAt for the job's identity key) with its
// window; the next runs say when each starts, when it was scheduled and when its window ends.
func TestCalendarExcludedDatesAndJitter(t *testing.T) {
	h := newHarness(t, false)
	h.mustAPI(http.MethodPut, collA, `{"location":"westus","properties":{"sku":{"name":"Standard"}}}`)
	h.mustAPI(http.MethodPut, collA+"/jobs/nightly", `{"properties":{"startTime":"2026-11-01T00:00:00",
		"recurrence":{"frequency":"Day","interval":1,"timeZone":"Europe/Berlin","jitter":"PT5M","excludeDates":["2026-12-24","2026-12-25"]},
		"action":{"type":"Http","request":{"method":"GET","uri":"http://127.0.0.1:9/n"}}}}`)
	var def wire.JobDefinition
	if err := json.Unmarshal([]byte(h.mustAPI(http.MethodGet, collA+"/jobs/nightly", "")), &def); err != nil {
		t.Fatal(err)
	}
	rule, err := recurrence.Compile(def.Properties.StartTime, def.Properties.Recurrence, t0)
	if err != nil {
		t.Fatal(err)
	}
	key := jobKeyA()
	key.Name = "nightly"
	id := key.CanonicalID()
	berlin := rule.Location()
	b := h.browser()
	b.signIn(adminToken)

	p := b.get(uiCollA + "/jobs/nightly?month=2026-12")
	if p.status != http.StatusOK {
		t.Fatalf("%d", p.status)
	}
	wantIn(t, "December", p.body,
		`<td class="excluded"><span class="day">24</span><span class="excluded-label">excluded</span></td>`,
		`<td class="excluded"><span class="day">25</span><span class="excluded-label">excluded</span></td>`,
		`<span>29 runs</span>`,
		`<div id="policy-jitter"><dt>Jitter</dt><dd>each occurrence starts up to <code>PT5M</code> after its scheduled time (the same offset on every replica)</dd></div>`,
		`<div id="policy-exclude"><dt>Excluded dates</dt><dd>2: <time datetime="2026-12-24">2026-12-24</time>, <time datetime="2026-12-25">2026-12-25</time></dd></div>`,
	)
	offsets := map[time.Duration]bool{}
	for day := 1; day <= 31; day++ {
		if day == 24 || day == 25 {
			continue
		}
		scheduled := time.Date(2026, 12, day, 0, 0, 0, 0, berlin)
		start := jobstate.StartAt(rule, id, scheduled).In(berlin)
		offsets[start.Sub(scheduled)] = true
		if start.Sub(scheduled) < 0 || start.Sub(scheduled) >= 5*time.Minute {
			t.Fatalf("the rulebook starts %v at %v", scheduled, start)
		}
		wantIn(t, "December", p.body, fmt.Sprintf(`<span class="day">%d</span><time datetime="%s" class="jittered" title="scheduled 00:00, window 00:00–00:05">%s</time></td>`,
			day, start.UTC().Format(time.RFC3339), start.Format("15:04")))
	}
	if len(offsets) < 10 {
		t.Errorf("29 jittered runs have only %d distinct offsets", len(offsets))
	}

	// The next runs: from 2026-11-19 00:00 Berlin (2026-11-18 23:00 UTC), each at its start.
	p = b.get(uiCollA + "/jobs/nightly")
	list := p.body[strings.Index(p.body, `<ol id="next-runs">`):]
	list = list[:strings.Index(list, "</ol>")]
	scheduled := time.Date(2026, 11, 19, 0, 0, 0, 0, berlin)
	var want strings.Builder
	want.WriteString(`<ol id="next-runs">`)
	for range 10 {
		start := jobstate.StartAt(rule, id, scheduled).In(berlin)
		fmt.Fprintf(&want, `<li><time datetime="%s">%s</time> <small class="window" data-scheduled="%s" data-window-end="%s">scheduled 00:00, window 00:00–00:05</small></li>`,
			start.UTC().Format(time.RFC3339), start.Format("2006-01-02 15:04:05 MST"), scheduled.UTC().Format(time.RFC3339),
			scheduled.Add(5*time.Minute).UTC().Format(time.RFC3339))
		scheduled = scheduled.AddDate(0, 0, 1)
	}
	if list != want.String() {
		t.Errorf("next runs\n got %s\nwant %s", list, want.String())
	}
	// The API's preview of the job as GET returns it (its id) says the same words and the same
	// starts, and the page says the words.
	var pv struct {
		Value     []string `json:"value"`
		Describe  string   `json:"describe"`
		Scheduled []string `json:"scheduled"`
	}
	if err := json.Unmarshal([]byte(h.mustAPI(http.MethodPost, "/preview/occurrences", h.mustAPI(http.MethodGet, collA+"/jobs/nightly", ""))), &pv); err != nil {
		t.Fatal(err)
	}
	const words = "at 00:00 every day, up to 5 minutes later, except 2 dates, from 2026-11-01 00:00, Europe/Berlin"
	wantIn(t, "the job's page", p.body, `<p class="meta" id="schedule">`+words+`</p>`)
	if pv.Describe != words || len(pv.Value) != 10 || len(pv.Scheduled) != 10 {
		t.Fatalf("POST /preview/occurrences of the job as returned: %+v", pv)
	}
	var previewed strings.Builder
	previewed.WriteString(`<ol id="next-runs">`)
	for i, v := range pv.Value {
		start, err1 := time.Parse(time.RFC3339Nano, v)
		sched, err2 := time.Parse(time.RFC3339, pv.Scheduled[i])
		if err1 != nil || err2 != nil {
			t.Fatalf("preview %s: %v %v", v, err1, err2)
		}
		start, sched = start.In(berlin), sched.In(berlin)
		fmt.Fprintf(&previewed, `<li><time datetime="%s">%s</time> <small class="window" data-scheduled="%s" data-window-end="%s">scheduled 00:00, window 00:00–00:05</small></li>`,
			start.UTC().Format(time.RFC3339), start.Format("2006-01-02 15:04:05 MST"), sched.UTC().Format(time.RFC3339),
			sched.Add(5*time.Minute).UTC().Format(time.RFC3339))
	}
	if list != previewed.String() {
		t.Errorf("POST /preview/occurrences %+v\nas next runs %s\nthe page's   %s", pv, previewed.String(), list)
	}
	// The job's next run, its collection's list and the overview's next run of each job say its
	// start too.
	first := jobstate.StartAt(rule, id, time.Date(2026, 11, 19, 0, 0, 0, 0, berlin))
	if first.Equal(time.Date(2026, 11, 19, 0, 0, 0, 0, berlin)) {
		t.Fatal("the first run has no offset: the test cannot tell a start from a scheduled time")
	}
	firstAt := first.In(berlin).Format("2006-01-02 15:04:05 MST")
	wantIn(t, "the job's facts", p.body, `<dd id="next-run">`+firstAt+` <small>in 11 h</small></dd>`)
	wantIn(t, "the overview", rowOf(b.get("/ui/").body, "next-runs", "nightly"),
		`<td><time datetime="`+first.UTC().Format(time.RFC3339)+`">`+firstAt+`</time></td>`)
	wantIn(t, "the collection", rowOf(b.get(uiCollA).body, "jobs", "nightly"),
		`<td><time datetime="`+first.UTC().Format(time.RFC3339)+`">`+firstAt+`</time></td>`)
}

// uiWith is a second dashboard on the harness's store and API with cfg changed, and a session of
// an admin on it.
func (h *harness) uiWith(cfg func(*Config)) (*Server, *http.Cookie) {
	h.t.Helper()
	c := Config{Store: h.store, API: h.ui.api, Tokens: h.ui.tokens, Dispatcher: h.ui.disp, Clock: h.clock}
	cfg(&c)
	s, err := New(c)
	if err != nil {
		h.t.Fatal(err)
	}
	id, err := s.sessions.create(api.Principal{Admin: true})
	if err != nil {
		h.t.Fatal(err)
	}
	return s, &http.Cookie{Name: cookieName, Value: id}
}

func getWith(t *testing.T, s *Server, c *http.Cookie, path string) string {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, path, nil)
	req.AddCookie(c)
	w := httptest.NewRecorder()
	s.ServeHTTP(w, req)
	if w.Code != http.StatusOK {
		t.Fatalf("GET %s: %d", path, w.Code)
	}
	return w.Body.String()
}

var traceparentRE = regexp.MustCompile(`^00-([0-9a-f]{32})-[0-9a-f]{16}-01$`)

// TestHistorySkippedAndTraces: a run's history entry shows the trace id its request carried in
// traceparent, linked with --trace-url; a Skipped entry (put in the store as the overlap policy
// records one) is rendered apart, with no trace, is no execution, and is what the Skipped filter
// lists.
func TestHistorySkippedAndTraces(t *testing.T) {
	h := newHarness(t, false)
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
	h.mustAPI(http.MethodPut, collA, `{"location":"westus","properties":{"sku":{"name":"Standard"}}}`)
	h.mustAPI(http.MethodPut, collA+"/jobs/Traced", `{"properties":{"startTime":"2027-01-01T00:00:00Z",
		"recurrence":{"frequency":"Hour","interval":1},"overlap":"Skip",
		"action":{"type":"Http","request":{"method":"GET","uri":"`+target.URL+`"}}}}`)
	key := jobKeyA()
	key.Name = "Traced" // in the trace as written: the resource ID keeps its case
	b := h.browser()
	b.signIn(adminToken)
	if p := b.do(http.MethodPost, uiCollA+"/jobs/Traced/run", url.Values{"csrf": {b.csrf("/ui/")}}, map[string]string{"Accept": "application/json"}); p.status != http.StatusOK {
		t.Fatalf("run: %d %s", p.status, p.body)
	}
	if _, err := h.outcomes.Wait(20*time.Second, func(o dispatch.Outcome) bool { return o.Job.Name == "Traced" }); err != nil {
		t.Fatal(err)
	}
	hs, err := h.store.HistoryList(t.Context(), store.HistoryListParams{Job: key})
	if err != nil || len(hs) != 1 {
		t.Fatalf("after the run: %d history entries, %v", len(hs), err)
	}
	ran := hs[0]
	mu.Lock()
	m := traceparentRE.FindStringSubmatch(parent)
	mu.Unlock()
	if m == nil {
		t.Fatalf("the target got traceparent %q", parent)
	}
	traceID := m[1]

	// A Skipped entry, recorded through the store as the overlap policy does.
	j, err := h.store.JobGet(t.Context(), store.JobGetParams{Key: key})
	if err != nil {
		t.Fatal(err)
	}
	at := t0.Add(time.Minute)
	claims, err := h.store.ExecutionClaimMany(t.Context(), store.ExecutionClaimManyParams{Now: at, Claims: []store.ExecutionClaim{{
		Execution: store.Execution{JobID: j.ID, Tag: "skipped-tag", Scheduled: at, Manual: true, Phase: store.ActionMain, DueAt: at, ClaimedAt: at},
	}}})
	if err != nil || claims[0].Err != nil {
		t.Fatalf("claim: %v %v", err, claims[0].Err)
	}
	x := claims[0].Execution
	msg := "Skipped: execution " + ran.ExecutionTag + " is unfinished <overlap Skip>"
	if _, err := h.store.AttemptRecordMany(t.Context(), store.AttemptRecordManyParams{Now: at, Records: []store.AttemptRecord{{
		ExecutionID: x.ID, JobID: j.ID, Finished: true,
		History: store.HistoryEntry{ExecutionTag: x.Tag, ActionName: store.ActionMain, Status: store.HistorySkipped, Message: msg,
			RepeatCount: x.RepeatCount, ExpectedExecutionTime: at, StartTime: at, EndTime: at},
	}}}); err != nil {
		t.Fatal(err)
	}

	s, c := h.uiWith(func(c *Config) { c.TraceURL = "https://tempo.example/trace/{traceId}?org=ops&x=1" })
	body := getWith(t, s, c, uiCollA+"/jobs/Traced")
	hist := body[strings.Index(body, `<table id="history-table">`):]
	hist = hist[:strings.Index(hist, "</table>")]
	rows := regexp.MustCompile(`(?s)<tr data-history-id="\d+" (.*?)</tr>`).FindAllStringSubmatch(hist, -1)
	if len(rows) != 2 {
		t.Fatalf("%d history rows:\n%s", len(rows), hist)
	}
	wantIn(t, "the Skipped row", rows[0][1],
		`data-status="Skipped" class="skipped">`,
		`<td><span class="state state-skipped">Skipped</span></td>`,
		`<td class="msg">Skipped: execution `+ran.ExecutionTag+` is unfinished &lt;overlap Skip&gt;</td>`,
		`<td>—</td>`)
	wantIn(t, "the run's row", rows[1][1],
		`data-status="Completed">`,
		`<td><a class="trace" href="https://tempo.example/trace/`+traceID+`?org=ops&amp;x=1" rel="noreferrer" data-trace-id="`+traceID+`"><code>`+traceID+`</code></a></td>`)
	if strings.Contains(rows[0][1], "data-trace-id") {
		t.Error("the Skipped entry shows a trace")
	}
	// The skipped occurrence is no execution: the executions table lists the run only.
	if n := strings.Count(body, `<tr data-tag="`); n != 1 || !strings.Contains(body, `<tr data-tag="`+ran.ExecutionTag+`" data-outcome="succeeded">`) {
		t.Errorf("%d executions listed:\n%s", n, section(body, "executions"))
	}
	// The execution's row links its trace too.
	wantIn(t, "the executions", section(body, "executions"),
		`<td><a class="trace" href="https://tempo.example/trace/`+traceID+`?org=ops&amp;x=1" rel="noreferrer" data-trace-id="`+traceID+`"><code>`+traceID+`</code></a></td>
    </tr>`)
	// The Skipped filter lists it alone.
	filtered := getWith(t, s, c, uiCollA+"/jobs/Traced?status=skipped")
	if n := strings.Count(filtered, `<tr data-history-id=`); n != 1 || !strings.Contains(filtered, `data-status="Skipped"`) ||
		!strings.Contains(filtered, `aria-current="true">Skipped</a>`) {
		t.Errorf("?status=skipped lists %d entries", n)
	}

	// Without --trace-url the id is shown, not linked.
	wantIn(t, "the history without a trace URL", b.get(uiCollA+"/jobs/Traced").body,
		`<td><code class="trace" data-trace-id="`+traceID+`">`+traceID+`</code></td>`)
}

// TestCheckTraceURL: the trace URL is an absolute http(s) URL with {traceId}.
func TestCheckTraceURL(t *testing.T) {
	for tpl, want := range map[string]string{
		"":                                      "",
		"https://tempo.example/trace/{traceId}": "",
		"http://jaeger:16686/trace/{traceId}":   "",
		"https://grafana.example/explore?left={traceId}&orgId=1": "",
		"https://tempo.example/trace/":                           `trace URL "https://tempo.example/trace/": want {traceId} where the trace id goes`,
		"/trace/{traceId}":                                       `trace URL "/trace/{traceId}": want an absolute http or https URL`,
		"javascript:alert({traceId})":                            `trace URL "javascript:alert({traceId})": want an absolute http or https URL`,
		"https://tempo.example/{traceId}/%zz":                    `trace URL "https://tempo.example/{traceId}/%zz": parse "https://tempo.example/0/%zz": invalid URL escape "%zz"`,
	} {
		err := CheckTraceURL(tpl)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != want {
			t.Errorf("CheckTraceURL(%q) = %q, want %q", tpl, got, want)
		}
	}
}

// TestISODuration: the durations the policies show.
func TestISODuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0:                              "PT0S",
		time.Second:                    "PT1S",
		1500 * time.Millisecond:        "PT1.5S",
		60 * time.Second:               "PT60S",
		90 * time.Second:               "PT90S",
		2 * time.Minute:                "PT2M",
		2*time.Minute + 30*time.Second: "PT2M30S",
		time.Hour:                      "PT1H",
		time.Hour + 30*time.Minute:     "PT1H30M",
		12 * time.Hour:                 "PT12H",
		24 * time.Hour:                 "P1D",
		26*time.Hour + 5*time.Second:   "P1DT2H5S",
		7 * 24 * time.Hour:             "P7D",
	} {
		if got := isoDuration(d); got != want {
			t.Errorf("isoDuration(%v) = %q, want %q", d, got, want)
		}
	}
}

// TestOccurrenceSkippedByOverlapOnTheJobPage: end to end through the dispatcher on the fake clock,
// an every-minute job with overlap Skip whose target answers slower than the period: the
// occurrence due while the first hangs is recorded Skipped by the daemon, and the job page shows
// it apart (the message naming the running execution's tag, no trace), beside the execution that
// ran, which alone is listed among the executions.
func TestOccurrenceSkippedByOverlapOnTheJobPage(t *testing.T) {
	h := newHarness(t, false)
	arrived := make(chan string, 4)
	answer := make(chan struct{})
	var (
		once  sync.Once
		calls int
		mu    sync.Mutex
	)
	release := func() { once.Do(func() { close(answer) }) }
	// The first attempt fails at once; its retry hangs until release.
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		calls++
		n := calls
		mu.Unlock()
		arrived <- r.Header.Get("x-ms-execution-tag")
		if n == 1 {
			http.Error(w, "warming up", http.StatusServiceUnavailable)
			return
		}
		<-answer
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(target.Close)
	t.Cleanup(release) // before the target closes
	h.mustAPI(http.MethodPut, collA, `{"location":"westus","properties":{"sku":{"name":"Standard"}}}`)
	h.mustAPI(http.MethodPut, collA+"/jobs/slow", `{"properties":{"startTime":"2026-11-18T12:01:00Z",
		"recurrence":{"frequency":"Minute","interval":1},"overlap":"Skip",
		"action":{"type":"Http","request":{"method":"GET","uri":"`+target.URL+`"},"retryPolicy":{"retryType":"Fixed","retryInterval":"PT15S","retryCount":1},"timeout":"PT10M"}}}`)
	key := jobKeyA()
	key.Name = "slow"
	j, err := h.store.JobGet(t.Context(), store.JobGetParams{Key: key})
	if err != nil {
		t.Fatal(err)
	}
	first, second := t0.Add(30*time.Second), t0.Add(90*time.Second) // 12:01:00 and 12:02:00
	if _, err := h.disp.TestSignals.Quiet.Wait(20*time.Second, func(q dispatch.Quiet) bool { return q.Next.Equal(first) }); err != nil {
		t.Fatal(err)
	}
	h.clock.Set(first)
	var running string
	for i, at := range []time.Time{first, first.Add(15 * time.Second)} { // the attempt, then its retry
		if i > 0 { // the failed attempt recorded, its retry waits
			if _, err := h.disp.TestSignals.Quiet.Wait(20*time.Second, func(q dispatch.Quiet) bool { return q.Next.Equal(at) }); err != nil {
				t.Fatal(err)
			}
		}
		h.clock.Set(at)
		select {
		case running = <-arrived:
		case <-time.After(20 * time.Second):
			t.Fatalf("attempt %d of the first occurrence did not reach the target", i+1)
		}
	}
	// Five occurrences fall due while it hangs (12:02 to 12:06): more Skipped entries than the
	// collection's list reads for a job's last execution at first.
	for n := range 5 {
		at := second.Add(time.Duration(n) * time.Minute)
		h.clock.Set(at)
		if _, err := h.disp.TestSignals.Skipped.Wait(20*time.Second, func(s dispatch.Skipped) bool {
			return s.JobID == j.ID && s.Scheduled.Equal(at)
		}); err != nil {
			t.Fatal(err)
		}
	}
	b := h.browser()
	b.signIn(adminToken)
	// While its retry hangs, the collection's list gives the job's execution in progress, past the
	// five Skipped entries recorded after its failed attempt.
	if row := rowOf(b.get(uiCollA).body, "jobs", "slow"); !strings.Contains(row, `<span class="outcome outcome-running" data-outcome="running">In progress</span>`) {
		t.Errorf("the collection's row of the job while its retry runs:\n%s", row)
	}
	release()
	if _, err := h.outcomes.Wait(20*time.Second, func(o dispatch.Outcome) bool { return o.Tag == running }); err != nil {
		t.Fatal(err)
	}

	body := b.get(uiCollA + "/jobs/slow").body
	hist := body[strings.Index(body, `<table id="history-table">`):]
	hist = hist[:strings.Index(hist, "</table>")]
	rows := regexp.MustCompile(`(?s)<tr data-history-id="\d+" (.*?)</tr>`).FindAllStringSubmatch(hist, -1)
	if len(rows) != 7 {
		t.Fatalf("%d history rows, want 7 (a failed attempt, its retry, five skipped):\n%s", len(rows), hist)
	}
	var skipped, ran string
	nSkipped := 0
	for _, r := range rows {
		switch {
		case strings.Contains(r[1], `data-status="Skipped"`):
			nSkipped++
			if strings.Contains(r[1], `datetime="2026-11-18T12:02:00Z"`) {
				skipped = r[1]
			}
		case strings.Contains(r[1], `data-status="Completed"`):
			ran = r[1]
		}
	}
	if nSkipped != 5 {
		t.Errorf("%d Skipped rows, want 5", nSkipped)
	}
	wantIn(t, "the Skipped row", skipped,
		`data-status="Skipped" class="skipped">`,
		`<td><span class="state state-skipped">Skipped</span></td>`,
		`<td><time datetime="2026-11-18T12:02:00Z">2026-11-18 12:02:00 UTC</time></td>`,
		`<td class="msg">`+html.EscapeString(jobstate.OverlapSkippedMessage(jobstate.OverlapSkip, running))+`</td>`,
		`<td>—</td>`)
	if !strings.Contains(jobstate.OverlapSkippedMessage(jobstate.OverlapSkip, running), running) {
		t.Errorf("the Skipped message does not name the running tag %s", running)
	}
	id, _ := action.ExecutionTrace(j.Key.ID(), running)
	wantIn(t, "the run's row", ran, `data-status="Completed">`, `data-trace-id="`+hex.EncodeToString(id[:])+`"`,
		`<td><time datetime="2026-11-18T12:01:00Z">2026-11-18 12:01:00 UTC</time></td>`)
	if n := strings.Count(body, `<tr data-tag="`); n != 1 || !strings.Contains(body, `<tr data-tag="`+running+`" data-outcome="succeeded">`) {
		t.Errorf("%d executions listed, want the one that ran:\n%s", n, section(body, "executions"))
	}
	if row := rowOf(b.get(uiCollA).body, "jobs", "slow"); !strings.Contains(row, `<span class="outcome outcome-succeeded" data-outcome="succeeded">Succeeded</span>`) {
		t.Errorf("the collection's row of the job:\n%s", row)
	}
}

// TestPauseEndsOnThePage: a job paused until 13:00 UTC says so on its page; when the daemon
// resumes it by itself at that time (the dispatcher, on the fake clock), its page says Enabled
// with the note alone, and its collection's list no longer says "until".
func TestPauseEndsOnThePage(t *testing.T) {
	h := newHarness(t, false)
	h.mustAPI(http.MethodPut, collA, `{"location":"westus","properties":{"sku":{"name":"Standard"}}}`)
	h.mustAPI(http.MethodPut, collA+"/jobs/maintained", `{"properties":{"startTime":"2026-11-01T08:00:00",
		"recurrence":{"frequency":"Day","interval":1,"timeZone":"Europe/Berlin"},
		"state":"Disabled","resumeAt":"2026-11-18T13:00:00Z","note":"maintenance <i>window</i>",
		"action":{"type":"Http","request":{"method":"GET","uri":"http://127.0.0.1:9/m"}}}}`)
	key := jobKeyA()
	key.Name = "maintained"
	j, err := h.store.JobGet(t.Context(), store.JobGetParams{Key: key})
	if err != nil {
		t.Fatal(err)
	}
	b := h.browser()
	b.signIn(adminToken)
	note := `<span class="pause-note" id="note">maintenance &lt;i&gt;window&lt;/i&gt;</span>`
	wantIn(t, "the paused job", b.get(uiCollA+"/jobs/maintained").body,
		`data-state="Disabled">Disabled</span>`,
		`<p class="pause" id="pause"><strong>Paused</strong> until <time datetime="2026-11-18T13:00:00Z" id="resume-at">2026-11-18 14:00:00 CET</time> <small>(in 59 min; then Enabled by itself, nothing missed replayed)</small>, note: `+note+`</p>`)

	h.clock.Set(time.Date(2026, 11, 18, 13, 0, 0, 0, time.UTC))
	if _, err := h.disp.TestSignals.Resumed.Wait(20*time.Second, func(r dispatch.Resumed) bool { return r.JobID == j.ID }); err != nil {
		t.Fatal(err)
	}
	page := b.get(uiCollA + "/jobs/maintained").body
	wantIn(t, "the resumed job", page,
		`data-state="Enabled">Enabled</span>`,
		`<p class="pause" id="pause">Note: `+note+`</p>`,
		`<dd id="next-run">2026-11-19 08:00:00 CET <small>in 18 h</small></dd>`)
	if strings.Contains(page, "Paused") || strings.Contains(page, `id="resume-at"`) {
		t.Error("the resumed job's page still says it is paused")
	}
	if row := rowOf(b.get(uiCollA).body, "jobs", "maintained"); !strings.Contains(row, `<div class="pause">note: <span class="pause-note">maintenance &lt;i&gt;window&lt;/i&gt;</span></div>`) ||
		strings.Contains(row, "until") {
		t.Errorf("the collection's row after the pause:\n%s", row)
	}
}
