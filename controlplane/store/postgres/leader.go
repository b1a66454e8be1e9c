package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
)

// LeaderElect takes, renews or reads the leadership in one statement: the row is inserted when
// absent (ON CONFLICT DO NOTHING), taken with a new term when expired, renewed when held by the
// caller, and returned as it is after that.
func (d *Driver) LeaderElect(ctx context.Context, params store.LeaderElectParams) (*store.Leader, error) {
	var (
		l       store.Leader
		expires time.Time
	)
	err := d.pool.QueryRow(ctx, `WITH now AS (SELECT coalesce($3::timestamptz, clock_timestamp()) AS t),
	ins AS (
		INSERT INTO leader (name, replica, term, expires_at) SELECT $1, $2, 1, t + $4::bigint * interval '1 microsecond' FROM now
		ON CONFLICT (name) DO NOTHING RETURNING replica, term, expires_at
	), upd AS (
		UPDATE leader SET replica = $2, term = CASE WHEN replica = $2 AND expires_at > now.t THEN term ELSE term + 1 END,
			expires_at = now.t + $4::bigint * interval '1 microsecond'
		FROM now WHERE name = $1 AND NOT EXISTS (SELECT 1 FROM ins) AND (replica = $2 OR expires_at <= now.t)
		RETURNING replica, term, expires_at
	)
	SELECT replica, term, expires_at FROM ins
	UNION ALL SELECT replica, term, expires_at FROM upd
	UNION ALL SELECT replica, term, expires_at FROM leader WHERE name = $1 AND NOT EXISTS (SELECT 1 FROM ins) AND NOT EXISTS (SELECT 1 FROM upd)
	LIMIT 1`, leaderName, params.Replica, ts(params.Now), params.TTL.Microseconds()).Scan(&l.Replica, &l.Term, &expires)
	if err != nil {
		return nil, fmt.Errorf("leader elect: %w", err)
	}
	l.ExpiresAt = expires.UTC()
	return &l, nil
}

// LeaderResign ends Replica's leadership in Term (its expiry becomes the past), so that another
// replica takes over at once.
func (d *Driver) LeaderResign(ctx context.Context, params store.LeaderResignParams) error {
	_, err := d.pool.Exec(ctx, `UPDATE leader SET expires_at = '-infinity' WHERE name = $1 AND replica = $2 AND term = $3`,
		leaderName, params.Replica, params.Term)
	if err != nil {
		return fmt.Errorf("leader resign: %w", err)
	}
	return nil
}
