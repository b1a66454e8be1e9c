package ui

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/recurrence"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"
)

const jobA = uiCollA + "/jobs/hourly"

func sessionCookie(t *testing.T, p page) *http.Cookie {
	t.Helper()
	for _, c := range (&http.Response{Header: p.header}).Cookies() {
		if c.Name == cookieName {
			return c
		}
	}
	t.Fatalf("no %s cookie in %v", cookieName, p.header.Values("Set-Cookie"))
	return nil
}

// TestSignInSetsASessionCookieNotTheToken: the cookie is HttpOnly, SameSite=Strict, limited to
// /ui/, expiring, Secure only over TLS; it is not the token, and neither the answer nor the log
// contains the token.
func TestSignInSetsASessionCookieNotTheToken(t *testing.T) {
	for _, tlsServer := range []bool{false, true} {
		h := newHarness(t, tlsServer)
		b := h.browser()
		p := b.signIn(adminToken)
		if p.status != http.StatusSeeOther || p.header.Get("Location") != "/ui/" {
			t.Fatalf("tls %v: sign-in answered %d %q", tlsServer, p.status, p.header.Get("Location"))
		}
		c := sessionCookie(t, p)
		if !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || c.Path != "/ui/" || c.MaxAge != int(DefaultSessionTTL/time.Second) || c.Secure != tlsServer {
			t.Errorf("tls %v: cookie %+v", tlsServer, c)
		}
		if c.Value == adminToken || strings.Contains(c.Value, adminToken) || len(c.Value) < 43 {
			t.Errorf("cookie value %q is not a random id", c.Value)
		}
		home := b.get("/ui/")
		if home.status != http.StatusOK || !strings.Contains(home.body, `<span id="who">admin</span>`) {
			t.Fatalf("overview after sign-in: %d", home.status)
		}
		for _, s := range []string{p.body, home.body, h.logs.String(), strings.Join(p.header.Values("Location"), " ")} {
			if strings.Contains(s, adminToken) {
				t.Errorf("the token appears in an answer or the log")
			}
		}
		if got := home.header.Get("Cache-Control"); got != "no-store" {
			t.Errorf("Cache-Control %q", got)
		}
		if csp := home.header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") || !strings.Contains(csp, "frame-ancestors 'none'") {
			t.Errorf("CSP %q", csp)
		}
	}
}

// TestSignInRefusesUnknownTokenAndOtherOrigins: a wrong token gets 401 and no cookie; a sign-in
// posted from another site is refused whatever the token (login CSRF).
func TestSignInRefusesUnknownTokenAndOtherOrigins(t *testing.T) {
	h := newHarness(t, false)
	b := h.browser()
	p := b.signIn("not-a-token")
	if p.status != http.StatusUnauthorized || len(p.header.Values("Set-Cookie")) != 0 || !strings.Contains(p.body, "That token is not valid.") {
		t.Fatalf("wrong token: %d cookies %v", p.status, p.header.Values("Set-Cookie"))
	}
	if strings.Contains(p.body, "not-a-token") || strings.Contains(h.logs.String(), "not-a-token") {
		t.Error("the refused token is echoed or logged")
	}
	for _, hdr := range []map[string]string{{"Origin": "http://evil.example"}, {"Sec-Fetch-Site": "cross-site"}, {"Origin": "null"}} {
		p := b.do(http.MethodPost, "/ui/signin", url.Values{"token": {adminToken}}, hdr)
		if p.status != http.StatusForbidden || len(p.header.Values("Set-Cookie")) != 0 {
			t.Errorf("%v: %d, cookies %v", hdr, p.status, p.header.Values("Set-Cookie"))
		}
	}
}

