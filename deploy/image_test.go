// Package deploy holds the test of the container image built from deploy/Dockerfile (`make
// image-test`); the systemd unit beside it is checked by tools/unit-check.sh.
package deploy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/internal/testlog"
)

// imageConfig is the part of `podman image inspect` the test reads.
type imageConfig struct {
	Config struct {
		User       string
		Env        []string
		Entrypoint []string
		Cmd        []string
		Volumes    map[string]struct{}
		StopSignal string
	}
	HealthCheck struct {
		Test []string
	}
}

// fileState is what must not change outside /data while the daemon runs.
type fileState struct {
	mode  fs.FileMode
	size  int64
	mtime time.Time
	uid   uint32
}

// TestImage runs what the image holds, as a container runtime would without `podman run` (which
// cannot set RLIMIT_NPROC in this sandbox): its filesystem exported, its entrypoint started under
// chroot as the image's user with the image's environment. The daemon answers, the image's health
// check passes, a job fires at a local webhook receiver, SIGTERM stops it with exit 0, and nothing
// outside /data was written. SCHEDULER_IMAGE names the image (`make image-test` builds it).
func TestImage(t *testing.T) {
	image := os.Getenv("SCHEDULER_IMAGE")
	if image == "" {
		t.Skip("SCHEDULER_IMAGE is not set: `make image-test` builds the image and runs this test")
	}
	if os.Geteuid() != 0 {
		t.Skip("chroot needs root")
	}
	tool := os.Getenv("IMAGE_TOOL")
	if tool == "" {
		tool = "podman"
	}
	cfg := inspect(t, tool, image)
	if cfg.Config.User != "65532:65532" || !slices.Equal(cfg.Config.Entrypoint, []string{"/usr/bin/schedulerd"}) ||
		!slices.Equal(cfg.Config.Cmd, []string{"serve"}) || cfg.Config.StopSignal != "SIGTERM" ||
		!slices.Equal(cfg.HealthCheck.Test, []string{"CMD", "/usr/bin/schedulerd", "health"}) {
		t.Fatalf("image configuration: %+v", cfg)
	}
	if _, ok := cfg.Config.Volumes["/data"]; !ok || len(cfg.Config.Volumes) != 1 {
		t.Fatalf("volumes %v, want /data only", cfg.Config.Volumes)
	}
	root := export(t, tool, image)
	if st, err := os.Stat(filepath.Join(root, "data")); err != nil || !st.IsDir() || uidOf(st) != 65532 {
		t.Fatalf("/data in the image: %v, %v; want a directory of uid 65532", st, err)
	}
	before := snapshot(t, root)

	var (
		mu   sync.Mutex
		hits []string
	)
	fired := make(chan struct{}, 1)
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		hits = append(hits, r.Method+" "+r.URL.Path+" "+r.Header.Get("X-Image-Test")+" "+string(b))
		mu.Unlock()
		select {
		case fired <- struct{}{}:
		default:
		}
		w.WriteHeader(http.StatusOK)
	}))
	defer receiver.Close()

	// The image's environment, the listen port made free (an operator's -p/-e would do the same)
	// and a token as a deployment gives it.
	const token = "image-test-admin-token-0123456789abcdefghij"
	env := append(slices.Clone(cfg.Config.Env), "SCHEDULERD_LISTEN=0.0.0.0:0", "SCHEDULERD_ADMIN_TOKEN="+token)
	var logs testlog.Buffer
	cmd := exec.Command("chroot", append([]string{"--userspec=" + cfg.Config.User, root}, append(cfg.Config.Entrypoint, cfg.Config.Cmd...)...)...)
	cmd.Env = env
	cmd.Dir = "/"
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var waitErr error
	exited := make(chan struct{})
	go func() {
		waitErr = cmd.Wait()
		close(exited)
	}()
	defer func() {
		select {
		case <-exited:
		default:
			_ = cmd.Process.Kill()
			<-exited
		}
	}()

	addr := waitFile(t, filepath.Join(root, "data", "listen-address"), &logs, exited)
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatalf("listen-address %q: %v", addr, err)
	}
	base := "http://127.0.0.1:" + port
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", cmd.Process.Pid))
	if err != nil || !strings.Contains(string(status), "\nUid:\t65532\t65532\t65532\t65532\n") || !strings.Contains(string(status), "\nGid:\t65532\t65532\t65532\t65532\n") {
		t.Fatalf("the daemon's ids: %v\n%s", err, status)
	}

	// The image's own health check, run as the runtime runs it: in the container, as its user.
	health := exec.Command("chroot", append([]string{"--userspec=" + cfg.Config.User, root}, cfg.HealthCheck.Test[1:]...)...)
	health.Env, health.Dir = env, "/"
	if out, err := health.CombinedOutput(); err != nil || string(out) != `ready: {"dispatcher":"ok","store":"ok"}`+"\n" {
		t.Fatalf("HEALTHCHECK: %v: %q; log:\n%s", err, out, logs.String())
	}

	const coll = "/subscriptions/s/resourceGroups/rg/providers/Microsoft.Scheduler/jobCollections/c"
	call(t, base, token, http.MethodPut, coll, `{"location":"local","properties":{"sku":{"name":"Standard"}}}`, http.StatusCreated)
	call(t, base, token, http.MethodPut, coll+"/jobs/hello", `{"properties":{"startTime":"`+time.Now().UTC().Format(time.RFC3339)+
		`","action":{"type":"Http","request":{"uri":"`+receiver.URL+`/hook","method":"POST","headers":{"X-Image-Test":"from-the-image"},"body":"hello"}}}}`,
		http.StatusCreated)
	select {
	case <-fired:
	case <-time.After(30 * time.Second):
		t.Fatalf("the job did not fire within 30 s; log:\n%s", logs.String())
	}
	mu.Lock()
	got := slices.Clone(hits)
	mu.Unlock()
	if !slices.Equal(got, []string{"POST /hook from-the-image hello"}) {
		t.Fatalf("the receiver got %q", got)
	}

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-exited:
		if waitErr != nil {
			t.Fatalf("exit after SIGTERM: %v; log:\n%s", waitErr, logs.String())
		}
	case <-time.After(15 * time.Second):
		t.Fatalf("still running 15 s after SIGTERM; log:\n%s", logs.String())
	}
	if !strings.Contains(logs.String(), `"msg":"schedulerd stopped"`) {
		t.Fatalf("no graceful stop in the log:\n%s", logs.String())
	}

	after := snapshot(t, root)
	for p, st := range after {
		if old, ok := before[p]; !ok || old != st {
			t.Errorf("%s changed outside /data: %+v, was %+v", p, st, old)
		}
	}
	for p := range before {
		if _, ok := after[p]; !ok {
			t.Errorf("%s removed", p)
		}
	}
	var data []string
	err = filepath.WalkDir(filepath.Join(root, "data"), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if uid := uidOf(info); uid != 65532 {
			t.Errorf("%s belongs to uid %d, want 65532", p, uid)
		}
		rel, _ := filepath.Rel(root, p)
		data = append(data, rel)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"data/scheduler.db", "data/secret.key", "data/listen-address"} {
		if !slices.Contains(data, want) {
			t.Errorf("%s missing: /data holds %v", want, data)
		}
	}
	if slices.Contains(data, "data/admin-token") {
		t.Errorf("an admin token was generated although SCHEDULERD_ADMIN_TOKEN was given: %v", data)
	}
}

