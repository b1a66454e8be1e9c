package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/internal/client"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"
)

// These tests run schedulerd as a real process on a real data directory and kill it.

// crashDaemon is one schedulerd process.
type crashDaemon struct {
	cmd    *exec.Cmd
	done   chan error
	client *client.Client
	log    string
}

func crashStart(t *testing.T, bin, dataDir, token string) *crashDaemon {
	t.Helper()
	_ = os.Remove(filepath.Join(dataDir, "listen-address"))
	logPath := filepath.Join(dataDir, fmt.Sprintf("schedulerd-%d.log", time.Now().UnixNano()))
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "serve", "--listen", "127.0.0.1:0", "--data", dataDir)
	cmd.Env = append(os.Environ(), "SCHEDULERD_ADMIN_TOKEN="+token)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	d := &crashDaemon{cmd: cmd, done: make(chan error, 1), log: logPath}
	go func() { d.done <- cmd.Wait(); _ = logFile.Close() }()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			if err := <-d.done; err != nil {
				t.Logf("schedulerd stopped at cleanup: %v", err)
			}
		}
	})
	deadline := time.Now().Add(30 * time.Second)
	for {
		b, err := os.ReadFile(filepath.Join(dataDir, "listen-address"))
		if err == nil && len(b) > 0 {
			d.client, err = client.New(client.Config{Endpoint: "http://" + strings.TrimSpace(string(b)), Token: token})
			if err != nil {
				t.Fatal(err)
			}
			return d
		}
		if time.Now().After(deadline) {
			logText, _ := os.ReadFile(logPath)
			t.Fatalf("schedulerd wrote no listen-address within 30s; log:\n%s", logText)
		}
		time.Sleep(20 * time.Millisecond) // polling for the child's start, not for a schedule
	}
}

// crashReceiver is the jobs' HTTP target. It records every delivery when it arrives and holds
// its answer until the gate opens, so deliveries are in flight when the test kills the daemon.
type crashReceiver struct {
	srv *httptest.Server

	mu       sync.Mutex
	got      map[string][]crashDelivery // by job name
	answered map[string]int
	arrived  chan struct{}
	gate     chan struct{}
}

type crashDelivery struct {
	tag, expected string
}

func newCrashReceiver(t *testing.T) *crashReceiver {
	r := &crashReceiver{
		got:      map[string][]crashDelivery{},
		answered: map[string]int{},
		arrived:  make(chan struct{}, 10000),
		gate:     make(chan struct{}),
	}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		name := strings.TrimPrefix(req.URL.Path, "/job/")
		r.mu.Lock()
		r.got[name] = append(r.got[name], crashDelivery{
			tag:      req.Header.Get("x-ms-execution-tag"),
			expected: req.Header.Get("x-ms-scheduler-expected-execution-time"),
		})
		r.mu.Unlock()
		r.arrived <- struct{}{}
		select {
		case <-r.gate:
		case <-req.Context().Done():
			return
		}
		r.mu.Lock()
		r.answered[name]++
		r.mu.Unlock()
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(r.srv.Close)
	return r
}

// waitArrivals waits for n more deliveries, failing after timeout.
func (r *crashReceiver) waitArrivals(t *testing.T, n int, timeout time.Duration) {
	t.Helper()
	deadline := time.After(timeout)
	for i := 0; i < n; i++ {
		select {
		case <-r.arrived:
		case <-deadline:
			t.Fatalf("only %d of %d deliveries arrived within %s", i, n, timeout)
		}
	}
}

func (r *crashReceiver) snapshot() map[string][]crashDelivery {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[string][]crashDelivery, len(r.got))
	for k, v := range r.got {
		out[k] = append([]crashDelivery(nil), v...)
	}
	return out
}

// crashJobs creates a collection and n one-shot jobs due 3 to 6 seconds from now.
func crashJobs(t *testing.T, c *client.Client, recvURL string, n int) (client.CollectionID, map[string]time.Time) {
	t.Helper()
	ctx := context.Background()
	coll := client.CollectionID{Subscription: "crash", ResourceGroup: "rg", Name: "coll"}
	if _, err := c.CollectionPut(ctx, coll, &wire.JobCollectionDefinition{
		Location:   "local",
		Properties: &wire.JobCollectionProperties{Sku: &wire.Sku{Name: "P20Premium"}, State: "Enabled"},
	}); err != nil {
		t.Fatal(err)
	}
	base := time.Now().UTC().Truncate(time.Second).Add(4 * time.Second) // margin for creating the jobs under load
	due := map[string]time.Time{}
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("job%03d", i)
		at := base.Add(time.Duration(i%3) * time.Second)
		due[name] = at
		_, err := c.JobPut(ctx, client.JobID{CollectionID: coll, Name: name}, &wire.JobDefinition{Properties: &wire.JobProperties{
			StartTime: at.Format(time.RFC3339),
			Action: &wire.JobAction{
				Type:        "Http",
				Request:     &wire.HTTPRequest{URI: recvURL + "/job/" + name, Method: "POST", Body: name},
				RetryPolicy: &wire.RetryPolicy{RetryType: "None"},
			},
		}})
		if err != nil {
			t.Fatal(err)
		}
	}
	return coll, due
}