// TestPagesNeedASession: pages redirect to the sign-in form (keeping where to go back, never a
// token); changes answer 401.
func TestPagesNeedASession(t *testing.T) {
	h := newHarness(t, false)
	h.seed()
	b := h.browser()
	for _, path := range []string{"/ui/", "/ui/health", uiCollA, jobA} {
		p := b.get(path)
		if p.status != http.StatusSeeOther || p.header.Get("Location") != "/ui/signin?next="+url.QueryEscape(path) {
			t.Errorf("GET %s: %d %q", path, p.status, p.header.Get("Location"))
		}
	}
	p := b.do(http.MethodPost, jobA+"/disable", url.Values{"csrf": {"x"}}, nil)
	if p.status != http.StatusUnauthorized {
		t.Errorf("POST without a session: %d", p.status)
	}
	// After sign-in the next page is the one asked for; only dashboard paths are followed.
	p = b.do(http.MethodPost, "/ui/signin", url.Values{"token": {adminToken}, "next": {jobA}}, nil)
	if p.header.Get("Location") != jobA {
		t.Errorf("next: %q", p.header.Get("Location"))
	}
	for _, next := range []string{"https://evil.example/", "//evil.example/ui/", "/metrics"} {
		p = h.browser().do(http.MethodPost, "/ui/signin", url.Values{"token": {adminToken}, "next": {next}}, nil)
		if p.header.Get("Location") != "/ui/" {
			t.Errorf("next %q: went to %q", next, p.header.Get("Location"))
		}
	}
}

// TestChangesNeedTheCSRFTokenAndThisOrigin: disable without the session's token, with another
// session's token, from another origin or another site is refused and changes nothing; with it,
// it disables the job.
func TestChangesNeedTheCSRFTokenAndThisOrigin(t *testing.T) {
	h := newHarness(t, false)
	h.seed()
	b := h.browser()
	b.signIn(adminToken)
	tok := b.csrf(jobA)
	other := h.browser()
	other.signIn(adminToken)
	otherTok := other.csrf(jobA)
	json := map[string]string{"Accept": "application/json"}
	for name, c := range map[string]struct {
		form   url.Values
		header map[string]string
	}{
		"no token":            {url.Values{}, json},
		"wrong token":         {url.Values{"csrf": {"forged"}}, json},
		"another session's":   {url.Values{"csrf": {otherTok}}, json},
		"another origin":      {url.Values{"csrf": {tok}}, map[string]string{"Origin": "http://evil.example"}},
		"another site":        {url.Values{"csrf": {tok}}, map[string]string{"Sec-Fetch-Site": "same-site"}},
		"another port":        {url.Values{"csrf": {tok}}, map[string]string{"Origin": h.srv.URL + "1"}},
		"no token, as a form": {url.Values{}, nil},
	} {
		p := b.do(http.MethodPost, jobA+"/disable", c.form, c.header)
		if p.status != http.StatusForbidden {
			t.Errorf("%s: %d %s", name, p.status, p.body)
		}
	}
	j, err := h.store.JobGet(t.Context(), store.JobGetParams{Key: jobKeyA()})
	if err != nil || j.State != store.JobStateEnabled {
		t.Fatalf("the job changed: %v %v", j.State, err)
	}
	p := b.do(http.MethodPost, jobA+"/disable", url.Values{"csrf": {tok}},
		map[string]string{"Accept": "application/json", "Origin": h.srv.URL, "Sec-Fetch-Site": "same-origin"})
	if p.status != http.StatusOK || !strings.Contains(p.body, `"state":"Disabled"`) {
		t.Fatalf("disable: %d %s", p.status, p.body)
	}
	// A form without JavaScript: a redirect to the job's page, which shows the result.
	p = b.do(http.MethodPost, jobA+"/enable", url.Values{"csrf": {tok}}, nil)
	if p.status != http.StatusSeeOther || p.header.Get("Location") != jobA {
		t.Fatalf("enable form: %d %q", p.status, p.header.Get("Location"))
	}
	if page := b.get(jobA); !strings.Contains(page.body, `id="flash">hourly is Enabled. Next run: `) || !strings.Contains(page.body, `data-state="Enabled"`) {
		t.Errorf("the job page does not show the result:\n%s", page.body)
	}
}

