package main

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509/pkix"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/internal/testcert"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/testlog"
)

func TestParseServeDefaults(t *testing.T) {
	c, err := parseServe(nil, func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.listen != "127.0.0.1:8480" || c.data != "./data" || c.secretKeyFile != filepath.Join("data", "secret.key") ||
		c.logLevel != slog.LevelInfo || c.adminToken != "" || len(c.tokens) != 0 ||
		c.oauthAuthority != "https://login.microsoftonline.com" || c.misfire != 60*time.Second ||
		c.faultedAfter != 10 || c.workers != 256 || c.region != "local" || c.tlsCert != "" ||
		c.targetConcurrency != 0 || c.maxConnections != 1024 || c.maxInFlight != 256 || c.maxPerTenant != 0 || c.bodyTimeout != 10*time.Second {
		t.Fatalf("defaults %+v", c)
	}
}

func TestParseServeEnvironmentAndFlags(t *testing.T) {
	none := func(string) string { return "" }
	env := map[string]string{
		"SCHEDULERD_LISTEN":            "0.0.0.0:9000",
		"SCHEDULERD_DATA":              "/var/lib/scheduler",
		"SCHEDULERD_LOG_LEVEL":         "debug",
		"SCHEDULERD_ADMIN_TOKEN":       "env-admin-0123456789abcdef0123456789abcdef",
		"SCHEDULERD_TOKENS":            "sub1=tok1-0123456789abcdef0123456789abcdef, sub2=tok2-0123456789abcdef0123456789abcdef,",
		"SCHEDULERD_MISFIRE_THRESHOLD": "2m",
		"SCHEDULERD_FAULTED_AFTER":     "3",
		"SCHEDULERD_REGION":            "west",
		"SCHEDULERD_WORKERS":           "8",
	}
	getenv := func(k string) string { return env[k] }
	c, err := parseServe(nil, getenv, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.listen != "0.0.0.0:9000" || c.data != "/var/lib/scheduler" || c.secretKeyFile != "/var/lib/scheduler/secret.key" ||
		c.logLevel != slog.LevelDebug || c.adminToken != "env-admin-0123456789abcdef0123456789abcdef" || c.misfire != 2*time.Minute ||
		c.faultedAfter != 3 || c.region != "west" || c.workers != 8 ||
		len(c.tokens) != 2 || c.tokens["sub1"] != "tok1-0123456789abcdef0123456789abcdef" || c.tokens["sub2"] != "tok2-0123456789abcdef0123456789abcdef" {
		t.Fatalf("from the environment %+v", c)
	}
	// Flags win; --admin-token-file replaces SCHEDULERD_ADMIN_TOKEN, --tokens-file SCHEDULERD_TOKENS.
	dir := t.TempDir()
	adminFile, tokensFile := filepath.Join(dir, "admin"), filepath.Join(dir, "tokens")
	if err := os.WriteFile(adminFile, []byte("flag-admin-0123456789abcdef0123456789abcdef\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(tokensFile, []byte("# scoped tokens\nsub3=tok3-0123456789abcdef0123456789abcdef\n\n sub4 = tok4-0123456789abcdef0123456789abcdef \n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err = parseServe([]string{"--listen", "127.0.0.1:0", "--admin-token-file", adminFile, "--tokens-file", tokensFile,
		"--secret-key-file", "/keys/k", "--workers", "2", "--log-level", "warn",
		"--target-concurrency", "3", "--max-connections", "100", "--max-in-flight", "50", "--max-in-flight-per-tenant", "5",
		"--body-timeout", "2s"}, getenv, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if !c.telemetry.perJob || c.telemetry.metricsToken != "" {
		t.Fatalf("metrics defaults: %+v", c.telemetry)
	}
	m, err := parseServe([]string{"--metrics-per-job=false"}, func(k string) string {
		return map[string]string{"SCHEDULERD_METRICS_TOKEN": " scrape-token-0123456789abcdef0123456789abcdef "}[k]
	}, io.Discard)
	if err != nil || m.telemetry.perJob || m.telemetry.metricsToken != "scrape-token-0123456789abcdef0123456789abcdef" {
		t.Fatalf("metrics flags: %+v %v", m.telemetry, err)
	}
	if tr, err := parseServe([]string{"--trace-url", "https://tempo.example/trace/{traceId}"}, none, io.Discard); err != nil || tr.traceURL != "https://tempo.example/trace/{traceId}" {
		t.Fatalf("--trace-url: %q %v", tr.traceURL, err)
	}
	if c.targetConcurrency != 3 || c.maxConnections != 100 || c.maxInFlight != 50 || c.maxPerTenant != 5 || c.bodyTimeout != 2*time.Second {
		t.Fatalf("overload flags %+v", c)
	}
	if c.listen != "127.0.0.1:0" || c.adminToken != "flag-admin-0123456789abcdef0123456789abcdef" || c.secretKeyFile != "/keys/k" || c.workers != 2 ||
		c.logLevel != slog.LevelWarn || len(c.tokens) != 2 || c.tokens["sub3"] != "tok3-0123456789abcdef0123456789abcdef" || c.tokens["sub4"] != "tok4-0123456789abcdef0123456789abcdef" {
		t.Fatalf("with flags %+v", c)
	}
}

func TestParseServeErrors(t *testing.T) {
	none := func(string) string { return "" }
	for _, tc := range []struct {
		args []string
		env  map[string]string
		want string
	}{
		{[]string{"--workers", "0"}, nil, `--workers "0": want a positive integer`},
		{[]string{"--store", "mysql://db/x"}, nil, `--store: want a postgres:// or postgresql:// URL (or nothing: SQLite in --data)`},
		{nil, map[string]string{"SCHEDULERD_STORE": "/var/lib/scheduler.db"}, `--store: want a postgres:// or postgresql:// URL (or nothing: SQLite in --data)`},
		{[]string{"--leader-ttl", "100ms"}, nil, `--leader-ttl "100ms": want a duration of at least 300ms such as 3s`},
		{[]string{"--misfire-threshold", "soon"}, nil, `--misfire-threshold "soon": want a positive duration such as 60s`},
		{[]string{"--faulted-after", "x"}, nil, `--faulted-after "x": want a positive integer`},
		{[]string{"--log-level", "loud"}, nil, `--log-level "loud": want debug, info, warn or error`},
		{[]string{"--tls-cert", "c.pem"}, nil, "--tls-cert and --tls-key go together"},
		{[]string{"--admin-token", "on-the-command-line"}, nil, "--admin-token is not accepted: a token on the command line is visible to every local user (ps); use --admin-token-file or SCHEDULERD_ADMIN_TOKEN"},
		{[]string{"-admin-token=on-the-command-line"}, nil, "--admin-token is not accepted: a token on the command line is visible to every local user (ps); use --admin-token-file or SCHEDULERD_ADMIN_TOKEN"},
		{[]string{"--token", "sub=on-the-command-line"}, nil, "--token is not accepted: a token on the command line is visible to every local user (ps); use --tokens-file or SCHEDULERD_TOKENS"},
		{[]string{"--admin-token-file", "/nonexistent/admin"}, nil, "--admin-token-file: open /nonexistent/admin: no such file or directory"},
		{nil, map[string]string{"SCHEDULERD_TOKENS": "a=b,c"}, "SCHEDULERD_TOKENS: want SUBSCRIPTION=TOKEN"},
		{nil, map[string]string{"SCHEDULERD_WORKERS": "many"}, `--workers "many": want a positive integer`},
		{[]string{"extra"}, nil, `unexpected argument "extra"`},
		{[]string{"--storage-queue-endpoint", "/{account}/queues"}, nil, `--storage-queue-endpoint: "/{account}/queues" is not an absolute http or https URL`},
		{[]string{"--service-bus-auth", "kerberos"}, nil, `--service-bus-*: service bus auth "kerberos": want cbs or plain`},
		{nil, map[string]string{"SCHEDULERD_SERVICE_BUS_ENDPOINT": "https://{namespace}.servicebus.windows.net"}, `--service-bus-*: service bus endpoint: "https://{namespace}.servicebus.windows.net" is not an absolute amqp or amqps URL`},
		{[]string{"--service-bus-queue-address", "/amq/queue/q1"}, nil, `--service-bus-*: service bus queue address "/amq/queue/q1": it must contain {queue}`},
		{[]string{"--max-connections", "0"}, nil, `--max-connections "0": want a positive integer`},
		{[]string{"--target-concurrency", "-1"}, nil, `--target-concurrency "-1": want a positive integer, or 0 for the default`},
		{nil, map[string]string{"SCHEDULERD_MAX_IN_FLIGHT": "x"}, `--max-in-flight "x": want a positive integer`},
		{[]string{"--body-timeout", "0s"}, nil, `--body-timeout "0s": want a positive duration such as 10s`},
		{[]string{"--metrics-token", "on-the-command-line"}, nil, "--metrics-token is not accepted: a token on the command line is visible to every local user (ps); use --metrics-token-file or SCHEDULERD_METRICS_TOKEN"},
		{[]string{"--metrics-per-job", "maybe"}, nil, `--metrics-per-job "maybe": want true or false`},
		{nil, map[string]string{"SCHEDULERD_METRICS_PER_JOB": "sometimes"}, `--metrics-per-job "sometimes": want true or false`},
		{[]string{"--metrics-token-file", "/nonexistent/metrics"}, nil, "--metrics-token-file: open /nonexistent/metrics: no such file or directory"},
		{[]string{"--trace-url", "https://tempo.example/trace/"}, nil, `--trace-url: trace URL "https://tempo.example/trace/": want {traceId} where the trace id goes`},
		{nil, map[string]string{"SCHEDULERD_TRACE_URL": "javascript:alert({traceId})"}, `--trace-url: trace URL "javascript:alert({traceId})": want an absolute http or https URL`},
	} {
		getenv := none
		if tc.env != nil {
			getenv = func(k string) string { return tc.env[k] }
		}
		_, err := parseServe(tc.args, getenv, io.Discard)
		if err == nil || err.Error() != tc.want {
			t.Errorf("%v %v: error %v, want %q", tc.args, tc.env, err, tc.want)
		}
	}
}

// waitForFile waits (polling, bounded) for a file the daemon writes when it is up.
func waitForFile(t *testing.T, path string, log fmt.Stringer) string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if b, err := os.ReadFile(path); err == nil && len(b) > 0 {
			return strings.TrimSpace(string(b))
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("%s did not appear within 30s; log:\n%s", path, log.String())
	return ""
}

// TestServeInProcess starts the daemon in this process with nothing configured but a free port
// and a data directory, uses it with the token it generated, and stops it by cancelling its
// context (what SIGTERM does).
func TestServeInProcess(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var logs testlog.Buffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"serve", "--listen", "127.0.0.1:0", "--data", data}, nil, io.Discard, &logs)
	}()

	addr := waitForFile(t, filepath.Join(data, "listen-address"), &logs)
	tokenPath := filepath.Join(data, "admin-token")
	fi, err := os.Stat(tokenPath)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("admin-token mode %v, want 0600", fi.Mode().Perm())
	}
	if fi, err := os.Stat(filepath.Join(data, "secret.key")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("secret.key: %v %v", fi, err)
	}
	raw, err := os.ReadFile(tokenPath)
	if err != nil {
		t.Fatal(err)
	}
	token := strings.TrimSpace(string(raw))
	if len(token) < 32 {
		t.Fatalf("generated token %q is short", token)
	}

	base := "http://" + addr
	req, _ := http.NewRequestWithContext(ctx, http.MethodPut,
		base+"/subscriptions/s/resourceGroups/rg/providers/Microsoft.Scheduler/jobCollections/c?api-version=2016-03-01",
		strings.NewReader(`{"location":"local","properties":{"sku":{"name":"Standard"}}}`))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("PUT collection with the generated token: %d", resp.StatusCode)
	}
	resp, err = http.Get(base + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("readyz %d", resp.StatusCode)
	}

	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("exit code %d; log:\n%s", code, logs.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("serve did not stop within 10s; log:\n%s", logs.String())
	}

	// The log is JSON lines; it names the token's file and never the token.
	text := logs.String()
	if strings.Contains(text, token) {
		t.Fatal("the log contains the admin token")
	}
	var sawToken, sawListen bool
	for _, line := range strings.Split(strings.TrimSpace(text), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("log line %q is not JSON: %v", line, err)
		}
		if m["path"] == tokenPath && strings.HasPrefix(fmt.Sprint(m["msg"]), "generated an admin token") {
			sawToken = true
		}
		if m["msg"] == "schedulerd listening" && m["address"] == addr {
			sawListen = true
		}
	}
	if !sawToken || !sawListen {
		t.Fatalf("log lacks the token file or the address (%v %v):\n%s", sawToken, sawListen, text)
	}

	// A second start reuses the token file.
	ctx2, cancel2 := context.WithCancel(t.Context())
	var logs2 testlog.Buffer
	_ = os.Remove(filepath.Join(data, "listen-address"))
	go func() {
		done <- run(ctx2, []string{"serve", "--listen", "127.0.0.1:0", "--data", data}, nil, io.Discard, &logs2)
	}()
	waitForFile(t, filepath.Join(data, "listen-address"), &logs2)
	cancel2()
	if code := <-done; code != 0 {
		t.Fatalf("second run exit %d", code)
	}
	if raw2, _ := os.ReadFile(tokenPath); string(raw2) != string(raw) {
		t.Fatal("the admin token changed on restart")
	}
	if !strings.Contains(logs2.String(), `"msg":"using the admin token in the data directory"`) {
		t.Fatalf("second log:\n%s", logs2.String())
	}
}

