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
	// Seq is the change's number in the change feed (ChangeFeed), 0 for a notification that is
	// not in it (ChangeTakeable, ChangePing: sent with Notify).
	Seq int64
}

// Change kinds.
const (
	ChangeJob        = "job"
	ChangeCollection = "collection"
	ChangeTakeable   = "takeable"
	// ChangePing is a notification a replica sends itself (ID counts them): when it does not
	// come back, its LISTEN connection is dead although it has not failed.
	ChangePing = "ping"
)

// Notifier is implemented by drivers shared by several processes (PostgreSQL): Notify tells
// every process listening about changes (in order, in one round trip), and Listen calls fn for
// each change notified (by any process, this one included) until ctx is done. It returns when
// ctx is done or the listening connection fails (the caller listens again, and reads the change
// feed for what it may have missed).
type Notifier interface {
	Notify(ctx context.Context, changes ...Change) error
	Listen(ctx context.Context, ready func(), fn func(Change)) error
}

// ChangeFeed is implemented by drivers shared by several processes (PostgreSQL). Every job and
// collection write that the leader's schedule depends on (JobPut, JobDelete, CollectionDelete,
// and a CollectionPut that changes the collection's state) records a Change (ChangeJob,
// ChangeCollection) with a sequence number and the driver's Origin, in the transaction that
// writes, and notifies it to the listeners (Notifier) in that transaction: a committed change is
// always notified and an uncommitted one never is. A notification can still be missed (a
// listener's connection dropped): ChangesSince is the backstop that no change is lost.
type ChangeFeed interface {
	// Origin is the origin the driver stamps on the changes written through it: this process's
	// own changes, which it has already acted on.
	Origin() string
	// ChangesSince returns, in sequence order, the changes committed since the cursor was
	// returned (each change once, over the successive calls that pass on the cursor returned)
	// and the cursor to pass next. The zero cursor returns no change: only the cursor from
	// which the changes committed after the call are returned.
	ChangesSince(ctx context.Context, cursor ChangeCursor) ([]Change, ChangeCursor, error)
	// ChangesPrune deletes the changes recorded longer than keep ago and returns how many.
	ChangesPrune(ctx context.Context, keep time.Duration) (int64, error)
}

// ChangeCursor is a position in a ChangeFeed: what its reader has read. Its fields belong to
// the driver (PostgreSQL: the reader's last snapshot, the transactions not committed in it).
type ChangeCursor struct {
	Next    uint64   // the first transaction not started at the last read (0: the zero cursor)
	Running []uint64 // the transactions running at the last read
}
