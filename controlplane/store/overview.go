package store

import (
	"context"
	"time"
)

// JobStateCountParams counts jobs by collection and state: of one subscription, or of every
// subscription when Subscription is "" (the daemon's gauge of jobs by state, the dashboard's
// overview).
type JobStateCountParams struct {
	Subscription string
}

// JobStateCount is how many jobs of a collection are in a state.
type JobStateCount struct {
	CollectionID int64
	State        string // Azure spelling
	N            int
}

// JobListNextParams lists the jobs that will fire (schedulable: Enabled, in an Enabled
// collection, with a next execution), soonest next execution first (then by ID): of one
// subscription, or of every subscription when Subscription is "".
type JobListNextParams struct {
	Subscription string
	Limit        int // 0: no limit
}

// HistoryFailedParams lists the main action's failed attempts (history entries MainAction,
// Failed) that ended at or after Since, newest first: of one subscription, or of every
// subscription when Subscription is "". Scan > 0 bounds the cost: only the newest Scan attempts
// of the store ending at or after Since are looked at.
type HistoryFailedParams struct {
	Subscription string
	Since        time.Time
	Limit        int // 0: no limit
	Scan         int // 0: no bound
}

// FailedAttempt is a failed attempt of a main action with its job's key.
type FailedAttempt struct {
	Job   JobKey
	Entry HistoryEntry
}

// Overview is what the dashboard's overview and the daemon's metrics read of a whole store,
// each in one query whatever the number of jobs.
type Overview interface {
	// JobStateCount returns the jobs by collection and state (pairs without jobs are absent),
	// ordered by collection ID and state.
	JobStateCount(ctx context.Context, params JobStateCountParams) ([]JobStateCount, error)
	JobListNext(ctx context.Context, params JobListNextParams) ([]*Job, error)
	HistoryFailed(ctx context.Context, params HistoryFailedParams) ([]FailedAttempt, error)
}