func jobKeyA() store.JobKey {
	return store.JobKey{CollectionKey: store.CollectionKey{Subscription: "sub-a", ResourceGroup: "rg1", Name: "jc1"}, Name: "hourly"}
}

// TestSubscriptionTokenSeesOnlyItsSubscription: sub-b's session sees its collection only; sub-a's
// pages are 404, the same as pages that do not exist, and its changes are refused.
func TestSubscriptionTokenSeesOnlyItsSubscription(t *testing.T) {
	h := newHarness(t, false)
	h.seed()
	b := h.browser()
	b.signIn(subBToken)
	home := b.get("/ui/")
	if !strings.Contains(home.body, ">jc2</a>") || strings.Contains(home.body, "jc1") || strings.Contains(home.body, "hourly") || strings.Contains(home.body, "sub-a") {
		t.Errorf("sub-b's overview:\n%s", home.body)
	}
	if strings.Contains(home.body, `id="lateness"`) {
		t.Error("a subscription token sees the daemon-wide lateness")
	}
	missing := b.get("/ui/subscriptions/sub-b/resourceGroups/rg1/jobCollections/nope")
	for _, path := range []string{uiCollA, jobA, "/ui/subscriptions/SUB-A/resourceGroups/rg1/jobCollections/jc1/jobs/hourly"} {
		p := b.get(path)
		if p.status != http.StatusNotFound || p.body != missing.body {
			t.Errorf("GET %s: %d", path, p.status)
		}
	}
	tok := b.csrf("/ui/")
	p := b.do(http.MethodPost, jobA+"/disable", url.Values{"csrf": {tok}}, map[string]string{"Accept": "application/json"})
	if p.status != http.StatusNotFound {
		t.Errorf("disable of sub-a's job: %d %s", p.status, p.body)
	}
	if j, _ := h.store.JobGet(t.Context(), store.JobGetParams{Key: jobKeyA()}); j.State != store.JobStateEnabled {
		t.Errorf("sub-a's job is %s", j.State)
	}
	// sub-a's token sees its own job.
	a := h.browser()
	a.signIn(subAToken)
	if p := a.get(jobA); p.status != http.StatusOK {
		t.Errorf("sub-a's job page: %d", p.status)
	}
}

// TestSessionExpiresAndSignOutEndsIt: a session ends after its TTL, and at sign-out (the old
// cookie no longer works).
func TestSessionExpiresAndSignOutEndsIt(t *testing.T) {
	h := newHarness(t, false)
	b := h.browser()
	b.signIn(adminToken)
	h.clock.Advance(DefaultSessionTTL - time.Second)
	if p := b.get("/ui/"); p.status != http.StatusOK {
		t.Fatalf("before expiry: %d", p.status)
	}
	h.clock.Advance(time.Second)
	if p := b.get("/ui/"); p.status != http.StatusSeeOther {
		t.Fatalf("after expiry: %d", p.status)
	}
	p := b.signIn(adminToken)
	old := sessionCookie(t, p)
	tok := b.csrf("/ui/")
	p = b.do(http.MethodPost, "/ui/signout", url.Values{"csrf": {tok}}, nil)
	if p.status != http.StatusSeeOther || p.header.Get("Location") != "/ui/signin" || sessionCookie(t, p).MaxAge >= 0 {
		t.Fatalf("sign-out: %d %v", p.status, p.header)
	}
	replay := h.browser()
	replay.client.Jar.SetCookies(mustURL(t, h.srv.URL+"/ui/"), []*http.Cookie{{Name: cookieName, Value: old.Value, Path: "/ui/"}})
	if p := replay.get("/ui/"); p.status != http.StatusSeeOther {
		t.Errorf("the cookie of a signed-out session still works: %d", p.status)
	}
}

func mustURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

var timeRE = regexp.MustCompile(`<time datetime="([^"]+)">`)

