package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/schedulerhq/terraform-provider-scheduler/internal/testlog"
)

// The alerting rules and the Grafana dashboard shipped in the repository.
const (
	alertsFile  = "../../../deploy/prometheus/alerts.yml"
	alertsTest  = "../../../deploy/prometheus/alerts_test.yml"
	grafanaFile = "../../../deploy/grafana/schedulerd.json"
)

// scrape reads /metrics with token; it fails the test unless the status is 200.
func (d *daemon) scrape(token string) string {
	d.t.Helper()
	req, err := http.NewRequest(http.MethodGet, d.base+"/metrics", nil)
	if err != nil {
		d.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		d.t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		d.t.Fatalf("GET /metrics: %d %s", resp.StatusCode, b)
	}
	return string(b)
}

// failingTarget answers /ok with 200 and anything else with 500.
func failingTarget(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/ok" {
			w.WriteHeader(http.StatusOK)
			return
		}
		http.Error(w, "the target is down", http.StatusInternalServerError)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// outcomeJobs creates three one-shot jobs against target, all due at the same second after
// their creation: fine (succeeds), paged (fails, its error action succeeds) and broken (fails,
// no error action), and waits for their history.
func outcomeJobs(d *daemon, target string) {
	d.t.Helper()
	noRetry := `"retryPolicy":{"retryType":"None"}`
	start := time.Now().Add(1500 * time.Millisecond).UTC().Format(time.RFC3339)
	put := func(name, action string) {
		d.call(http.MethodPut, jobsPath+name, `{"properties":{"startTime":"`+start+`","action":`+action+`}}`, http.StatusCreated)
	}
	put("fine", `{"type":"Http","request":{"uri":"`+target+`/ok","method":"GET"},`+noRetry+`}`)
	put("paged", `{"type":"Http","request":{"uri":"`+target+`/hook","method":"POST","body":"x"},`+noRetry+
		`,"errorAction":{"type":"Http","request":{"uri":"`+target+`/ok","method":"GET"},`+noRetry+`}}`)
	put("broken", `{"type":"Http","request":{"uri":"`+target+`/hook","method":"GET"},`+noRetry+`}`)
	d.history("fine", 1)
	d.history("paged", 2)
	d.history("broken", 1)
}

