package store

import "context"

// MetaGetParams reads one of the daemon's own settings kept in the store.
type MetaGetParams struct {
	Name string
}

// MetaPutParams writes (creates or replaces) one of the daemon's own settings. Each put is a
// committed write transaction: /readyz puts a setting to prove that the store can commit.
type MetaPutParams struct {
	Name  string
	Value string
	// IfAbsent writes only when the setting does not exist yet (an existing value is kept, without
	// error): replicas starting together store one secret key check value, the first.
	IfAbsent bool
}

// JobListAllParams pages through every job of every collection, whatever its state, ordered by
// ID: the start-up checks of sealed secrets read them (those whose definition holds a sealed
// value: Containing).
type JobListAllParams struct {
	AfterID int64 // keyset paging: only IDs greater than this
	Limit   int   // 0: no limit
	// Containing, when set (letters, digits and ':' only), lists only the jobs whose stored
	// properties text contains it (a driver may also list those that hold it in another ASCII
	// case); the caller reads the definition (a note may hold the text too).
	Containing string
}

// Meta names.
const (
	// MetaSecretKeyCheck is the check value of the key that seals the secrets stored (see
	// controlplane/secret): a start with another key or none is refused.
	MetaSecretKeyCheck = "secret_key_check"
	// MetaReadyProbe is written by /readyz's write probe.
	MetaReadyProbe = "ready_probe"
)

// Maintenance is what start-up checks and readiness probes need of a driver.
type Maintenance interface {
	// MetaGet returns the value of a setting, or ErrNotFound.
	MetaGet(ctx context.Context, params MetaGetParams) (string, error)
	MetaPut(ctx context.Context, params MetaPutParams) error
	JobListAll(ctx context.Context, params JobListAllParams) ([]*Job, error)
}
