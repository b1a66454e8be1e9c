package ui

import (
	"html"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/api"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
)

// runOutcomes creates in sub-a's jc1 three daily jobs against a failing target and runs each
// once now: good (its target answers 200), rescued (its target fails, its error action
// succeeds), broken (its target fails, no error action). It returns the main action's message
// of rescued and broken as the store holds them.
func runOutcomes(t *testing.T, h *harness) (rescuedMsg, brokenMsg string) {
	t.Helper()
	ok := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) }))
	t.Cleanup(ok.Close)
	bad := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "the billing API is down", http.StatusInternalServerError)
	}))
	t.Cleanup(bad.Close)
	h.mustAPI(http.MethodPut, collA, `{"location":"westus","properties":{"sku":{"name":"Standard"}}}`)
	action := func(uri, extra string) string {
		return `{"properties":{"startTime":"2027-01-01T00:00:00Z","recurrence":{"frequency":"Day","interval":1},
			"action":{"type":"Http","request":{"method":"GET","uri":"` + uri + `"},"retryPolicy":{"retryType":"None"}` + extra + `}}}`
	}
	h.mustAPI(http.MethodPut, collA+"/jobs/good", action(ok.URL, ""))
	h.mustAPI(http.MethodPut, collA+"/jobs/rescued", action(bad.URL, `,"errorAction":{"type":"Http","request":{"method":"GET","uri":"`+ok.URL+`"}}`))
	h.mustAPI(http.MethodPut, collA+"/jobs/broken", action(bad.URL, ""))
	b := h.browser()
	b.signIn(adminToken)
	tok := b.csrf("/ui/")
	for _, name := range []string{"good", "rescued", "broken"} {
		p := b.do(http.MethodPost, uiCollA+"/jobs/"+name+"/run", url.Values{"csrf": {tok}}, map[string]string{"Accept": "application/json"})
		if p.status != http.StatusOK {
			t.Fatalf("run %s: %d %s", name, p.status, p.body)
		}
	}
	want := map[string]int{"good": 1, "rescued": 2, "broken": 1}
	msgs := map[string]string{}
	deadline := time.Now().Add(20 * time.Second)
	for name, n := range want {
		key := jobKeyA()
		key.Name = name
		for {
			hs, err := h.store.HistoryList(t.Context(), store.HistoryListParams{Job: key})
			if err != nil {
				t.Fatal(err)
			}
			if len(hs) >= n {
				msgs[name] = hs[len(hs)-1].Message // the oldest: the main action's attempt
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: %d history entries, want %d", name, len(hs), n)
			}
			h.clock.Advance(100 * time.Millisecond)
			time.Sleep(10 * time.Millisecond)
		}
	}
	if !strings.Contains(msgs["rescued"], "the billing API is down") {
		t.Fatalf("rescued's main action message %q does not hold the target's answer", msgs["rescued"])
	}
	return msgs["rescued"], msgs["broken"]
}

// cell returns the inner HTML of the element with attribute data-job=job in body's table id.
func rowOf(body, table, job string) string {
	i := strings.Index(body, `<table id="`+table+`"`)
	if i < 0 {
		return ""
	}
	body = body[i:]
	if j := strings.Index(body, "</table>"); j >= 0 {
		body = body[:j]
	}
	m := regexp.MustCompile(`(?s)<tr data-job="` + regexp.QuoteMeta(job) + `"[^>]*>(.*?)</tr>`).FindStringSubmatch(body)
	if m == nil {
		return ""
	}
	return m[1]
}

