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