// TestSIGKILLLosesNoOccurrence kills the daemon while occurrences are due and in flight, restarts
// it on the same data directory, and checks that every occurrence ran at least once, is in
// history, and that a repeat carries the same execution tag.
func TestSIGKILLLosesNoOccurrence(t *testing.T) {
	dataDir := t.TempDir()
	const token = "crash-test-token-0123456789abcdef0123456789abcdef"
	const jobs = 30
	recv := newCrashReceiver(t)
	bin := daemonBinary(t)
	d := crashStart(t, bin, dataDir, token)
	coll, due := crashJobs(t, d.client, recv.srv.URL, jobs)

	// Kill once some deliveries are in flight (the receiver has not answered any yet) and the
	// later ones are still due.
	recv.waitArrivals(t, 5, 30*time.Second)
	if err := d.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if err := <-d.done; err == nil {
		t.Fatal("schedulerd exited cleanly although it was killed")
	}
	inFlight := recv.snapshot()
	close(recv.gate) // from now on the receiver answers at once

	d2 := crashStart(t, bin, dataDir, token)
	ctx := context.Background()
	deadline := time.Now().Add(60 * time.Second)
	for {
		got := recv.snapshot()
		complete := 0
		for name := range due {
			if len(got[name]) > 0 {
				complete++
			}
		}
		if complete == jobs {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the restart only %d of %d jobs were delivered", complete, jobs)
		}
		recv.waitArrivals(t, 1, time.Until(deadline))
	}

	got := recv.snapshot()
	repeated := 0
	for name, at := range due {
		ds := got[name]
		for _, dl := range ds {
			if dl.tag == "" || dl.tag != ds[0].tag {
				t.Errorf("%s: deliveries carry tags %+v, want one non-empty tag", name, ds)
			}
			exp, err := time.Parse(time.RFC3339Nano, dl.expected)
			if err != nil || !exp.Equal(at) {
				t.Errorf("%s: expected-execution-time %q, want %s", name, dl.expected, at.Format(time.RFC3339))
			}
		}
		if len(ds) > 1 {
			repeated++
		}
	}
	// Every delivery that was in flight when the daemon died was never answered, so it must have
	// been repeated after the restart.
	for name := range inFlight {
		if len(got[name]) < 2 {
			t.Errorf("%s was in flight when the daemon was killed but was not repeated: %+v", name, got[name])
		}
	}
	if len(inFlight) == 0 || repeated < len(inFlight) {
		t.Errorf("in flight at the kill: %d jobs, repeated: %d", len(inFlight), repeated)
	}
	t.Logf("%d jobs: %d in flight at the kill, %d delivered twice with the same tag", jobs, len(inFlight), repeated)

	// Every occurrence is in history, with a Completed attempt for its scheduled time.
	for name, at := range due {
		id := client.JobID{CollectionID: coll, Name: name}
		var hist []wire.JobHistoryDefinition
		for {
			h, err := d2.client.HistoryList(ctx, client.HistoryListParams{Job: id})
			if err != nil {
				t.Fatal(err)
			}
			hist = h
			if hasCompleted(hist) || time.Now().After(deadline) {
				break
			}
			time.Sleep(50 * time.Millisecond) // results are committed in batches: poll briefly
		}
		if !hasCompleted(hist) {
			t.Errorf("%s: no Completed history entry: %+v", name, hist)
			continue
		}
		for _, h := range hist {
			exp, err := time.Parse(time.RFC3339Nano, h.Properties.ExpectedExecutionTime)
			if err != nil || !exp.Equal(at) {
				t.Errorf("%s: history expectedExecutionTime %q, want %s", name, h.Properties.ExpectedExecutionTime, at.Format(time.RFC3339))
			}
		}
	}
}

func hasCompleted(hist []wire.JobHistoryDefinition) bool {
	for _, h := range hist {
		if h.Properties != nil && h.Properties.Status == "Completed" {
			return true
		}
	}
	return false
}
