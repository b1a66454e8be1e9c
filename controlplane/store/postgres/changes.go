package postgres

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
)

// The change feed (migration 0006): the API's job and collection writes insert a row into
// changes in their own statement, and its trigger notifies it.

// newOrigin is a driver's origin: unique to the process's connection pool.
func newOrigin() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// Origin returns the origin stamped on the changes written through this driver.
func (d *Driver) Origin() string { return d.origin }

// changesSince reads the rows of the transactions that were running, or not started, at the
// cursor's snapshot (the others were read then, or rolled back) and the snapshot it read them in:
// one statement, so the snapshot returned is the one the rows were read in.
const changesSince = `SELECT pg_current_snapshot()::text, coalesce(array_agg(seq ORDER BY seq), '{}'), coalesce(array_agg(kind ORDER BY seq), '{}'),
	coalesce(array_agg(id ORDER BY seq), '{}'), coalesce(array_agg(origin ORDER BY seq), '{}')
FROM changes WHERE $1::bigint > 0 AND (xid >= $1::bigint::text::xid8 OR xid = ANY($2::text[]::xid8[]))`

// ChangesSince returns the changes committed since cursor (store.ChangeFeed).
func (d *Driver) ChangesSince(ctx context.Context, cursor store.ChangeCursor) ([]store.Change, store.ChangeCursor, error) {
	running := make([]string, len(cursor.Running))
	for i, x := range cursor.Running {
		running[i] = strconv.FormatUint(x, 10)
	}
	var (
		snap    string
		seqs    []int64
		kinds   []string
		ids     []int64
		origins []string
	)
	if err := d.pool.QueryRow(ctx, changesSince, int64(cursor.Next), running).Scan(&snap, &seqs, &kinds, &ids, &origins); err != nil {
		return nil, cursor, fmt.Errorf("changes since: %w", err)
	}
	next, err := parseSnapshot(snap)
	if err != nil {
		return nil, cursor, fmt.Errorf("changes since: %w", err)
	}
	out := make([]store.Change, len(seqs))
	for i := range seqs {
		out[i] = store.Change{Kind: kinds[i], ID: ids[i], Seq: seqs[i], Origin: origins[i]}
	}
	return out, next, nil
}

// parseSnapshot reads a pg_snapshot's text form, xmin:xmax:xip,...: the next cursor is its xmax
// and its running transactions (xip).
func parseSnapshot(s string) (store.ChangeCursor, error) {
	parts := strings.Split(s, ":")
	if len(parts) != 3 {
		return store.ChangeCursor{}, fmt.Errorf("snapshot %q: want xmin:xmax:xip", s)
	}
	var (
		c   store.ChangeCursor
		err error
	)
	if c.Next, err = strconv.ParseUint(parts[1], 10, 64); err != nil {
		return store.ChangeCursor{}, fmt.Errorf("snapshot %q: xmax: %w", s, err)
	}
	if parts[2] != "" {
		for _, x := range strings.Split(parts[2], ",") {
			v, err := strconv.ParseUint(x, 10, 64)
			if err != nil {
				return store.ChangeCursor{}, fmt.Errorf("snapshot %q: xip: %w", s, err)
			}
			c.Running = append(c.Running, v)
		}
	}
	return c, nil
}

// ChangesPrune deletes the changes recorded longer than keep ago (by the database's clock).
func (d *Driver) ChangesPrune(ctx context.Context, keep time.Duration) (int64, error) {
	tag, err := d.pool.Exec(ctx, `DELETE FROM changes WHERE at < clock_timestamp() - $1::bigint * interval '1 microsecond'`, keep.Microseconds())
	if err != nil {
		return 0, fmt.Errorf("changes prune: %w", err)
	}
	return tag.RowsAffected(), nil
}