// TestMetricsNameTheJob: on a running daemon with a failing target, /metrics (read with the
// metrics token) counts each job's executions by outcome with its subscription, collection and
// job, gives each job's last success (a job that never succeeded: its creation time), and
// counts jobs by state; a subscription's token cannot read it. With --metrics-per-job=false
// there is no per-job series.
func TestMetricsNameTheJob(t *testing.T) {
	target := failingTarget(t)
	tokenFile := filepath.Join(t.TempDir(), "metrics-token")
	if err := os.WriteFile(tokenFile, []byte("scrape-me-0123456789abcdef0123456789abcdef\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	before := time.Now()
	d := startDaemon(t, "--metrics-token-file", tokenFile)
	outcomeJobs(d, target.URL)
	jobs := regexp.MustCompile(`(?m)^scheduler_jobs\{state="(\w+)"\} (\d+)$`)
	jobTotal := func(text string) int {
		total := 0
		for _, m := range jobs.FindAllStringSubmatch(text, -1) {
			n, _ := strconv.Atoi(m[2])
			total += n
		}
		return total
	}
	lastSuccess := regexp.MustCompile(`(?m)^scheduler_job_last_success_timestamp_seconds\{collection="c",job="(\w+)",subscription="s"\} (\S+)$`)
	var (
		text string
		got  map[string]float64
	)
	for deadline := time.Now().Add(10 * time.Second); ; {
		text = d.scrape("scrape-me-0123456789abcdef0123456789abcdef")
		got = map[string]float64{}
		for _, m := range lastSuccess.FindAllStringSubmatch(text, -1) {
			v, err := strconv.ParseFloat(m[2], 64)
			if err != nil {
				t.Fatal(err)
			}
			got[m[1]] = v
		}
		if (len(got) == 3 && jobTotal(text) == 3) || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	for _, want := range []string{
		`scheduler_job_executions_total{collection="c",job="fine",outcome="completed",subscription="s"} 1`,
		`scheduler_job_executions_total{collection="c",job="paged",outcome="completed",subscription="s"} 0`,
		`scheduler_job_executions_total{collection="c",job="paged",outcome="failed",subscription="s"} 1`,
		`scheduler_job_executions_total{collection="c",job="broken",outcome="completed",subscription="s"} 0`,
		`scheduler_job_executions_total{collection="c",job="broken",outcome="faulted",subscription="s"} 1`,
		`scheduler_executions_total{outcome="completed"} 1`,
		`scheduler_executions_total{outcome="failed"} 1`,
		`scheduler_executions_total{outcome="faulted"} 1`,
		`scheduler_occurrences_coalesced_total 0`,
		`scheduler_jobs{state="Disabled"} 0`,
	} {
		if !strings.Contains(text, want+"\n") {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	// Failed and faulted series appear once non-zero.
	for _, absent := range []string{
		`scheduler_job_executions_total{collection="c",job="fine",outcome="failed",subscription="s"}`,
		`scheduler_job_executions_total{collection="c",job="fine",outcome="faulted",subscription="s"}`,
		`scheduler_job_executions_total{collection="c",job="paged",outcome="faulted",subscription="s"}`,
		`scheduler_job_executions_total{collection="c",job="broken",outcome="failed",subscription="s"}`,
	} {
		if strings.Contains(text, absent+" ") {
			t.Errorf("/metrics has the zero series %s", absent)
		}
	}
	// Every job ran once and is done: three jobs in final states, none Enabled.
	for _, m := range jobs.FindAllStringSubmatch(text, -1) {
		if m[1] == "Enabled" && m[2] != "0" {
			t.Errorf("scheduler_jobs{state=Enabled} %s, want 0 (every job ran its one occurrence)", m[2])
		}
	}
	if total := jobTotal(text); total != 3 {
		t.Errorf("scheduler_jobs sum to %d, want 3:\n%s", total, jobs.FindAllString(text, -1))
	}
	after := float64(time.Now().UnixNano()) / 1e9
	for _, job := range []string{"fine", "paged", "broken"} {
		v, ok := got[job]
		if !ok || v < float64(before.Unix()) || v > after {
			t.Errorf("last success of %s: %v (present %v), want a time of this test", job, v, ok)
		}
	}
	// fine succeeded after its creation; paged and broken never did: their creation time,
	// which is before fine's success.
	if !(got["paged"] < got["fine"] && got["broken"] < got["fine"]) {
		t.Errorf("last successes %v: want paged's and broken's (their creation) before fine's success", got)
	}
	d.scrape(d.token)

	off := startDaemon(t, "--metrics-per-job=false")
	outcomeJobs(off, target.URL)
	text = off.scrape(off.token)
	if strings.Contains(text, "scheduler_job_") {
		t.Errorf("--metrics-per-job=false still exports per-job series:\n%s", grep(text, "scheduler_job_"))
	}
	if !strings.Contains(text, `scheduler_executions_total{outcome="faulted"} 1`+"\n") {
		t.Errorf("--metrics-per-job=false: the daemon-wide counters are missing:\n%s", grep(text, "scheduler_executions_total"))
	}
}

// TestAlertsAndDashboardUseExistingMetrics: every metric the alerting rules and the Grafana
// dashboard query is on a running daemon's /metrics.
func TestAlertsAndDashboardUseExistingMetrics(t *testing.T) {
	d := startDaemon(t)
	outcomeJobs(d, failingTarget(t).URL)
	families := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^# TYPE (\S+) (\w+)$`).FindAllStringSubmatch(d.scrape(d.token), -1) {
		families[m[1]] = true
		if m[2] == "histogram" {
			for _, s := range []string{"_bucket", "_sum", "_count"} {
				families[m[1]+s] = true
			}
		}
	}
	check := func(where string, exprs []string) {
		t.Helper()
		if len(exprs) == 0 {
			t.Fatalf("%s: no query found", where)
		}
		for _, e := range exprs {
			names := metricNames(e)
			if len(names) == 0 {
				t.Errorf("%s: %q names no scheduler metric", where, e)
			}
			for _, n := range names {
				if !families[n] {
					t.Errorf("%s: %q uses %s, which a running daemon does not export", where, e, n)
				}
			}
		}
	}
	check(alertsFile, alertExprs(t))
	check(grafanaFile, grafanaExprs(t))
}

// TestAlertsPromtool checks the rules and runs their unit tests with promtool, when installed
// (Debian: apt-get install prometheus).
func TestAlertsPromtool(t *testing.T) {
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		t.Skip("promtool is not installed (apt-get install prometheus); TestAlertsAndDashboardUseExistingMetrics still parses the rules")
	}
	for _, args := range [][]string{{"check", "rules", alertsFile}, {"test", "rules", alertsTest}} {
		out, err := exec.Command(promtool, args...).CombinedOutput()
		if err != nil {
			t.Errorf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}

// alertExprs returns the expression of every rule of alerts.yml, refusing a rule without
// alert, expr or a summary.
func alertExprs(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(alertsFile)
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Groups []struct {
			Name  string `yaml:"name"`
			Rules []struct {
				Alert       string            `yaml:"alert"`
				Expr        string            `yaml:"expr"`
				For         string            `yaml:"for"`
				Labels      map[string]string `yaml:"labels"`
				Annotations map[string]string `yaml:"annotations"`
			} `yaml:"rules"`
		} `yaml:"groups"`
	}
	dec := yaml.NewDecoder(strings.NewReader(string(b)))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil {
		t.Fatalf("%s: %v", alertsFile, err)
	}
	var exprs, alerts []string
	for _, g := range f.Groups {
		for _, r := range g.Rules {
			if r.Alert == "" || strings.TrimSpace(r.Expr) == "" || r.Annotations["summary"] == "" || r.Labels["severity"] == "" {
				t.Errorf("%s: rule %q of %s lacks alert, expr, a severity or a summary", alertsFile, r.Alert, g.Name)
			}
			if r.For != "" {
				if _, err := time.ParseDuration(r.For); err != nil {
					t.Errorf("%s: rule %s: for %q: %v", alertsFile, r.Alert, r.For, err)
				}
			}
			alerts = append(alerts, r.Alert)
			exprs = append(exprs, r.Expr)
		}
	}
	sort.Strings(alerts)
	for _, want := range []string{"SchedulerBacklogGrowing", "SchedulerJobFaulted", "SchedulerJobNotSucceeded", "SchedulerLatenessHigh"} {
		if i := sort.SearchStrings(alerts, want); i == len(alerts) || alerts[i] != want {
			t.Errorf("%s has no rule %s (has %v)", alertsFile, want, alerts)
		}
	}
	return exprs
}

// grafanaExprs returns every query of the dashboard's panels and variables.
func grafanaExprs(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(grafanaFile)
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
		Templating struct {
			List []struct {
				Type       string `json:"type"`
				Definition string `json:"definition"`
			} `json:"list"`
		} `json:"templating"`
	}
	if err := json.Unmarshal(b, &dash); err != nil {
		t.Fatalf("%s: %v", grafanaFile, err)
	}
	var exprs []string
	for _, p := range dash.Panels {
		if len(p.Targets) == 0 {
			t.Errorf("%s: panel %q has no query", grafanaFile, p.Title)
		}
		for _, q := range p.Targets {
			exprs = append(exprs, q.Expr)
		}
	}
	for _, v := range dash.Templating.List {
		if v.Type == "query" {
			exprs = append(exprs, v.Definition)
		}
	}
	return exprs
}

// metricNames returns the scheduler_* metric names a query uses.
func metricNames(expr string) []string {
	return regexp.MustCompile(`\bscheduler_[a-z_]+\b`).FindAllString(expr, -1)
}

func grep(text, prefix string) string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, prefix) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// startDaemonIn runs `schedulerd serve` in-process on data (kept between runs); stop ends it and
// waits for it.
func startDaemonIn(t *testing.T, data string) (d *daemon, stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	logs := &testlog.Buffer{}
	done := make(chan int, 1)
	_ = os.Remove(filepath.Join(data, "listen-address"))
	go func() {
		done <- run(ctx, []string{"serve", "--listen", "127.0.0.1:0", "--data", data}, nil, io.Discard, logs)
	}()
	stopped := false
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			t.Errorf("the daemon did not stop; log:\n%s", logs.String())
		}
	}
	t.Cleanup(stop)
	addr := waitForFile(t, filepath.Join(data, "listen-address"), logs)
	token := waitForFile(t, filepath.Join(data, "admin-token"), logs)
	return &daemon{t: t, base: "http://" + addr, token: token, data: data, logs: logs}, stop
}

