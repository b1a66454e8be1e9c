package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
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
	extra    []string // the serve arguments beyond the common ones (restart starts it with them again)
}

// startDaemon starts the daemon, and with --store its --replicas - 1 peers on the same database.
func startDaemon(ctx context.Context, o options) (*daemon, error) {
	raw := make([]byte, 16)
	if _, err := rand.Read(raw); err != nil {
		return nil, fmt.Errorf("token: %w", err)
	}
	token := hex.EncodeToString(raw)
	if o.store == "" {
		return startOne(ctx, o, token, nil, "")
	}
	dir, err := os.MkdirTemp("", "schedbench-store-")
	if err != nil {
		return nil, fmt.Errorf("data dir: %w", err)
	}
	schema, _, extra, err := prepareStore(ctx, o, dir)
	if err != nil {
		return nil, err
	}
	d, err := startOne(ctx, o, token, extra, "")
	if err != nil {
		dropSchema(o, schema)
		return nil, err
	}
	d.schema, d.opts = schema, o
	for range o.replicas - 1 {
		p, err := startOne(ctx, o, token, extra, "")
		if err != nil {
			d.stop(false)
			return nil, err
		}
		d.peers = append(d.peers, p)
	}
	return d, nil
}

// startOne starts one daemon on data directory dir ("": a new one).
func startOne(ctx context.Context, o options, token string, extra []string, dir string) (*daemon, error) {
	if dir == "" {
		var err error
		if dir, err = os.MkdirTemp("", "schedbench-"); err != nil {
			return nil, fmt.Errorf("data dir: %w", err)
		}
	}
	d := &daemon{dataDir: dir, token: token, opts: o, extra: extra}
	args := []string{"serve", "--listen", "127.0.0.1:0", "--data", dir, "--log-level", "warn"}
	args = append(args, extra...)
	if o.daemonArgs != "" {
		args = append(args, strings.Fields(o.daemonArgs)...)
	}
	d.cmd = exec.CommandContext(ctx, o.schedulerd, args...)
	d.cmd.Env = append(os.Environ(), "SCHEDULERD_ADMIN_TOKEN="+d.token) // never on the command line
	logFile, err := os.OpenFile(filepath.Join(dir, "schedulerd.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
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

// peakRSS is the peak resident set (VmHWM) of the child, from /proc.
func (d *daemon) peakRSS() string { return d.statusField("VmHWM") }

// rss is the current resident set (VmRSS) of the child in bytes.
func (d *daemon) rss() (int64, error) {
	f := strings.Fields(d.statusField("VmRSS"))
	if len(f) != 2 || f[1] != "kB" {
		return 0, fmt.Errorf("VmRSS of %d: %q", d.pid(), f)
	}
	kb, err := strconv.ParseInt(f[0], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("VmRSS of %d: %w", d.pid(), err)
	}
	return kb * 1024, nil
}

// statusField is one field of /proc/<pid>/status of the child ("unknown ..." when unreadable).
func (d *daemon) statusField(name string) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", d.pid()))
	if err != nil {
		return "unknown (" + err.Error() + ")"
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, name+":"); ok {
			return strings.Join(strings.Fields(v), " ")
		}
	}
	return "unknown"
}

// restart stops the daemon (SIGTERM) and starts it again on the same data directory, and
// returns how long the new process took from its start until /readyz answered 200.
func (d *daemon) restart(ctx context.Context) (time.Duration, error) {
	if len(d.peers) > 0 {
		return 0, errors.New("restart: one daemon only (not with --replicas)")
	}
	d.terminate()
	took, err := d.startAgain(ctx)
	if err != nil {
		return 0, fmt.Errorf("restart: %w", err)
	}
	return took, nil
}

// startAgain starts the stopped daemon on its data directory (and store) and returns how long
// the new process took from its start until /readyz answered 200.
func (d *daemon) startAgain(ctx context.Context) (time.Duration, error) {
	if err := os.Remove(filepath.Join(d.dataDir, "listen-address")); err != nil && !errors.Is(err, os.ErrNotExist) {
		return 0, err
	}
	start := time.Now()
	nd, err := startOne(ctx, d.opts, d.token, d.extra, d.dataDir)
	if err != nil {
		return 0, err
	}
	d.cmd, d.endpoint, d.client = nd.cmd, nd.endpoint, nd.client
	if err := waitReady(ctx, d.endpoint, 10*time.Minute); err != nil {
		return 0, err
	}
	return time.Since(start), nil
}

// waitReady polls endpoint's /readyz until it answers 200.
func waitReady(ctx context.Context, endpoint string, limit time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, endpoint+"/readyz", nil)
		if err != nil {
			return err
		}
		if resp, err := http.DefaultClient.Do(req); err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s/readyz did not answer 200 within %s: %w", endpoint, limit, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
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
	d.terminate()
	if !keep {
		_ = os.RemoveAll(d.dataDir)
	}
}

// terminate stops the process: SIGTERM, then SIGKILL after 15 s.
func (d *daemon) terminate() {
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
}
