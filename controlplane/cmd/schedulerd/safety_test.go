package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/internal/testlog"
)

// TestParseServeRefusesWeakTokens: a token shorter than 32 characters, from the environment or
// a file, and a token file a group or other users can read, are refused with a message naming
// where they came from and never the token.
func TestParseServeRefusesWeakTokens(t *testing.T) {
	long := strings.Repeat("x", 32)
	open := tokenFileOf(t, long)
	if err := os.Chmod(open, 0o644); err != nil {
		t.Fatal(err)
	}
	groupTokens := tokenFileOf(t, "sub="+long)
	if err := os.Chmod(groupTokens, 0o640); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		env  map[string]string
		want string
	}{
		{nil, map[string]string{"SCHEDULERD_ADMIN_TOKEN": "short-admin"},
			"admin token (--admin-token-file or SCHEDULERD_ADMIN_TOKEN): the token has 11 characters, fewer than 32: use a long random one (such as `openssl rand -base64 32`)"},
		{nil, map[string]string{"SCHEDULERD_ADMIN_TOKEN": long[:31]}, "the token has 31 characters, fewer than 32"},
		{nil, map[string]string{"SCHEDULERD_TOKENS": "sub-a=short-sub"},
			"token of subscription sub-a (--tokens-file or SCHEDULERD_TOKENS): the token has 9 characters, fewer than 32"},
		{[]string{"--admin-token-file", tokenFileOf(t, "short-in-a-file")}, nil, "the token has 15 characters, fewer than 32"},
		{[]string{"--admin-token-file", open}, nil,
			"--admin-token-file " + open + " is readable or writable by group or others (mode 0644): a token file must be private to the daemon's user (chmod 600 " + open + ")"},
		{[]string{"--tokens-file", groupTokens}, nil, "--tokens-file " + groupTokens + " is readable or writable by group or others (mode 0640)"},
		{nil, map[string]string{"SCHEDULERD_METRICS_TOKEN": "short-metrics"}, "metrics token (--metrics-token-file or SCHEDULERD_METRICS_TOKEN): the token has 13 characters, fewer than 32"},
		{[]string{"--metrics-token-file", open}, nil, "--metrics-token-file " + open + " is readable or writable by group or others (mode 0644)"},
	} {
		_, err := parseServe(tc.args, func(k string) string { return tc.env[k] }, io.Discard)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v %v: error %v, want one containing %q", tc.args, tc.env, err, tc.want)
			continue
		}
		if strings.Contains(err.Error(), "short-") {
			t.Errorf("the error repeats the token: %v", err)
		}
	}
	// 32 characters from a private file are accepted.
	c, err := parseServe([]string{"--admin-token-file", tokenFileOf(t, long)}, func(string) string { return "" }, io.Discard)
	if err != nil || c.adminToken != long {
		t.Fatalf("a 32-character token: %v", err)
	}
}

// serveLogs runs the daemon in-process with args until its "listening" line is logged, and
// returns what it logged up to then (the daemon stops with the test).
func serveLogs(t *testing.T, data string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	logs := &testlog.Buffer{}
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, append([]string{"serve", "--data", data}, args...), nil, io.Discard, logs)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(logs.String(), `"msg":"schedulerd listening"`) {
		select {
		case code := <-done:
			t.Fatalf("the daemon exited %d:\n%s", code, logs.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("the daemon did not listen within 30s:\n%s", logs.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	return logs.String()
}

// TestServeWarnsOfPlainHTTPOffLoopback: plain HTTP on an address other hosts reach is served
// with a warning at start; on loopback, without.
func TestServeWarnsOfPlainHTTPOffLoopback(t *testing.T) {
	const warning = `"level":"WARN","msg":"serving plain HTTP on an address other hosts can reach: bearer tokens and job secrets cross the network in clear; ` +
		`serve TLS (--tls-cert, --tls-key) or listen on loopback behind a TLS proxy","address":"[::]:`
	logs := serveLogs(t, filepath.Join(t.TempDir(), "data"), "--listen", "0.0.0.0:0")
	if !strings.Contains(logs, warning) {
		t.Errorf("on 0.0.0.0: no warning in\n%s", logs)
	}
	logs = serveLogs(t, filepath.Join(t.TempDir(), "data"), "--listen", "127.0.0.1:0")
	if strings.Contains(logs, "serving plain HTTP") {
		t.Errorf("on loopback: warned\n%s", logs)
	}
}

// TestSecondDaemonOnADataDirectoryIsRefused: a second daemon on a data directory in use exits 1
// naming the first's pid, without touching its listen-address.
func TestSecondDaemonOnADataDirectoryIsRefused(t *testing.T) {
	data := filepath.Join(t.TempDir(), "data")
	serveLogs(t, data, "--listen", "127.0.0.1:0")
	addr, err := os.ReadFile(filepath.Join(data, "listen-address"))
	if err != nil {
		t.Fatal(err)
	}
	var logs testlog.Buffer
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second) // bounds a second daemon that was not refused
	defer cancel()
	if code := run(ctx, []string{"serve", "--data", data, "--listen", "127.0.0.1:0"}, nil, io.Discard, &logs); code != 1 {
		t.Errorf("second daemon: exit %d, want 1", code)
	}
	want := "the data directory is in use: data directory " + data + " is used by another schedulerd (pid " + strconv.Itoa(os.Getpid()) +
		", lock " + filepath.Join(data, "schedulerd.lock") + "); stop it first, or give this one its own --data"
	if !strings.Contains(logs.String(), want) {
		t.Errorf("second daemon's log lacks %q:\n%s", want, logs.String())
	}
	if again, _ := os.ReadFile(filepath.Join(data, "listen-address")); !bytes.Equal(again, addr) {
		t.Errorf("listen-address changed from %q to %q", addr, again)
	}
}

// TestVersionAndBuildInfo: `schedulerd version` and `--version` print the build; /metrics
// carries it as scheduler_build_info.
func TestVersionAndBuildInfo(t *testing.T) {
	for _, arg := range []string{"version", "--version"} {
		var out bytes.Buffer
		if code := run(t.Context(), []string{arg}, nil, &out, io.Discard); code != 0 {
			t.Fatalf("%s: exit %d", arg, code)
		}
		if !strings.HasPrefix(out.String(), "schedulerd ") || !strings.HasSuffix(out.String(), ", "+runtime.Version()+"\n") ||
			!strings.Contains(out.String(), ", revision ") {
			t.Errorf("%s: %q", arg, out.String())
		}
	}
	d := startDaemon(t)
	req, err := http.NewRequest(http.MethodGet, d.base+"/metrics", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+d.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, _ := io.ReadAll(resp.Body)
	b := readBuildInfo()
	want := `scheduler_build_info{goversion="` + runtime.Version() + `",modified="` + strconv.FormatBool(b.Modified) +
		`",revision="` + b.Revision + `",version="` + b.Version + `"} 1`
	if !strings.Contains(string(body), want) {
		t.Errorf("/metrics lacks %s", want)
	}
}