// TestServeTLS serves HTTPS with --tls-cert/--tls-key; nextLink URLs are https too.
func TestServeTLS(t *testing.T) {
	dir := t.TempDir()
	cert := testcert.New(t, testcert.Options{Subject: pkix.Name{CommonName: "127.0.0.1"}, Server: true})
	certFile, keyFile := cert.WriteFiles(t, dir)
	pool := cert.Pool()
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}

	data := filepath.Join(dir, "data")
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var logs testlog.Buffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"serve", "--listen", "127.0.0.1:0", "--data", data, "--admin-token-file", tokenFileOf(t, "tls-admin-0123456789abcdef0123456789abcdef"),
			"--tls-cert", certFile, "--tls-key", keyFile}, nil, io.Discard, &logs)
	}()
	base := "https://" + waitForFile(t, filepath.Join(data, "listen-address"), &logs)
	do := func(method, path, body string) (int, []byte) {
		t.Helper()
		req, err := http.NewRequestWithContext(ctx, method, base+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer tls-admin-0123456789abcdef0123456789abcdef")
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, b
	}
	for _, name := range []string{"a", "b"} {
		if code, b := do(http.MethodPut, "/subscriptions/s/resourceGroups/rg/providers/Microsoft.Scheduler/jobCollections/"+name+"?api-version=2016-03-01",
			`{"properties":{"sku":{"name":"Free"}}}`); code != http.StatusCreated {
			t.Fatalf("PUT over TLS: %d %s", code, b)
		}
	}
	code, b := do(http.MethodGet, "/subscriptions/s/providers/Microsoft.Scheduler/jobCollections?api-version=2016-03-01&$top=1", "")
	var page struct{ NextLink string }
	if err := json.Unmarshal(b, &page); err != nil || code != http.StatusOK || !strings.HasPrefix(page.NextLink, base+"/subscriptions/s/") {
		t.Fatalf("list over TLS: %d %s (%v)", code, b, err)
	}
	cancel()
	if code := <-done; code != 0 {
		t.Fatalf("exit %d; log:\n%s", code, logs.String())
	}
	if !strings.Contains(logs.String(), `"url":"`+base+`"`) {
		t.Errorf("the log does not give the https URL:\n%s", logs.String())
	}
}

