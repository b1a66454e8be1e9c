package postgres

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
)

// Notify tells every replica listening on this schema's channel about a change ("kind:id:origin").
func (d *Driver) Notify(ctx context.Context, c store.Change) error {
	if _, err := d.pool.Exec(ctx, `SELECT pg_notify($1, $2)`, d.channel, c.Kind+":"+strconv.FormatInt(c.ID, 10)+":"+c.Origin); err != nil {
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
		kind, rest, ok := strings.Cut(n.Payload, ":")
		id, origin, _ := strings.Cut(rest, ":")
		v, err := strconv.ParseInt(id, 10, 64)
		if !ok || err != nil {
			continue
		}
		fn(store.Change{Kind: kind, ID: v, Origin: origin})
	}
}