// TestJobPageNextRunsAndSecrets: the job page's next runs are the engine's (the stored next
// execution, then the rule's candidates) in the job's zone; the definition is the API's, without
// the password.
func TestJobPageNextRunsAndSecrets(t *testing.T) {
	h := newHarness(t, false)
	h.seed()
	b := h.browser()
	b.signIn(adminToken)
	p := b.get(jobA)
	if p.status != http.StatusOK {
		t.Fatalf("%d", p.status)
	}
	if strings.Contains(p.body, "the-basic-password") {
		t.Fatal("the job page shows the password")
	}
	if !strings.Contains(p.body, `id="schedule">every 3 hours at :15, from 2026-11-01 08:15, Europe/Berlin</p>`) {
		t.Errorf("schedule in words missing")
	}
	start := strings.Index(p.body, `<ol id="next-runs">`)
	end := strings.Index(p.body[start:], "</ol>")
	var got []string
	for _, m := range timeRE.FindAllStringSubmatch(p.body[start:start+end], -1) {
		got = append(got, m[1])
	}
	var def wire.JobDefinition
	if err := json.Unmarshal([]byte(h.mustAPI(http.MethodGet, collA+"/jobs/hourly", "")), &def); err != nil {
		t.Fatal(err)
	}
	rule, err := recurrence.Compile(def.Properties.StartTime, def.Properties.Recurrence, t0)
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
	// 2026-11-18 12:00:30 UTC is 13:00:30 in Berlin; the rule runs at 08:15 + 3h steps (Berlin).
	if want[0] != "2026-11-18T13:15:00Z" {
		t.Fatalf("the engine's first run is %s", want[0])
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("next runs\n got %v\nwant %v", got, want)
	}
	if !strings.Contains(p.body, "2026-11-18 14:15:00 CET") {
		t.Error("next runs are not shown in the job's zone")
	}
	// The calendar of November 2026 (Berlin) lists the remaining runs of the 18th: 14:15,
	// 17:15, 20:15, 23:15 local.
	if !strings.Contains(p.body, `<span class="day">18</span><time datetime="2026-11-18T13:15:00Z">14:15</time>`) {
		t.Error("the calendar does not show the 18th's runs")
	}
}

// TestLatenessOfTheLastHour: the overview's lateness counts only the executions observed since
// the sample taken an hour earlier.
func TestLatenessOfTheLastHour(t *testing.T) {
	reg := prometheus.NewRegistry()
	hist := prometheus.NewHistogram(prometheus.HistogramOpts{Name: latenessMetric, Buckets: []float64{0.01, 0.1, 1}})
	reg.MustRegister(hist)
	l := &lateness{gatherer: reg}
	for range 100 {
		hist.Observe(5) // before the window
	}
	l.sample(t0)
	l.sample(t0.Add(30 * time.Minute))
	for range 98 {
		hist.Observe(0.005)
	}
	hist.Observe(0.05)
	hist.Observe(0.5)
	st, ok := l.lastHour(t0.Add(time.Hour))
	if !ok || st.Count != 100 || st.P50 != "≤ 10 ms" || st.P99 != "≤ 100 ms" || st.Max != "≤ 1 s" || !st.Since.Equal(t0) {
		t.Fatalf("%+v", st)
	}
}

// TestBusyDashboardAnswers503: with every slot taken, a page is a 503 with Retry-After; once one
// is free it is served again.
func TestBusyDashboardAnswers503(t *testing.T) {
	h := newHarness(t, false)
	b := h.browser()
	b.signIn(adminToken)
	for range cap(h.ui.inflight) {
		h.ui.inflight <- struct{}{}
	}
	p := b.get("/ui/")
	if p.status != http.StatusServiceUnavailable || p.header.Get("Retry-After") != "1" {
		t.Fatalf("with every slot taken: %d %q", p.status, p.header.Get("Retry-After"))
	}
	<-h.ui.inflight
	if p := b.get("/ui/"); p.status != http.StatusOK {
		t.Fatalf("with a slot free: %d", p.status)
	}
}

// replicaStandIn stands in for package replica (not in this tree's daemon yet): an id and
// whether it leads.
type replicaStandIn struct {
	id      string
	leading bool
}

