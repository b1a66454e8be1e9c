package store

import (
	"context"
	"errors"
	"time"
)

// ErrStaleTerm is returned by a fenced write (ExecutionClaimManyParams.Term) whose term is no
// longer the leader's: another replica took over, and the writer must stop acting as leader.
var ErrStaleTerm = errors.New("stale leader term")

// Leader is the holder of the leadership among replicas sharing one database.
type Leader struct {
	Replica   string
	Term      int64 // bumped by every takeover; a renewal keeps it
	ExpiresAt time.Time
}

// LeaderElectParams asks for the leadership (or to keep it) on behalf of Replica.
type LeaderElectParams struct {
	Replica string
	TTL     time.Duration // how long the leadership lasts without another call
	// Now is the time the expiry is computed from (zero: the database's clock, which replicas
	// share; tests pass their own).
	Now time.Time
}

// LeaderResignParams gives the leadership up, when Replica holds it in Term.
type LeaderResignParams struct {
	Replica string
	Term    int64
}

// Leadership elects one leader among replicas. LeaderElect takes the leadership when nobody
// holds it or its holder's expiry has passed (a new term), renews it when Replica holds it (the
// same term, a later expiry), and otherwise leaves it alone; it returns the holder after the
// call. A single-node driver implements it too (its one process is always elected).
type Leadership interface {
	LeaderElect(ctx context.Context, params LeaderElectParams) (*Leader, error)
	LeaderResign(ctx context.Context, params LeaderResignParams) error
}

// Change is a notification that a job or a collection changed, or that executions wait to be
// taken (claimed or rescued by the leader: every replica's executor takes its share).
type Change struct {
	Kind   string // ChangeJob, ChangeCollection, ChangeTakeable
	ID     int64
	Origin string // the replica that made the change (its own notifications are not news to it)
}

// Change kinds.
const (
	ChangeJob        = "job"
	ChangeCollection = "collection"
	ChangeTakeable   = "takeable"
)

// Notifier is implemented by drivers shared by several processes (PostgreSQL): Notify tells
// every process listening about changes (in order, in one round trip), and Listen calls fn for
// each change notified (by any process, this one included) until ctx is done. It returns when ctx is done or the listening
// connection fails (the caller listens again, and reloads what it may have missed).
type Notifier interface {
	Notify(ctx context.Context, changes ...Change) error
	Listen(ctx context.Context, ready func(), fn func(Change)) error
}
