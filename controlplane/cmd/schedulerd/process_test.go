package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/internal/testlog"
)

// daemonBinary builds schedulerd for a process test.
func daemonBinary(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "schedulerd")
	if out, err := exec.Command("go", "build", "-o", path, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return path
}

// TestProcessConfiguredByEnvironmentStopsOnSIGTERM runs schedulerd as a child process configured
// only by environment variables, checks that a subscription token is scoped, then sends SIGTERM:
// the daemon stops accepting and exits 0 within 10 seconds.
func TestProcessConfiguredByEnvironmentStopsOnSIGTERM(t *testing.T) {
	bin := daemonBinary(t)
	data := filepath.Join(t.TempDir(), "data")
	var logs testlog.Buffer
	cmd := exec.Command(bin, "serve")
	cmd.Env = append(os.Environ(),
		"SCHEDULERD_LISTEN=127.0.0.1:0",
		"SCHEDULERD_DATA="+data,
		"SCHEDULERD_ADMIN_TOKEN=process-admin-0123456789abcdef0123456789abcdef",
		"SCHEDULERD_TOKENS=sub-a=token-a-0123456789abcdef0123456789abcdef",
		"SCHEDULERD_LOG_LEVEL=debug",
	)
	cmd.Stderr = &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	waited := make(chan struct{})
	go func() {
		exited <- cmd.Wait()
		close(waited)
	}()
	t.Cleanup(func() {
		select {
		case <-waited:
		default:
			_ = cmd.Process.Kill()
			<-waited
		}
	})
	addr := waitForFile(t, filepath.Join(data, "listen-address"), &logs)
	if _, err := os.Stat(filepath.Join(data, "admin-token")); !os.IsNotExist(err) {
		t.Errorf("an admin token file was written although one was configured: %v", err)
	}
	base := "http://" + addr
	status := func(method, path, token, body string) int {
		t.Helper()
		req, err := http.NewRequest(method, base+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		return resp.StatusCode
	}
	coll := "/subscriptions/%s/resourceGroups/rg/providers/Microsoft.Scheduler/jobCollections/c?api-version=2016-03-01"
	body := `{"location":"local","properties":{"sku":{"name":"Standard"}}}`
	for _, tc := range []struct {
		method, sub, token, body string
		want                     int
	}{
		{http.MethodPut, "sub-a", "token-a-0123456789abcdef0123456789abcdef", body, 201},
		{http.MethodGet, "sub-a", "", "", 401},
		{http.MethodGet, "sub-a", "wrong", "", 401},
		{http.MethodPut, "sub-b", "token-a-0123456789abcdef0123456789abcdef", body, 403},
		{http.MethodGet, "sub-b", "process-admin-0123456789abcdef0123456789abcdef", "", 404},
		{http.MethodGet, "sub-a", "process-admin-0123456789abcdef0123456789abcdef", "", 200},
	} {
		if got := status(tc.method, strings.Replace(coll, "%s", tc.sub, 1), tc.token, tc.body); got != tc.want {
			t.Errorf("%s %s with %q: %d, want %d", tc.method, tc.sub, tc.token, got, tc.want)
		}
	}
	if got := status(http.MethodGet, "/healthz", "", ""); got != 200 {
		t.Errorf("healthz %d", got)
	}
	// /metrics: the API's, the dispatcher's and the process's metrics, behind the admin (or
	// metrics) token: a subscription's token does not read the daemon-wide figures.
	if got := status(http.MethodGet, "/metrics", "", ""); got != 401 {
		t.Errorf("metrics without a token: %d", got)
	}
	if got := status(http.MethodGet, "/metrics", "token-a-0123456789abcdef0123456789abcdef", ""); got != 403 {
		t.Errorf("metrics with a subscription's token: %d, want 403", got)
	}
	req, err := http.NewRequest(http.MethodGet, base+"/metrics", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer process-admin-0123456789abcdef0123456789abcdef")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	metrics, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("metrics: %d %v", resp.StatusCode, err)
	}
	for _, want := range []string{
		`scheduler_http_requests_total{code="201",method="PUT",route="collection"} 1`,
		"# TYPE scheduler_due_backlog gauge",
		"# TYPE scheduler_execution_lateness_seconds histogram",
		"# TYPE scheduler_occurrence_skips_total counter",
		"# TYPE go_goroutines gauge",
		"# TYPE process_resident_memory_bytes gauge",
	} {
		if !strings.Contains(string(metrics), want) {
			t.Errorf("metrics lack %q", want)
		}
	}

	start := time.Now()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("exit after SIGTERM: %v; log:\n%s", err, logs.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("still running 10s after SIGTERM; log:\n%s", logs.String())
	}
	t.Logf("stopped %v after SIGTERM", time.Since(start).Round(time.Millisecond))
	if _, err := http.Get(base + "/healthz"); err == nil {
		t.Fatal("still accepting connections after exit")
	}
	for _, want := range []string{`"msg":"stopping: finishing in-flight requests and attempts"`, `"msg":"schedulerd stopped"`} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("log lacks %s:\n%s", want, logs.String())
		}
	}
	if strings.Contains(logs.String(), "token-a-0123456789abcdef0123456789abcdef") || strings.Contains(logs.String(), "process-admin-0123456789abcdef0123456789abcdef") {
		t.Error("the log contains a token")
	}
}

