package main

import (
	"context"
	"crypto/x509/pkix"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/internal/testcert"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/testlog"
)

// envOf is a getenv reading only m.
func envOf(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

// healthOf runs `schedulerd health args...` with the environment env.
func healthOf(t *testing.T, env map[string]string, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr strings.Builder
	code := runHealth(t.Context(), args, envOf(env), &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

func TestHealthURL(t *testing.T) {
	data := t.TempDir()
	if err := os.WriteFile(filepath.Join(data, "listen-address"), []byte("127.0.0.1:41234\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		env  map[string]string
		tls  bool
		want string
	}{
		{map[string]string{}, false, "http://127.0.0.1:8480/readyz"},
		{map[string]string{"SCHEDULERD_LISTEN": "0.0.0.0:8480"}, false, "http://127.0.0.1:8480/readyz"},
		{map[string]string{"SCHEDULERD_LISTEN": ":9000"}, true, "https://127.0.0.1:9000/readyz"},
		{map[string]string{"SCHEDULERD_LISTEN": "[::]:9000"}, false, "http://[::1]:9000/readyz"},
		{map[string]string{"SCHEDULERD_LISTEN": "10.1.2.3:9000"}, false, "http://10.1.2.3:9000/readyz"},
		{map[string]string{"SCHEDULERD_LISTEN": "sched.example:443"}, true, "https://sched.example:443/readyz"},
		{map[string]string{"SCHEDULERD_LISTEN": "127.0.0.1:0", "SCHEDULERD_DATA": data}, false, "http://127.0.0.1:41234/readyz"},
	} {
		got, err := healthURL(envOf(c.env), c.tls)
		if err != nil || got != c.want {
			t.Errorf("healthURL(%v, tls %v) = %q, %v; want %q", c.env, c.tls, got, err, c.want)
		}
	}
	for _, c := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"SCHEDULERD_LISTEN": "nonsense"}, `SCHEDULERD_LISTEN "nonsense": address nonsense: missing port in address`},
		{map[string]string{"SCHEDULERD_LISTEN": ":0", "SCHEDULERD_DATA": filepath.Join(data, "missing")}, `SCHEDULERD_LISTEN ":0" has port 0 and the daemon's address is unknown: open ` +
			filepath.Join(data, "missing", "listen-address") + `: no such file or directory`},
	} {
		if got, err := healthURL(envOf(c.env), false); err == nil || err.Error() != c.want {
			t.Errorf("healthURL(%v) = %q, %v; want the error %q", c.env, got, err, c.want)
		}
	}
}

// TestHealthAgainstDaemon asks a real daemon (serve, in-process) as the image's HEALTHCHECK does:
// from the environment alone, then by --url; a port nobody listens on is unhealthy.
func TestHealthAgainstDaemon(t *testing.T) {
	d := startDaemon(t)
	env := map[string]string{"SCHEDULERD_LISTEN": "127.0.0.1:0", "SCHEDULERD_DATA": d.data}
	code, out, errOut := healthOf(t, env)
	if code != 0 || out != `ready: {"dispatcher":"ok","store":"ok"}`+"\n" || errOut != "" {
		t.Fatalf("health = %d, %q, %q; want 0 and ready", code, out, errOut)
	}
	code, out, errOut = healthOf(t, nil, "--url", d.base+"/readyz")
	if code != 0 || out != `ready: {"dispatcher":"ok","store":"ok"}`+"\n" || errOut != "" {
		t.Fatalf("health --url = %d, %q, %q; want 0 and ready", code, out, errOut)
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	if err := ln.Close(); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = healthOf(t, map[string]string{"SCHEDULERD_LISTEN": closed})
	if code != 1 || out != "" || !strings.HasPrefix(errOut, "schedulerd health: http://"+closed+"/readyz: get: ") ||
		!strings.Contains(errOut, "connection refused") {
		t.Fatalf("health of a closed port = %d, %q, %q; want 1 and connection refused", code, out, errOut)
	}
	code, _, errOut = healthOf(t, nil, "--timeout", "1s", "extra")
	if code != 2 || errOut != "schedulerd health: unexpected argument \"extra\"\n" {
		t.Fatalf("health extra = %d, %q; want 2", code, errOut)
	}
}

// TestHealthNotReady: a 503 from /readyz is unhealthy and the answer is shown. The server is a
// stand-in (httptest), the only way to make a real daemon answer 503 on demand from this package.
func TestHealthNotReady(t *testing.T) {
	standIn := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/readyz" {
			http.NotFound(w, r)
			return
		}
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = io.WriteString(w, `{"dispatcher":"not ready","store":"ok"}`)
	}))
	defer standIn.Close()
	code, out, errOut := healthOf(t, map[string]string{"SCHEDULERD_LISTEN": strings.TrimPrefix(standIn.URL, "http://")})
	want := "schedulerd health: " + standIn.URL + `/readyz: not ready: 503 {"dispatcher":"not ready","store":"ok"}` + "\n"
	if code != 1 || out != "" || errOut != want {
		t.Fatalf("health = %d, %q, %q; want 1, %q", code, out, errOut, want)
	}
}

// TestHealthTLSPinsTheCertificate asks a real HTTPS daemon: the daemon's own certificate file
// (SCHEDULERD_TLS_CERT, as the image sets it) is accepted although its name is not the loopback
// address asked; another certificate is refused.
func TestHealthTLSPinsTheCertificate(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile := selfSignedFiles(t, dir, "daemon")
	otherCert, _ := selfSignedFiles(t, dir, "other")
	data := filepath.Join(dir, "data")
	ctx, cancel := context.WithCancel(t.Context())
	var logs testlog.Buffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"serve", "--listen", "127.0.0.1:0", "--data", data, "--admin-token-file", tokenFileOf(t, "health-admin-0123456789abcdef0123456789abcdef"),
			"--tls-cert", certFile, "--tls-key", keyFile}, nil, io.Discard, &logs)
	}()
	defer func() {
		cancel()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			t.Errorf("the daemon did not stop; log:\n%s", logs.String())
		}
	}()
	waitForFile(t, filepath.Join(data, "listen-address"), &logs)
	env := map[string]string{"SCHEDULERD_LISTEN": "127.0.0.1:0", "SCHEDULERD_DATA": data, "SCHEDULERD_TLS_CERT": certFile}
	code, out, errOut := healthOf(t, env)
	if code != 0 || out != `ready: {"dispatcher":"ok","store":"ok"}`+"\n" {
		t.Fatalf("health over TLS = %d, %q, %q; want 0 and ready", code, out, errOut)
	}
	code, out, errOut = healthOf(t, env, "--tls-cert", otherCert)
	if code != 1 || out != "" || !strings.Contains(errOut, "the server's certificate is not the one in "+otherCert) {
		t.Fatalf("health with another certificate = %d, %q, %q; want 1, refused", code, out, errOut)
	}
}

// selfSignedFiles writes a self-signed certificate for name.example only (not for 127.0.0.1, so
// that only pinning accepts it on loopback) and its key; it returns their paths.
func selfSignedFiles(t *testing.T, dir, name string) (string, string) {
	t.Helper()
	certFile, keyFile := filepath.Join(dir, name+".pem"), filepath.Join(dir, name+"-key.pem")
	testcert.New(t, testcert.Options{Subject: pkix.Name{CommonName: name + ".example"}, Server: true, Hosts: []string{name + ".example"}}).
		Write(t, certFile, keyFile)
	return certFile, keyFile
}
