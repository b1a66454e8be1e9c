package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/internal/client"
)

// daemon is a schedulerd child process on a fresh data directory.
type daemon struct {
	cmd      *exec.Cmd
	dataDir  string
	endpoint string
	token    string
	client   *client.Client
	peers    []*daemon // the other replicas on the same --store
	schema   string    // the --store schema created for the run
	opts     options
}

// startDaemon starts the daemon, and with --store its --replicas - 1 peers on the same database.
func startDaemon(ctx context.Context, o options) (*daemon, error) {
	raw := make([]byte, 16)
	if _, err := rand.Read(raw); err != nil {
		return nil, fmt.Errorf("token: %w", err)
	}
	token := hex.EncodeToString(raw)
	if o.store == "" {
		return startOne(ctx, o, token, nil)
	}
	dir, err := os.MkdirTemp("", "schedbench-store-")
	if err != nil {
		return nil, fmt.Errorf("data dir: %w", err)
	}
	schema, _, extra, err := prepareStore(ctx, o, dir)
	if err != nil {
		return nil, err
	}
	d, err := startOne(ctx, o, token, extra)
	if err != nil {
		dropSchema(o, schema)
		return nil, err
	}
	d.schema, d.opts = schema, o
	for range o.replicas - 1 {
		p, err := startOne(ctx, o, token, extra)
		if err != nil {
			d.stop(false)
			return nil, err
		}
		d.peers = append(d.peers, p)
	}
	return d, nil
}

func startOne(ctx context.Context, o options, token string, extra []string) (*daemon, error) {
	dir, err := os.MkdirTemp("", "schedbench-")
	if err != nil {
		return nil, fmt.Errorf("data dir: %w", err)
	}
	d := &daemon{dataDir: dir, token: token}
	args := []string{"serve", "--listen", "127.0.0.1:0", "--data", dir, "--log-level", "warn"}
	args = append(args, extra...)
	if o.daemonArgs != "" {
		args = append(args, strings.Fields(o.daemonArgs)...)
	}
	d.cmd = exec.CommandContext(ctx, o.schedulerd, args...)
	d.cmd.Env = append(os.Environ(), "SCHEDULERD_ADMIN_TOKEN="+d.token) // never on the command line
	logFile, err := os.Create(filepath.Join(dir, "schedulerd.log"))
	if err != nil {
		return nil, fmt.Errorf("log file: %w", err)
	}
	d.cmd.Stdout, d.cmd.Stderr = logFile, logFile
	if err := d.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", o.schedulerd, err)
	}
	addrFile := filepath.Join(dir, "listen-address")
	for start := time.Now(); ; {
		if b, err := os.ReadFile(addrFile); err == nil && len(b) > 0 {
			d.endpoint = "http://" + strings.TrimSpace(string(b))
			break
		}
		if time.Since(start) > 30*time.Second {
			d.stop(true)
			return nil, fmt.Errorf("schedulerd did not write %s within 30s (log: %s)", addrFile, logFile.Name())
		}
		time.Sleep(50 * time.Millisecond)
	}
	d.client, err = client.New(client.Config{Endpoint: d.endpoint, Token: d.token, UserAgent: "schedbench"})
	if err != nil {
		d.stop(true)
		return nil, fmt.Errorf("client: %w", err)
	}
	return d, nil
}

func (d *daemon) pid() int { return d.cmd.Process.Pid }

// peakRSS reads VmHWM (the peak resident set) of the child from /proc.
func (d *daemon) peakRSS() string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", d.pid()))
	if err != nil {
		return "unknown (" + err.Error() + ")"
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "VmHWM:") {
			return strings.Join(strings.Fields(strings.TrimPrefix(line, "VmHWM:")), " ")
		}
	}
	return "unknown"
}

func (d *daemon) stop(keep bool) {
	for _, p := range d.peers {
		p.stop(keep)
	}
	defer func() {
		if d.schema != "" && !keep {
			dropSchema(d.opts, d.schema)
		}
	}()
	if d.cmd != nil && d.cmd.Process != nil {
		_ = d.cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = d.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			_ = d.cmd.Process.Kill()
			<-done
		}
	}
	if !keep {
		_ = os.RemoveAll(d.dataDir)
	}
}