// child is a schedulerd child process.
type child struct {
	cmd    *exec.Cmd
	logs   *testlog.Buffer
	exited chan error
	base   string
}

// startChild starts schedulerd serve with args and waits for its listen address.
func startChild(t *testing.T, bin, data string, args ...string) *child {
	t.Helper()
	_ = os.Remove(filepath.Join(data, "listen-address"))
	c := &child{logs: &testlog.Buffer{}, exited: make(chan error, 1)}
	c.cmd = exec.Command(bin, append([]string{"serve", "--listen", "127.0.0.1:0", "--data", data}, args...)...)
	c.cmd.Stderr = c.logs
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waited := make(chan struct{})
	go func() {
		c.exited <- c.cmd.Wait()
		close(waited)
	}()
	t.Cleanup(func() {
		select {
		case <-waited:
		default:
			_ = c.cmd.Process.Kill()
			<-waited
		}
	})
	c.base = "http://" + waitForFile(t, filepath.Join(data, "listen-address"), c.logs)
	return c
}

// call sends a request with the admin token and returns the status and body.
func (c *child) call(t *testing.T, method, path, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, c.base+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer graceful-admin-0123456789abcdef0123456789abcdef")
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// TestProcessSIGTERMFinishesInFlightAttempt: SIGTERM while an attempt is in flight lets it finish
// and be recorded before the process exits (within 10 s); the next start shows it in history.
func TestProcessSIGTERMFinishesInFlightAttempt(t *testing.T) {
	bin := daemonBinary(t)
	data := filepath.Join(t.TempDir(), "data")
	hit, release := make(chan struct{}, 1), make(chan struct{})
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hit <- struct{}{}
		<-release
		w.WriteHeader(http.StatusAccepted)
	}))
	defer receiver.Close()
	defer func() {
		select {
		case <-release:
		default:
			close(release)
		}
	}()

	c := startChild(t, bin, data, "--admin-token-file", tokenFileOf(t, "graceful-admin-0123456789abcdef0123456789abcdef"))
	const coll = "/subscriptions/s/resourceGroups/rg/providers/Microsoft.Scheduler/jobCollections/c"
	const job = coll + "/jobs/slow"
	if code, body := c.call(t, http.MethodPut, coll+"?api-version=2016-03-01", `{"properties":{"sku":{"name":"Standard"}}}`); code != 201 {
		t.Fatalf("collection: %d %s", code, body)
	}
	if code, body := c.call(t, http.MethodPut, job+"?api-version=2016-03-01",
		`{"properties":{"state":"Disabled","action":{"type":"Http","request":{"uri":"`+receiver.URL+`","method":"POST"},"retryPolicy":{"retryType":"None"}}}}`); code != 201 {
		t.Fatalf("job: %d %s", code, body)
	}
	if code, body := c.call(t, http.MethodPost, job+"/run?api-version=2016-03-01", ""); code != 200 {
		t.Fatalf("run: %d %s", code, body)
	}
	select {
	case <-hit:
	case <-time.After(10 * time.Second):
		t.Fatalf("the attempt did not start; log:\n%s", c.logs.String())
	}
	start := time.Now()
	if err := c.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	// Stop accepting: the listener closes while the attempt is still running.
	deadline := time.Now().Add(5 * time.Second)
	for {
		resp, err := http.Get(c.base + "/healthz")
		if err != nil {
			break
		}
		_ = resp.Body.Close()
		if time.Now().After(deadline) {
			t.Fatal("still accepting 5s after SIGTERM")
		}
	}
	close(release)
	select {
	case err := <-c.exited:
		if err != nil {
			t.Fatalf("exit: %v; log:\n%s", err, c.logs.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("still running 10s after SIGTERM; log:\n%s", c.logs.String())
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("exited %v after SIGTERM", d)
	}

	c = startChild(t, bin, data, "--admin-token-file", tokenFileOf(t, "graceful-admin-0123456789abcdef0123456789abcdef"))
	code, body := c.call(t, http.MethodGet, job+"/history?api-version=2016-03-01", "")
	if code != 200 || !strings.Contains(body, `"status":"Completed"`) || strings.Count(body, `"actionName":"MainAction"`) != 1 {
		t.Fatalf("history after restart: %d %s", code, body)
	}
}
