package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/internal/testlog"
)

// runOnce runs `schedulerd serve` as a child process expected to refuse to start: it returns the
// exit code and the log (bounded at 20 s).
func runOnce(t *testing.T, bin string, env []string, args ...string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, append([]string{"serve", "--listen", "127.0.0.1:0"}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("still running after 20s:\n%s", out)
	}
	if err == nil {
		return 0, string(out)
	}
	ee, ok := err.(*exec.ExitError) //nolint:errorlint // exec returns it unwrapped
	if !ok {
		t.Fatal(err)
	}
	return ee.ExitCode(), string(out)
}

// unwritable makes path unwritable for this process: chmod for a user, chattr +i for root (whom
// modes do not stop); it skips the test where neither works and undoes it at cleanup.
func unwritable(t *testing.T, path string) {
	t.Helper()
	if os.Geteuid() != 0 {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		mode := os.FileMode(0o400)
		if fi.IsDir() {
			mode = 0o500
		}
		if err := os.Chmod(path, mode); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = os.Chmod(path, fi.Mode().Perm()) })
		return
	}
	if out, err := exec.Command("chattr", "+i", path).CombinedOutput(); err != nil {
		t.Skipf("running as root and chattr +i %s failed (%v: %s): nothing here makes a path read-only for root", path, err, out)
	}
	t.Cleanup(func() { _ = exec.Command("chattr", "-i", path).Run() })
}

// startStop starts the daemon on data with the admin token in the environment, waits until it
// listens, and stops it with SIGTERM.
func startStop(t *testing.T, bin, data string, env ...string) {
	t.Helper()
	_ = os.Remove(filepath.Join(data, "listen-address"))
	var logs testlog.Buffer
	cmd := exec.Command(bin, "serve", "--listen", "127.0.0.1:0", "--data", data)
	cmd.Env = append(append(os.Environ(), "SCHEDULERD_ADMIN_TOKEN=startup-admin-0123456789abcdef0123456789abcdef"), env...)
	cmd.Stderr = &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	waitForFile(t, filepath.Join(data, "listen-address"), &logs)
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("exit: %v\n%s", err, logs.String())
		}
	case <-time.After(15 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatalf("did not stop:\n%s", logs.String())
	}
}

