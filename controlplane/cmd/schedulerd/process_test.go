package main

import (
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
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
	var logs syncBuffer
	cmd := exec.Command(bin, "serve")
	cmd.Env = append(os.Environ(),
		"SCHEDULERD_LISTEN=127.0.0.1:0",
		"SCHEDULERD_DATA="+data,
		"SCHEDULERD_ADMIN_TOKEN=process-admin",
		"SCHEDULERD_TOKENS=sub-a=token-a",
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
		{http.MethodPut, "sub-a", "token-a", body, 201},
		{http.MethodGet, "sub-a", "", "", 401},
		{http.MethodGet, "sub-a", "wrong", "", 401},
		{http.MethodPut, "sub-b", "token-a", body, 403},
		{http.MethodGet, "sub-b", "process-admin", "", 404},
		{http.MethodGet, "sub-a", "process-admin", "", 200},
	} {
		if got := status(tc.method, strings.Replace(coll, "%s", tc.sub, 1), tc.token, tc.body); got != tc.want {
			t.Errorf("%s %s with %q: %d, want %d", tc.method, tc.sub, tc.token, got, tc.want)
		}
	}
	if got := status(http.MethodGet, "/healthz", "", ""); got != 200 {
		t.Errorf("healthz %d", got)
	}
	// /metrics: the API's, the dispatcher's and the process's metrics, behind a token.
	if got := status(http.MethodGet, "/metrics", "", ""); got != 401 {
		t.Errorf("metrics without a token: %d", got)
	}
	req, err := http.NewRequest(http.MethodGet, base+"/metrics", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer token-a")
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
	if strings.Contains(logs.String(), "token-a") || strings.Contains(logs.String(), "process-admin") {
		t.Error("the log contains a token")
	}
}