// TestOutcomesTellTheTruth: an execution whose main action failed and whose error action ran is
// "Failed, error action ran" (not the error action's green completion), one with no error action
// is "Faulted", each with the main action's message, on the collection page, the job page and
// the overview's recent failures (which link to the jobs and leave out the one that succeeded).
func TestOutcomesTellTheTruth(t *testing.T) {
	h := newHarness(t, false)
	rescuedMsg, brokenMsg := runOutcomes(t, h)
	b := h.browser()
	b.signIn(adminToken)

	coll := b.get(uiCollA).body
	for _, c := range []struct{ job, outcome, label, msg string }{
		{"good", "succeeded", "Succeeded", ""},
		{"rescued", "failed", "Failed, error action ran", rescuedMsg},
		{"broken", "faulted", "Faulted", brokenMsg},
	} {
		row := rowOf(coll, "jobs", c.job)
		want := `<span class="outcome outcome-` + c.outcome + `" data-outcome="` + c.outcome + `">` + c.label + `</span>`
		if !strings.Contains(row, want) {
			t.Errorf("collection page, %s: last outcome is not %q:\n%s", c.job, want, row)
		}
		if c.msg != "" && !strings.Contains(row, `<div class="msg">`+html.EscapeString(c.msg)+`</div>`) {
			t.Errorf("collection page, %s: the main action's message %q is not shown:\n%s", c.job, c.msg, row)
		}
	}

	job := b.get(uiCollA + "/jobs/rescued").body
	m := regexp.MustCompile(`(?s)<table id="executions">.*?<tr data-tag="[^"]+" data-outcome="(\w+)">(.*?)</tr>`).FindStringSubmatch(job)
	if m == nil || m[1] != "failed" || !strings.Contains(m[2], html.EscapeString(rescuedMsg)) || !strings.Contains(m[2], `<td class="num">2</td>`) {
		t.Errorf("job page of rescued: executions table %q, want one failed execution of 2 attempts with the main action's message", m)
	}
	if !strings.Contains(job, `<svg class="chart" id="chart-runs"`) ||
		!strings.Contains(job, "0 succeeded, 1 failed with the error action run, 0 faulted, 0 in progress") {
		t.Errorf("job page of rescued: no chart of its runs, or it says something else:\n%s", section(job, "h-runs"))
	}

	home := b.get("/ui/").body
	for _, c := range []struct{ job, outcome, msg string }{{"rescued", "failed", rescuedMsg}, {"broken", "faulted", brokenMsg}} {
		row := rowOf(home, "problems", c.job)
		if !strings.Contains(row, `<a href="`+uiCollA+`/jobs/`+c.job+`">`+c.job+`</a>`) ||
			!strings.Contains(row, `outcome-`+c.outcome) || !strings.Contains(row, html.EscapeString(c.msg)) {
			t.Errorf("overview: recent failures row of %s %q, want a link, %s and its message", c.job, row, c.outcome)
		}
	}
	if row := rowOf(home, "problems", "good"); row != "" {
		t.Errorf("overview lists the job that succeeded among the failures: %s", row)
	}
	if !strings.Contains(home, "1 execution succeeded, 1 failed with the error action run, 1 faulted") {
		t.Errorf("overview: the executions chart does not say one of each:\n%s", section(home, "h-charts"))
	}
}

// section returns body from the heading id on (for failure messages).
func section(body, id string) string {
	if i := strings.Index(body, `id="`+id+`"`); i >= 0 {
		body = body[i:]
	}
	return body[:min(len(body), 3000)]
}

// TestTenantSeesItsOwnFailuresAndCharts: sub-a's tenant sees its failures and counts; sub-b's
// sees none of them; the daemon-wide charts (lateness, load) are the admin's only.
func TestTenantSeesItsOwnFailuresAndCharts(t *testing.T) {
	h := newHarness(t, false)
	runOutcomes(t, h)
	h.ui.late.sample(h.clock.Now())
	h.clock.Advance(time.Minute)
	h.ui.late.sample(h.clock.Now())

	admin := h.browser()
	admin.signIn(adminToken)
	home := admin.get("/ui/").body
	for _, id := range []string{`id="chart-executions"`, `id="chart-lateness"`, `id="chart-load"`} {
		if !strings.Contains(home, id) {
			t.Errorf("admin's overview lacks %s", id)
		}
	}

	a := h.browser()
	a.signIn(subAToken)
	pa := a.get("/ui/").body
	if rowOf(pa, "problems", "rescued") == "" || rowOf(pa, "problems", "broken") == "" {
		t.Errorf("sub-a's overview does not list its own failures:\n%s", section(pa, "h-problems"))
	}
	if !strings.Contains(pa, "1 execution succeeded, 1 failed with the error action run, 1 faulted") {
		t.Errorf("sub-a's chart does not count its executions:\n%s", section(pa, "h-charts"))
	}

	bb := h.browser()
	bb.signIn(subBToken)
	pb := bb.get("/ui/").body
	if strings.Contains(pb, `<table id="problems"`) || !strings.Contains(pb, `id="no-problems"`) {
		t.Errorf("sub-b's overview lists failures of another subscription:\n%s", section(pb, "h-problems"))
	}
	if !strings.Contains(pb, "0 executions succeeded, 0 failed with the error action run, 0 faulted") {
		t.Errorf("sub-b's chart counts another subscription's executions:\n%s", section(pb, "h-charts"))
	}
	for _, p := range []string{pa, pb} {
		for _, id := range []string{`id="chart-lateness"`, `id="chart-load"`, `id="lateness"`} {
			if strings.Contains(p, id) {
				t.Errorf("a tenant's overview shows the daemon-wide %s", id)
			}
		}
	}
}

