package store

import (
	"context"
	"strings"
)

// MetaGetParams reads one of the daemon's own settings kept in the store.
type MetaGetParams struct {
	Name string
}

// MetaPutParams writes (creates or replaces) one of the daemon's own settings. Each put is a
// committed write transaction: /readyz puts a setting to prove that the store can commit.
type MetaPutParams struct {
	Name  string
	Value string
}

// JobListAllParams pages through every job of every collection, whatever its state, ordered by
// ID: the start-up checks of sealed secrets read them all.
type JobListAllParams struct {
	AfterID int64 // keyset paging: only IDs greater than this
	Limit   int   // 0: no limit
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

// FoldName is the form in which names (subscription ids, resource groups, collections, jobs)
// compare: ASCII letters lowercased, every other byte kept, so "Sub1" and "sub1" are one name
// and "ſub1" (U+017F) another.
func FoldName(s string) string {
	b := []byte(s)
	changed := false
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + ('a' - 'A')
			changed = true
		}
	}
	if !changed {
		return s
	}
	return string(b)
}

// CanonicalID is the job's ARM resource id in the form names compare in (FoldName of the whole
// id): what a sealed secret is bound to, so that two spellings of one job name open its secrets
// and no other job can.
func (k JobKey) CanonicalID() string {
	return FoldName(strings.Join([]string{
		"/subscriptions/", k.Subscription, "/resourceGroups/", k.ResourceGroup,
		"/providers/Microsoft.Scheduler/jobCollections/", k.CollectionKey.Name, "/jobs/", k.Name,
	}, ""))
}