func (r replicaStandIn) ID() string    { return r.id }
func (r replicaStandIn) Leading() bool { return r.leading }

// TestHealthShowsTheReplica: a single node says so; a replica says its id and whether it leads;
// the backlog is shown to admins only.
func TestHealthShowsTheReplica(t *testing.T) {
	h := newHarness(t, false)
	b := h.browser()
	b.signIn(adminToken)
	leader := regexp.MustCompile(`<td id="health-leader">(.*?)</td>`)
	if m := leader.FindStringSubmatch(b.get("/ui/health").body); m == nil || m[1] != "a single node (this daemon), which leads" {
		t.Errorf("single node: %v", m)
	}
	if p := b.get("/ui/health"); !strings.Contains(p.body, `<td id="health-backlog">0 occurrences and retries due but not started</td>`) ||
		!strings.Contains(p.body, `id="health-store">answers</span>`) || !strings.Contains(p.body, `id="health-dispatcher">ready</span>`) ||
		!strings.Contains(p.body, `<small>(<span id="health-driver">SQLite file `+h.dbPath+`</span>, answered in `) {
		t.Errorf("admin's health page:\n%s", p.body)
	}
	h.ui.replica = replicaStandIn{id: "host-a-42", leading: false}
	if m := leader.FindStringSubmatch(b.get("/ui/health").body); m == nil || m[1] != "this replica (<code>host-a-42</code>) follows: another replica leads" {
		t.Errorf("follower: %v", m)
	}
	h.ui.replica = replicaStandIn{id: "host-b-7", leading: true}
	if m := leader.FindStringSubmatch(b.get("/ui/health").body); m == nil || !strings.HasPrefix(m[1], "this replica (<code>host-b-7</code>) leads") {
		t.Errorf("leader: %v", m)
	}
	tenant := h.browser()
	tenant.signIn(subAToken)
	if p := tenant.get("/ui/health"); strings.Contains(p.body, "health-backlog") || strings.Contains(p.body, "health-driver") || p.status != http.StatusOK {
		t.Errorf("a tenant's health page shows the backlog or the store's file (%d)", p.status)
	}
}

// TestOverviewCountsExecutionsByOutcome: three jobs run once each through the dashboard's Run
// now: one whose target answers 200 (completed), one whose target fails and whose error action
// succeeds (failed), one whose target fails without an error action (faulted). The overview
// counts one of each, and tenant sub-b's overview counts none of them.
func TestOverviewCountsExecutionsByOutcome(t *testing.T) {
	h := newHarness(t, false)
	ok := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) }))
	t.Cleanup(ok.Close)
	bad := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusInternalServerError) }))
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
	// The attempts run at once; their records are committed by the dispatcher's writer, which
	// waits on the (fake) clock: advance it until every execution is in the history.
	want := map[string]int{"good": 1, "rescued": 2, "broken": 1}
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
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: %d history entries, want %d", name, len(hs), n)
			}
			h.clock.Advance(100 * time.Millisecond)
			time.Sleep(10 * time.Millisecond)
		}
	}
	count := func(body, outcome string) string {
		m := regexp.MustCompile(`<dd data-outcome="` + outcome + `">(\d+)</dd>`).FindStringSubmatch(body)
		if m == nil {
			return "missing"
		}
		return m[1]
	}
	home := b.get("/ui/").body
	if got := count(home, "completed") + count(home, "failed") + count(home, "faulted"); got != "111" {
		t.Errorf("admin's executions by outcome (completed, failed, faulted): %s", got)
	}
	tenant := h.browser()
	tenant.signIn(subBToken)
	other := tenant.get("/ui/").body
	if got := count(other, "completed") + count(other, "failed") + count(other, "faulted"); got != "000" {
		t.Errorf("sub-b's executions by outcome: %s", got)
	}
	// A day later they are out of the window.
	h.clock.Advance(25 * time.Hour)
	b.signIn(adminToken)
	if got := count(b.get("/ui/").body, "completed"); got != "0" {
		t.Errorf("a day later: %s completed", got)
	}
}