// TestServeRefusesBadConfiguration: a daemon that cannot start says why and exits 1 at once.
func TestServeRefusesBadConfiguration(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing.pem")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--tls-cert", missing, "--tls-key", missing}, `"msg":"schedulerd stopped","error":"tls: open ` + missing},
		{[]string{"--listen", "127.0.0.1:99999"}, `"msg":"schedulerd stopped","error":"listen: `},
		{[]string{"--tokens-file", tokenFileOf(t, "sub=same-0123456789abcdef0123456789abcdef"), "--admin-token-file", tokenFileOf(t, "same-0123456789abcdef0123456789abcdef")}, `equals the admin token`},
	} {
		var logs testlog.Buffer
		args := append([]string{"serve", "--data", filepath.Join(dir, "data"), "--listen", "127.0.0.1:0"}, tc.args...)
		if code := run(t.Context(), args, nil, io.Discard, &logs); code != 1 {
			t.Errorf("%v: exit %d, want 1", tc.args, code)
		}
		if !strings.Contains(logs.String(), tc.want) {
			t.Errorf("%v: log lacks %q:\n%s", tc.args, tc.want, logs.String())
		}
	}
}

// TestLimitListenerCapsOpenConnections: with 8 connections open (kept alive), a 9th is accepted
// and answered only once one of them closes: never more than 8 open at once.
func TestLimitListenerCapsOpenConnections(t *testing.T) {
	tcp, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln := newLimitListener(tcp, 8)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) }),
		ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	get := func(c net.Conn) (int, error) {
		if _, err := io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
			return 0, err
		}
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			return 0, err
		}
		_ = resp.Body.Close()
		return resp.StatusCode, nil
	}
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			_ = c.Close()
		}
	}()
	for range 8 {
		c, err := net.Dial("tcp", tcp.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
		if st, err := get(c); err != nil || st != http.StatusNoContent {
			t.Fatalf("connection %d: %d %v", len(conns), st, err)
		}
	}
	ninth, err := net.Dial("tcp", tcp.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer ninth.Close()
	answered := make(chan int, 1)
	go func() {
		st, err := get(ninth)
		if err != nil {
			t.Error(err)
		}
		answered <- st
	}()
	_ = conns[0].Close()
	select {
	case st := <-answered:
		if st != http.StatusNoContent {
			t.Fatalf("the 9th connection: %d", st)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the 9th connection was not served after one closed")
	}
	if p := ln.peak.Load(); p != 8 {
		t.Fatalf("peak open connections %d, want 8", p)
	}
}

// tokenFileOf writes content into a new 0600 file and returns its path: tokens reach the daemon
// through files or the environment, never its command line.
func tokenFileOf(t *testing.T, content string) string {
	t.Helper()
	f, err := os.CreateTemp(t.TempDir(), "token-*")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(content + "\n"); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return f.Name()
}

func TestParseServeStore(t *testing.T) {
	env := map[string]string{"SCHEDULERD_STORE": "postgres://env@db/x", "SCHEDULERD_REPLICA_ID": "pod-1", "SCHEDULERD_LEADER_TTL": "5s"}
	c, err := parseServe(nil, func(k string) string { return env[k] }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.store != "postgres://env@db/x" || c.replicaID != "pod-1" || c.leaderTTL != 5*time.Second {
		t.Fatalf("from the environment: store %q, replica %q, ttl %s", c.store, c.replicaID, c.leaderTTL)
	}
	c, err = parseServe([]string{"--store", "postgresql://flag@db/y", "--replica-id", "r9", "--leader-ttl", "2s"}, func(k string) string { return env[k] }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.store != "postgresql://flag@db/y" || c.replicaID != "r9" || c.leaderTTL != 2*time.Second {
		t.Fatalf("flags over the environment: store %q, replica %q, ttl %s", c.store, c.replicaID, c.leaderTTL)
	}
	c, err = parseServe(nil, func(string) string { return "" }, io.Discard)
	if err != nil || c.store != "" || c.leaderTTL != 2*time.Second {
		t.Fatalf("defaults: store %q (want SQLite), ttl %s, err %v", c.store, c.leaderTTL, err)
	}
}
