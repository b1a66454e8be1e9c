package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
)

const leaderName = "scheduler"

// LeaderElect takes, renews or reads the leadership (see store.Leadership) in one transaction.
func (d *Driver) LeaderElect(ctx context.Context, params store.LeaderElectParams) (*store.Leader, error) {
	now := params.Now
	if now.IsZero() {
		now = time.Now()
	}
	expires := now.Add(params.TTL)
	var l store.Leader
	err := d.tx(ctx, func(tx *sql.Tx) error {
		var at int64
		err := tx.QueryRowContext(ctx, `SELECT replica, term, expires_at FROM leader WHERE name = ?`, leaderName).Scan(&l.Replica, &l.Term, &at)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			l = store.Leader{Replica: params.Replica, Term: 1, ExpiresAt: expires}
			_, err = tx.ExecContext(ctx, `INSERT INTO leader (name, replica, term, expires_at) VALUES (?, ?, ?, ?)`,
				leaderName, l.Replica, l.Term, nanos(expires))
			return err
		case err != nil:
			return err
		}
		l.ExpiresAt = fromNanos(at)
		expired := !now.Before(l.ExpiresAt)
		if l.Replica != params.Replica && !expired {
			return nil
		}
		if expired {
			l.Term++
		}
		l.Replica, l.ExpiresAt = params.Replica, expires
		_, err = tx.ExecContext(ctx, `UPDATE leader SET replica = ?, term = ?, expires_at = ? WHERE name = ?`,
			l.Replica, l.Term, nanos(expires), leaderName)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("leader elect: %w", err)
	}
	return &l, nil
}

// LeaderResign ends Replica's leadership in Term.
func (d *Driver) LeaderResign(ctx context.Context, params store.LeaderResignParams) error {
	_, err := d.w.ExecContext(ctx, `UPDATE leader SET expires_at = ? WHERE name = ? AND replica = ? AND term = ?`,
		int64(-1)<<62, leaderName, params.Replica, params.Term)
	if err != nil {
		return fmt.Errorf("leader resign: %w", err)
	}
	return nil
}

// checkTerm fails with store.ErrStaleTerm unless term is 0 or the leader's term.
func checkTerm(ctx context.Context, tx *sql.Tx, term int64) error {
	if term == 0 {
		return nil
	}
	var cur int64
	err := tx.QueryRowContext(ctx, `SELECT term FROM leader WHERE name = ?`, leaderName).Scan(&cur)
	if errors.Is(err, sql.ErrNoRows) || (err == nil && cur != term) {
		return fmt.Errorf("term %d: %w", term, store.ErrStaleTerm)
	}
	return err
}
