package provider

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"

	"github.com/schedulerhq/terraform-provider-scheduler/internal/client"
)

// The acceptance tests (TF_ACC=1) run against a real daemon: TestMain builds
// ./controlplane/cmd/schedulerd, starts it on a free port with a fresh data directory, and points
// the provider at it through SCHEDULER_ENDPOINT and SCHEDULER_TOKEN. terraform-plugin-testing
// drives a real tofu (TF_ACC_TERRAFORM_PATH=$(tools/tofu.sh)). See `make testacc`.

const accToken = "acceptance-test-token"

// envDaemonBinary names the schedulerd binary TestMain built, for tests that start their own.
const envDaemonBinary = "SCHEDULER_ACC_SCHEDULERD"

func TestMain(m *testing.M) {
	os.Exit(runTests(m))
}

func runTests(m *testing.M) int {
	if os.Getenv("TF_ACC") == "" {
		return m.Run() // unit tests only; resource.Test skips the acceptance tests
	}
	dir, err := os.MkdirTemp("", "scheduler-acc-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "acceptance tests:", err)
		return 1
	}
	defer func() { _ = os.RemoveAll(dir) }()
	bin := filepath.Join(dir, "schedulerd")
	build := exec.Command("go", "build", "-o", bin, "./controlplane/cmd/schedulerd")
	build.Dir = ".." // the module root
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "acceptance tests: go build schedulerd: %v\n%s", err, out)
		return 1
	}
	if err := os.Setenv(envDaemonBinary, bin); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	stop, addr, err := startDaemon(bin, dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, "acceptance tests: cannot start schedulerd:", err)
		return 1
	}
	defer stop()
	if err := os.Setenv(EnvEndpoint, "http://"+addr); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := os.Setenv(EnvToken, accToken); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}

// startDaemon starts the schedulerd binary bin with its data in dir and extra flags; it returns
// how to stop it and its address.
func startDaemon(bin, dir string, extra ...string) (stop func(), addr string, err error) {
	data := filepath.Join(dir, "data")
	logFile, err := os.Create(filepath.Join(dir, "schedulerd.log"))
	if err != nil {
		return nil, "", err
	}
	args := append([]string{"serve", "--listen", "127.0.0.1:0", "--data", data, "--log-level", "warn"}, extra...)
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "SCHEDULERD_ADMIN_TOKEN="+accToken) // never on the command line
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		return nil, "", err
	}
	exited := make(chan struct{})
	var waitErr error
	go func() {
		waitErr = cmd.Wait()
		close(exited)
	}()
	stop = func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
		_ = logFile.Close()
		if os.Getenv("SCHEDULER_ACC_DAEMON_LOG") != "" {
			if b, err := os.ReadFile(logFile.Name()); err == nil {
				fmt.Fprintf(os.Stderr, "--- schedulerd log ---\n%s", b)
			}
		}
	}
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		b, err := os.ReadFile(filepath.Join(data, "listen-address"))
		if err == nil && strings.TrimSpace(string(b)) != "" {
			return stop, strings.TrimSpace(string(b)), nil
		}
		select {
		case <-exited:
			b, _ := os.ReadFile(logFile.Name())
			return nil, "", fmt.Errorf("schedulerd exited: %v\n%s", waitErr, b)
		case <-time.After(20 * time.Millisecond):
		}
	}
	stop()
	return nil, "", errors.New("schedulerd did not write listen-address within 30s")
}

func protoV6Factories() map[string]func() (tfprotov6.ProviderServer, error) {
	return map[string]func() (tfprotov6.ProviderServer, error){
		"scheduler": providerserver.NewProtocol6WithError(New("test")()),
	}
}

// testClient talks to the acceptance tests' daemon (for drift and destroy checks).
func testClient(t *testing.T) *client.Client {
	t.Helper()
	c, err := client.New(client.Config{Endpoint: os.Getenv(EnvEndpoint), Token: os.Getenv(EnvToken)})
	if err != nil {
		t.Fatalf("client: %v", err)
	}
	return c
}

// messageRE matches msg exactly, whatever line wrapping tofu applies to it.
func messageRE(msg string) *regexp.Regexp {
	words := strings.Fields(msg)
	for i, w := range words {
		words[i] = regexp.QuoteMeta(w)
	}
	return regexp.MustCompile(strings.Join(words, `\s+`))
}

// waitForJob polls the daemon until the job satisfies ok (timeout 30s).
func waitForJob(t *testing.T, id client.JobID, what string, ok func(state string, executions int) bool) {
	t.Helper()
	c := testClient(t)
	deadline := time.Now().Add(30 * time.Second)
	for {
		j, err := c.JobGet(context.Background(), id)
		if err == nil && j.Properties != nil {
			n := 0
			if s := j.Properties.Status; s != nil && s.ExecutionCount != nil {
				n = *s.ExecutionCount
			}
			if ok(j.Properties.State, n) {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %s: not %s after 30s (last: %+v, %v)", id, what, j, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
