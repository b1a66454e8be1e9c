// Package brokertest starts and talks to the real message services the action tests deliver to:
// Azurite's queue service (the npm package, installed by tools/azurite.sh into a cache outside
// the repository, started on a free port per test) and the machine's RabbitMQ with its AMQP 1.0
// plugin. Nothing here is a stand-in: what a test reads back is what the service stored.
package brokertest

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// repoRoot is the directory holding go.mod, found from the test's working directory.
func repoRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("brokertest: no go.mod above the working directory")
		}
		dir = parent
	}
}

// tool runs tools/<name> from the repository and returns its last line of output (a path).
func tool(t testing.TB, name string) string {
	t.Helper()
	cmd := exec.Command(filepath.Join(repoRoot(t), "tools", name))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			err = fmt.Errorf("%w: %s", err, stderr.String())
		}
		t.Fatalf("tools/%s: %v", name, err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	return lines[len(lines)-1]
}