// TestNextRunOfEachJob: the overview lists the next run of each job once, soonest first, each
// in its job's zone, not 50 rows of the most frequent job.
func TestNextRunOfEachJob(t *testing.T) {
	h := newHarness(t, false)
	h.mustAPI(http.MethodPut, collA, `{"location":"westus","properties":{"sku":{"name":"Standard"}}}`)
	put := func(name, rec string) {
		h.mustAPI(http.MethodPut, collA+"/jobs/"+name, `{"properties":{"startTime":"2026-11-18T00:00:00Z",
			"action":{"type":"Http","request":{"method":"GET","uri":"http://127.0.0.1:9/"}},"recurrence":`+rec+`}}`)
	}
	put("every-5-min", `{"frequency":"Minute","interval":5}`)
	put("tokyo-daily", `{"frequency":"Day","interval":1,"timeZone":"Asia/Tokyo","schedule":{"hours":[9],"minutes":[0]}}`)
	put("berlin-hourly", `{"frequency":"Hour","interval":1,"timeZone":"Europe/Berlin","schedule":{"minutes":[40]}}`)
	b := h.browser()
	b.signIn(adminToken)
	body := b.get("/ui/").body
	i := strings.Index(body, `<table id="next-runs">`)
	if i < 0 {
		t.Fatalf("no next runs table:\n%s", body)
	}
	rows := regexp.MustCompile(`(?s)<tr data-job="([^"]+)"><td><time datetime="([^"]+)">([^<]+)</time>.*?<td>([^<]+)</td></tr>`).FindAllStringSubmatch(body[i:], -1)
	var got []string
	for _, r := range rows {
		got = append(got, r[1]+" "+r[2]+" "+r[3]+" "+r[4])
	}
	// t0 is 2026-11-18 12:00:30 UTC.
	want := []string{
		"every-5-min 2026-11-18T12:05:00Z 2026-11-18 12:05:00 UTC UTC",
		"berlin-hourly 2026-11-18T12:40:00Z 2026-11-18 13:40:00 CET Europe/Berlin",
		"tokyo-daily 2026-11-19T00:00:00Z 2026-11-19 09:00:00 JST Asia/Tokyo",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("next runs:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestMetricsTokenDoesNotSignIn: the metrics token reads /metrics and nothing else: the
// dashboard refuses it as it refuses an unknown token, while the API serves it /metrics.
func TestMetricsTokenDoesNotSignIn(t *testing.T) {
	h := newHarness(t, false)
	b := h.browser()
	if p := b.signIn(metricsToken); p.status != http.StatusUnauthorized || !strings.Contains(p.body, "That token is not valid.") {
		t.Errorf("sign-in with the metrics token: %d", p.status)
	}
	if p := b.get("/ui/"); p.status != http.StatusSeeOther {
		t.Errorf("after the refused sign-in the overview answers %d, want a redirect to the sign-in form", p.status)
	}
	req, err := http.NewRequest(http.MethodGet, h.srv.URL+"/metrics", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+metricsToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("/metrics with the metrics token: %d", resp.StatusCode)
	}
}

// TestFailuresFromTheStore: the recent failures come from the store's history, so a dashboard
// that did not run them (another replica, or this one after a restart: no counts of its own)
// lists them too, and its overview has no chart of executions it did not count.
func TestFailuresFromTheStore(t *testing.T) {
	h := newHarness(t, false)
	rescuedMsg, _ := runOutcomes(t, h)
	other, err := New(Config{Store: h.store, API: h.ui.api, Tokens: h.ui.tokens, Dispatcher: h.ui.disp, Clock: h.clock})
	if err != nil {
		t.Fatal(err)
	}
	id, err := other.sessions.create(api.Principal{Subscription: "sub-a"})
	if err != nil {
		t.Fatal(err)
	}
	req := httptest.NewRequest(http.MethodGet, "/ui/", nil)
	req.AddCookie(&http.Cookie{Name: cookieName, Value: id})
	w := httptest.NewRecorder()
	other.ServeHTTP(w, req)
	body := w.Body.String()
	if w.Code != http.StatusOK || !strings.Contains(rowOf(body, "problems", "rescued"), html.EscapeString(rescuedMsg)) ||
		!strings.Contains(rowOf(body, "problems", "broken"), "outcome-faulted") || rowOf(body, "problems", "good") != "" {
		t.Errorf("a dashboard that ran nothing: %d, recent failures:\n%s", w.Code, section(body, "h-problems"))
	}
	if strings.Contains(body, `id="chart-executions"`) {
		t.Error("a dashboard without counts of its own draws a chart of executions")
	}
	// A day later (signed in again) they are out of the window.
	h.clock.Advance(25 * time.Hour)
	if id, err = other.sessions.create(api.Principal{Subscription: "sub-a"}); err != nil {
		t.Fatal(err)
	}
	req = httptest.NewRequest(http.MethodGet, "/ui/", nil)
	req.AddCookie(&http.Cookie{Name: cookieName, Value: id})
	w = httptest.NewRecorder()
	other.ServeHTTP(w, req)
	if !strings.Contains(w.Body.String(), `id="no-problems"`) {
		t.Errorf("a day later the failures are still listed:\n%s", section(w.Body.String(), "h-problems"))
	}
}
