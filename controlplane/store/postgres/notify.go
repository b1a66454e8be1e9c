package postgres

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
)

// Notify tells every replica listening on this schema's channel about changes ("kind:id:seq:origin",
// as the change feed's trigger writes them),
// in order, in one statement: one round trip and one commit for all of them (a transaction that
// notifies is committed like one that writes: a WAL flush each).
func (d *Driver) Notify(ctx context.Context, changes ...store.Change) error {
	if len(changes) == 0 {
		return nil
	}
	payloads := make([]string, len(changes))
	for i, c := range changes {
		payloads[i] = c.Kind + ":" + strconv.FormatInt(c.ID, 10) + ":" + strconv.FormatInt(c.Seq, 10) + ":" + c.Origin
	}
	if _, err := d.pool.Exec(ctx, `SELECT pg_notify($1, p) FROM unnest($2::text[]) AS p`, d.channel, payloads); err != nil {
		return fmt.Errorf("notify: %w", err)
	}
	return nil
}

// Listen holds one connection of the pool LISTENing on this schema's channel and calls fn for
// every change notified, until ctx is done or the connection fails. ready is called once the
// LISTEN is in place.
func (d *Driver) Listen(ctx context.Context, ready func(), fn func(store.Change)) error {
	conn, err := d.pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	// The connection is LISTENing: it does not go back to the pool.
	c := conn.Hijack()
	defer func() { _ = c.Close(context.WithoutCancel(ctx)) }()
	if _, err := c.Exec(ctx, `LISTEN `+pgx.Identifier{d.channel}.Sanitize()); err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	if ready != nil {
		ready()
	}
	for {
		n, err := c.WaitForNotification(ctx)
		if err != nil {
			return fmt.Errorf("listen: %w", err)
		}
		if c, ok := parsePayload(n.Payload); ok {
			fn(c)
		}
	}
}

// parsePayload reads a notification's payload, kind:id:seq:origin (the origin may hold colons).
func parsePayload(p string) (store.Change, bool) {
	kind, rest, ok := strings.Cut(p, ":")
	id, rest, ok2 := strings.Cut(rest, ":")
	seq, origin, ok3 := strings.Cut(rest, ":")
	if !ok || !ok2 || !ok3 {
		return store.Change{}, false
	}
	c := store.Change{Kind: kind, Origin: origin}
	var err error
	if c.ID, err = strconv.ParseInt(id, 10, 64); err != nil {
		return store.Change{}, false
	}
	if c.Seq, err = strconv.ParseInt(seq, 10, 64); err != nil {
		return store.Change{}, false
	}
	return c, true
}
