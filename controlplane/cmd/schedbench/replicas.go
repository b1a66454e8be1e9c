package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/schedulerhq/terraform-provider-scheduler/internal/client"
)

// clientFor is the client job i is created through: the daemon and its replicas in turn.
func (d *daemon) clientFor(i int) *client.Client {
	if len(d.peers) == 0 {
		return d.client
	}
	all := len(d.peers) + 1
	if i%all == 0 {
		return d.client
	}
	return d.peers[i%all-1].client
}

// prepareStore creates a fresh schema in the --store database and the secret key every replica
// shares, and returns the daemons' --store URL and the extra serve arguments.
func prepareStore(ctx context.Context, o options, dir string) (schema, storeURL string, args []string, err error) {
	conn, err := pgx.Connect(ctx, o.store)
	if err != nil {
		return "", "", nil, fmt.Errorf("--store: %w", err)
	}
	defer func() { _ = conn.Close(ctx) }()
	raw := make([]byte, 6)
	if _, err := rand.Read(raw); err != nil {
		return "", "", nil, err
	}
	schema = "schedbench_" + hex.EncodeToString(raw)
	if _, err := conn.Exec(ctx, `CREATE SCHEMA `+schema); err != nil {
		return "", "", nil, fmt.Errorf("--store: %w", err)
	}
	u, err := url.Parse(o.store)
	if err != nil {
		return "", "", nil, fmt.Errorf("--store: %w", err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	// The daemons' connections carry the schema's name, so that their server processes (their
	// CPU time: serverCPU) are told apart from other clients of the same server.
	q.Set("application_name", schema)
	u.RawQuery = q.Encode()
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return "", "", nil, err
	}
	keyFile := filepath.Join(dir, "shared-secret.key")
	if err := os.WriteFile(keyFile, []byte(base64.StdEncoding.EncodeToString(key)+"\n"), 0o600); err != nil {
		return "", "", nil, err
	}
	return schema, u.String(), []string{"--store", u.String(), "--secret-key-file", keyFile}, nil
}

// dropSchema drops the schema prepareStore created.
func dropSchema(o options, schema string) {
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, o.store)
	if err != nil {
		return
	}
	defer func() { _ = conn.Close(ctx) }()
	_, _ = conn.Exec(ctx, `DROP SCHEMA `+schema+` CASCADE`)
}

// serverCPU returns the CPU time (user + system) of each PostgreSQL server process serving the
// daemons' connections (their application_name is the run's schema), by pid. The server must
// run on this machine (its /proc is read). A connection closed meanwhile takes its CPU time
// with it; the daemons' pools keep theirs open for the run.
func serverCPU(ctx context.Context, o options, schema string) (map[int]time.Duration, error) {
	conn, err := pgx.Connect(ctx, o.store)
	if err != nil {
		return nil, fmt.Errorf("server CPU: %w", err)
	}
	defer func() { _ = conn.Close(ctx) }()
	rows, err := conn.Query(ctx, `SELECT pid FROM pg_stat_activity WHERE application_name = $1`, schema)
	if err != nil {
		return nil, fmt.Errorf("server CPU: %w", err)
	}
	pids, err := pgx.CollectRows(rows, pgx.RowTo[int32])
	if err != nil {
		return nil, fmt.Errorf("server CPU: %w", err)
	}
	cpu := make(map[int]time.Duration, len(pids))
	for _, pid := range pids {
		c, err := processCPU(int(pid))
		if err != nil {
			continue // gone meanwhile, or not on this machine
		}
		cpu[int(pid)] = c
	}
	return cpu, nil
}

// serverCPUSince sums, over the server processes of now, the CPU time they used since before
// (all of it for a process started since).
func serverCPUSince(before, now map[int]time.Duration) time.Duration {
	var t time.Duration
	for pid, c := range now {
		t += c - before[pid]
	}
	return t
}