func inspect(t *testing.T, tool, image string) imageConfig {
	t.Helper()
	out, err := exec.Command(tool, "image", "inspect", image).Output()
	if err != nil {
		t.Fatalf("%s image inspect %s: %v", tool, image, err)
	}
	var cfgs []imageConfig
	if err := json.Unmarshal(out, &cfgs); err != nil || len(cfgs) != 1 {
		t.Fatalf("%s image inspect %s: %v: %s", tool, image, err, out)
	}
	return cfgs[0]
}

// export writes the image's filesystem into a new directory (podman create, podman export).
func export(t *testing.T, tool, image string) string {
	t.Helper()
	out, err := exec.Command(tool, "create", image).Output()
	if err != nil {
		t.Fatalf("%s create: %v", tool, err)
	}
	id := strings.TrimSpace(string(out))
	defer func() { _ = exec.Command(tool, "rm", id).Run() }()
	root := filepath.Join(t.TempDir(), "root")
	if err := os.Mkdir(root, 0o755); err != nil {
		t.Fatal(err)
	}
	exp := exec.Command(tool, "export", id)
	untar := exec.Command("tar", "-x", "-C", root)
	pipe, err := exp.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	untar.Stdin = pipe
	var stderr bytes.Buffer
	untar.Stderr = &stderr
	if err := untar.Start(); err != nil {
		t.Fatal(err)
	}
	if err := exp.Run(); err != nil {
		t.Fatalf("%s export: %v", tool, err)
	}
	if err := untar.Wait(); err != nil {
		t.Fatalf("tar: %v: %s", err, stderr.String())
	}
	return root
}

// snapshot records every path of root outside data/.
func snapshot(t *testing.T, root string) map[string]fileState {
	t.Helper()
	m := map[string]fileState{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if rel == "data" && d.IsDir() {
			return fs.SkipDir
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		m[rel] = fileState{mode: info.Mode(), size: info.Size(), mtime: info.ModTime(), uid: uidOf(info)}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// uidOf is the owner of a file (math.MaxUint32 when the system does not say).
func uidOf(info fs.FileInfo) uint32 {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return st.Uid
	}
	return math.MaxUint32
}

func call(t *testing.T, base, token, method, path, body string, want int) {
	t.Helper()
	req, err := http.NewRequest(method, base+path+"?api-version=2016-03-01", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		t.Fatalf("%s %s: %d %s, want %d", method, path, resp.StatusCode, b, want)
	}
}

// waitFile waits for a file the daemon writes and returns its trimmed content.
func waitFile(t *testing.T, path string, logs *testlog.Buffer, exited <-chan struct{}) string {
	t.Helper()
	deadline := time.After(30 * time.Second)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		if b, err := os.ReadFile(path); err == nil && len(bytes.TrimSpace(b)) > 0 {
			return string(bytes.TrimSpace(b))
		}
		select {
		case <-exited:
			t.Fatalf("the daemon exited before writing %s; log:\n%s", path, logs.String())
		case <-deadline:
			t.Fatalf("%s not written within 30 s; log:\n%s", path, logs.String())
		case <-tick.C:
		}
	}
}