// TestProcessStartRefusesWhatCannotWork: a read-only database, an unwritable data directory, a
// data "directory" that is a file, a missing secret key and a changed one each stop `schedulerd
// serve` at once with exit 1 and a message naming the path; no key is generated in their place.
func TestProcessStartRefusesWhatCannotWork(t *testing.T) {
	bin := daemonBinary(t)
	env := []string{"SCHEDULERD_ADMIN_TOKEN=startup-admin-0123456789abcdef0123456789abcdef"}
	fresh := func(t *testing.T) string {
		t.Helper()
		data := filepath.Join(t.TempDir(), "data")
		startStop(t, bin, data)
		return data
	}
	t.Run("read-only database", func(t *testing.T) {
		data := fresh(t)
		db := filepath.Join(data, "scheduler.db")
		unwritable(t, db)
		code, out := runOnce(t, bin, env, "--data", data)
		if code != 1 || !strings.Contains(out, "open "+db+" for writing") {
			t.Fatalf("exit %d, want 1 naming %s:\n%s", code, db, out)
		}
	})
	t.Run("unwritable data directory", func(t *testing.T) {
		data := fresh(t)
		if os.Geteuid() != 0 {
			// The daemon makes a directory it owns 0700 (and so writable again): as a user, the
			// data directory is one it cannot create, in a parent it cannot write.
			parent := filepath.Join(t.TempDir(), "ro")
			if err := os.Mkdir(parent, 0o700); err != nil {
				t.Fatal(err)
			}
			data = filepath.Join(parent, "data")
			unwritable(t, parent)
		} else {
			unwritable(t, data)
		}
		code, out := runOnce(t, bin, env, "--data", data)
		if code != 1 || !strings.Contains(out, "data directory "+data) {
			t.Fatalf("exit %d, want 1 naming %s:\n%s", code, data, out)
		}
	})
	t.Run("data directory is a file", func(t *testing.T) {
		data := filepath.Join(t.TempDir(), "data")
		if err := os.WriteFile(data, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		code, out := runOnce(t, bin, env, "--data", data)
		if code != 1 || !strings.Contains(out, "data directory "+data) {
			t.Fatalf("exit %d, want 1 naming %s:\n%s", code, data, out)
		}
	})
	t.Run("missing secret key", func(t *testing.T) {
		data := fresh(t)
		key := filepath.Join(data, "secret.key")
		if err := os.Remove(key); err != nil {
			t.Fatal(err)
		}
		code, out := runOnce(t, bin, env, "--data", data)
		if code != 1 || !strings.Contains(out, "secret key "+key+" is missing") {
			t.Fatalf("exit %d, want 1 naming %s:\n%s", code, key, out)
		}
		if _, err := os.Stat(key); !os.IsNotExist(err) {
			t.Fatalf("a new key was generated: %v", err)
		}
	})
	t.Run("changed secret key", func(t *testing.T) {
		data := fresh(t)
		other := filepath.Join(t.TempDir(), "other")
		startStop(t, bin, other) // another daemon's key
		key := filepath.Join(other, "secret.key")
		code, out := runOnce(t, bin, env, "--data", data, "--secret-key-file", key)
		if code != 1 || !strings.Contains(out, "secret key "+key+" is not the key") {
			t.Fatalf("exit %d, want 1 naming %s:\n%s", code, key, out)
		}
	})
}

// TestProcessDataIsPrivate: with umask 0 and an existing data directory of mode 0755, the daemon
// leaves the directory 0700 and the database, its WAL and -shm, the key and the admin token 0600.
func TestProcessDataIsPrivate(t *testing.T) {
	bin := daemonBinary(t)
	data := filepath.Join(t.TempDir(), "data")
	if err := os.Mkdir(data, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(data, 0o755); err != nil {
		t.Fatal(err)
	}
	old := syscall.Umask(0) // inherited by the child
	defer syscall.Umask(old)
	c := startChild(t, bin, data)
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPut,
		c.base+"/subscriptions/s/resourceGroups/rg/providers/Microsoft.Scheduler/jobCollections/c?api-version=2016-03-01",
		strings.NewReader(`{"properties":{"sku":{"name":"Standard"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+tokenFile(t, data))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("PUT: %d", resp.StatusCode)
	}
	want := map[string]os.FileMode{
		"":                 0o700,
		"scheduler.db":     0o600,
		"scheduler.db-wal": 0o600,
		"scheduler.db-shm": 0o600,
		"secret.key":       0o600,
		"admin-token":      0o600,
	}
	for name, mode := range want {
		fi, err := os.Stat(filepath.Join(data, name))
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if fi.Mode().Perm() != mode {
			t.Errorf("%q: mode %v, want %v", name, fi.Mode().Perm(), mode)
		}
	}
}

func tokenFile(t *testing.T, data string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(data, "admin-token"))
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

// TestProcessTokensAreNotOnTheCommandLine: a daemon given its tokens through --admin-token-file
// and --tokens-file answers to them while its command line (what ps shows every local user, read
// from /proc) holds neither; and the repository's scripts and docs never put a token on a
// schedulerd command line (--admin-token VALUE, --token SUB=VALUE).
func TestProcessTokensAreNotOnTheCommandLine(t *testing.T) {
	bin := daemonBinary(t)
	data := filepath.Join(t.TempDir(), "data")
	c := startChild(t, bin, data, "--admin-token-file", tokenFileOf(t, "file-admin-token-0123456789abcdef0123456789abcdef"),
		"--tokens-file", tokenFileOf(t, "sub-a=file-sub-token-0123456789abcdef0123456789abcdef"))
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", c.cmd.Process.Pid))
	if err != nil {
		t.Skipf("no /proc here: %v", err)
	}
	if strings.Contains(string(cmdline), "file-admin-token-0123456789abcdef0123456789abcdef") || strings.Contains(string(cmdline), "file-sub-token-0123456789abcdef0123456789abcdef") {
		t.Fatalf("the command line holds a token: %q", cmdline)
	}
	for tok, want := range map[string]int{"file-admin-token-0123456789abcdef0123456789abcdef": 404, "file-sub-token-0123456789abcdef0123456789abcdef": 404, "wrong": 401} {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet,
			c.base+"/subscriptions/sub-a/resourceGroups/rg/providers/Microsoft.Scheduler/jobCollections/c?api-version=2016-03-01", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+tok)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("token %s: %d, want %d", tok, resp.StatusCode, want)
		}
	}

	root := filepath.Join("..", "..", "..")
	onCommandLine := regexp.MustCompile(`(?m)schedulerd[^\n]*\s--?(admin-token|token)[\s=]`)
	var files []string
	for _, pattern := range []string{"tools/*.sh", "*.md", "docs/*.md", "docs/*/*.md", "deploy/Dockerfile", "deploy/*.service", "controlplane/cmd/*/*.md", "examples/*/*.sh", "GNUmakefile", ".ci/*"} {
		m, err := filepath.Glob(filepath.Join(root, pattern))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	if len(files) < 3 {
		t.Fatalf("found only %v", files)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if m := onCommandLine.Find(b); m != nil {
			t.Errorf("%s puts a token on a schedulerd command line: %q", f, m)
		}
	}
}