// TestLastSuccessSurvivesARestart: a job succeeds, the daemon restarts, the job then fails: its
// last success on /metrics is the success before the restart (read from the store's history),
// not its creation nor nothing.
func TestLastSuccessSurvivesARestart(t *testing.T) {
	var failing atomic.Bool
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if failing.Load() {
			http.Error(w, "down", http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(target.Close)
	data := filepath.Join(t.TempDir(), "data")
	d, stop := startDaemonIn(t, data)
	d.call(http.MethodPut, "/subscriptions/s/resourceGroups/rg/providers/Microsoft.Scheduler/jobCollections/c",
		`{"location":"local","properties":{"sku":{"name":"Standard"}}}`, http.StatusCreated)
	start := time.Now().Add(2 * time.Second).UTC().Format(time.RFC3339)
	d.call(http.MethodPut, jobsPath+"nightly", `{"properties":{"startTime":"`+start+`","recurrence":{"frequency":"Day","interval":1},
		"action":{"type":"Http","request":{"uri":"`+target.URL+`/","method":"GET"},"retryPolicy":{"retryType":"None"}}}}`, http.StatusCreated)
	created := time.Now()
	first := d.history("nightly", 1)[0]
	if first.Properties.Status != "Completed" {
		t.Fatalf("first run: %+v", first.Properties)
	}
	end, err := time.Parse(time.RFC3339, first.Properties.EndTime)
	if err != nil {
		t.Fatal(err)
	}
	stop()

	failing.Store(true)
	d, _ = startDaemonIn(t, data)
	// Run it again soon (a manual run would be refused by the collection's maxRecurrence).
	start = time.Now().Add(2 * time.Second).UTC().Format(time.RFC3339)
	d.call(http.MethodPut, jobsPath+"nightly", `{"properties":{"startTime":"`+start+`","recurrence":{"frequency":"Day","interval":1},
		"action":{"type":"Http","request":{"uri":"`+target.URL+`/","method":"GET"},"retryPolicy":{"retryType":"None"}}}}`, http.StatusOK)
	if h := d.history("nightly", 2); h[1].Properties.Status != "Failed" {
		t.Fatalf("second run: %+v", h[1].Properties)
	}
	re := regexp.MustCompile(`(?m)^scheduler_job_last_success_timestamp_seconds\{collection="c",job="nightly",subscription="s"\} (\S+)$`)
	var got float64
	for deadline := time.Now().Add(10 * time.Second); ; {
		if m := re.FindStringSubmatch(d.scrape(d.token)); m != nil {
			if got, err = strconv.ParseFloat(m[1], 64); err != nil {
				t.Fatal(err)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no last success for nightly on /metrics after its failure")
		}
		time.Sleep(50 * time.Millisecond)
	}
	// The API gives the success's end to the second; it is at least a second after the job's
	// creation (its startTime was).
	if int64(got) != end.Unix() || got < float64(created.UnixNano())/1e9+0.9 {
		t.Errorf("last success %f, want the first run's end %s (created at %s)", got, end, created)
	}
}
