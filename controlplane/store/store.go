// Package store defines the storage a daemon runs on: a Driver interface with noun-first methods
// and a params struct per call, and the records it keeps. Drivers live in sub-packages (sqlite;
// postgres later) and all pass the conformance suite in storetest. Nothing outside a driver knows
// which database is behind it.
package store

import (
	"context"
	"errors"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/internal/arm"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"
)

// Errors every driver returns (wrapped or not; test with errors.Is).
var (
	ErrNotFound = errors.New("not found")
	// ErrConflict: a conditional write lost a race (Version mismatch) or an insert found the key taken.
	ErrConflict = errors.New("conflict")
)

// CollectionKey names a job collection. Names compare as arm.Fold compares them (ASCII letters
// case-insensitively, every other byte exactly; see NameKey); a record keeps the spelling it was
// created with. The API accepts only names in arm's grammar.
type CollectionKey struct {
	Subscription  string
	ResourceGroup string
	Name          string
}

// JobKey names a job.
type JobKey struct {
	CollectionKey
	Name string
}

// NameKey is the form a driver stores and compares a name by (arm.Fold): every driver uses it,
// so that the store, the routes and the authorization check agree on which names are the same.
func NameKey(name string) string { return arm.Fold(name) }

// ID is the collection's ARM id in the key's spelling.
func (k CollectionKey) ID() string { return arm.CollectionID(k.Subscription, k.ResourceGroup, k.Name) }

// ID is the job's ARM id in the key's spelling.
func (k JobKey) ID() string {
	return arm.JobID(k.Subscription, k.ResourceGroup, k.CollectionKey.Name, k.Name)
}

// CanonicalID is the one spelling of the job's ARM id (arm.CanonicalJobID): equal for every key
// that names this job, whatever its case, and different for every other job. Bind values that
// belong to a job (a sealed secret's associated data) to it.
func (k JobKey) CanonicalID() string {
	return arm.CanonicalJobID(k.Subscription, k.ResourceGroup, k.CollectionKey.Name, k.Name)
}

// Collection is a stored job collection.
type Collection struct {
	Key        CollectionKey
	ID         int64 // driver-assigned, stable for the collection's life
	Location   string
	Tags       map[string]string
	Properties wire.JobCollectionProperties // Sku, State and Quota as stored (Azure spelling)
	CreatedAt  time.Time
	UpdatedAt  time.Time
	Version    int64 // bumped by every write
	// Cancelled are the waiting executions a CollectionPut cancelled (CollectionPutParams.
	// CancelBackfillOf), by job and oldest first, with their ID, JobID, Tag, Scheduled and
	// Backfill, for the caller to log; nil from every other write and every read.
	Cancelled []Execution
}

// Job is a stored job. Properties hold the definition as accepted by the API, secrets already
// sealed by the API (see controlplane/secret), Status nil: the status lives in the fields below.
type Job struct {
	Key          JobKey
	ID           int64 // driver-assigned, stable for the job's life
	CollectionID int64
	Properties   wire.JobProperties
	State        string // Enabled, Disabled, Completed, Faulted
	CreatedAt    time.Time
	UpdatedAt    time.Time
	Status       JobStatus
	Version      int64 // bumped by every write; conditional writes compare it
	// CollectionState is the state of the job's collection, filled by every read (ignored by
	// JobPut): the dispatcher fires a job only when it is Enabled.
	CollectionState string
	// Cancelled are the waiting executions a JobPut cancelled (JobPutParams.CancelWaiting,
	// CancelBackfill), oldest first, with their ID, JobID, Tag, Scheduled and Backfill, for the
	// caller to log; nil from every other write and every read.
	Cancelled []Execution
	// PropertiesJSON is the properties as stored (JSON), set by JobListSchedulable instead of
	// Properties, which it leaves zero: the scheduler decodes each distinct text once (a
	// million jobs that do the same thing at a few hundred times are a few hundred texts).
	// Empty from every other read.
	PropertiesJSON string
}

// JobStatus is the job's execution state.
type JobStatus struct {
	ExecutionCount    int
	FailureCount      int
	FaultedCount      int
	ConsecutiveFaults int       // faulted occurrences in a row; reset by a successful one
	LastExecutionTime time.Time // zero: never executed
	NextExecutionTime time.Time // zero: nothing scheduled (disabled, completed, faulted)
}

// CollectionGetParams selects one collection.
type CollectionGetParams struct {
	Key CollectionKey
}

// CollectionListParams lists collections of a subscription, optionally of one resource group,
// ordered by (resource group, name) case-insensitively. Subscription "" lists every
// subscription's collections (ResourceGroup ignored), ordered by (subscription, resource group,
// name): for an admin's view, such as the dashboard's.
type CollectionListParams struct {
	Subscription  string // "": every subscription
	ResourceGroup string // "": every resource group
	Skip, Limit   int    // Limit 0: no limit
}

// CollectionPutParams creates a collection or replaces one. With ExpectVersion > 0 the write
// happens only when the stored version is that one (else ErrConflict); with ExpectVersion == 0 it
// creates when absent or replaces whatever is there.
type CollectionPutParams struct {
	Collection    Collection // Key, Location, Tags, Properties; ID/Version/times are the driver's
	ExpectVersion int64
	Now           time.Time
	// CancelBackfillOf: the write changes the state of a stored collection, and these are the
	// states of the jobs whose backfill the change cancels (jobstate.BackfillOnCollectionChange
	// of the state read and the one written; ExpectVersion guards the state read). In the
	// write's transaction, when it replaces the collection: the waiting executions of its jobs
	// in those states (DueAt BackfillWaiting: their backfill's not yet started and the
	// occurrence buffered by BufferOne, as JobPutParams.CancelBackfill cancels them) are
	// deleted with no history, each such job's ExecutionCount is taken down by their number and
	// its Version bumped; the collection returned lists them (Collection.Cancelled). The
	// executions under way are left to finish.
	CancelBackfillOf []string
}

// CollectionDeleteParams deletes a collection with all its jobs, executions and history.
type CollectionDeleteParams struct {
	Key CollectionKey
}

// JobGetParams selects one job.
type JobGetParams struct {
	Key JobKey
}

// JobListParams lists a collection's jobs ordered by name case-insensitively.
type JobListParams struct {
	Collection  CollectionKey
	State       string // "": any state; else Azure spelling
	Skip, Limit int    // Limit 0: no limit
}

// JobPutParams creates or replaces a job (its collection must exist: else ErrNotFound).
// Create (no job with that key): the Job's Status, State and Properties are stored as given.
// Replace: the same, conditional on ExpectVersion as for collections. MaxJobs > 0 makes a create
// fail with ErrQuota when the collection already holds that many jobs (checked in the same
// transaction, so concurrent creates cannot overshoot).
//
// A create only (CreateOnly) fails with ErrConflict when the job exists, and a write that
// expects its collection (ExpectCollection, with ID > 0) fails with ErrConflict unless the
// collection of the job's key has that ID and Version: together they let a writer that holds
// a collection it read earlier create a job without reading the collection again, the store
// refusing when either guess is wrong. Neither writes anything when it fails.
type JobPutParams struct {
	Job              Job
	ExpectVersion    int64
	MaxJobs          int
	Now              time.Time
	CreateOnly       bool
	ExpectCollection CollectionVersion
	// CancelWaiting: the write is a change of the job that cancels its occurrence waiting
	// (buffered by the BufferOne overlap policy, DueAt BufferedDueAt), as jobstate.WaitingOnChange
	// says (the API's PUT or PATCH of a stored BufferOne job). In the write's transaction, when the
	// job exists: that execution is deleted with no history and the job's ExecutionCount written
	// is one less; the job returned says so.
	CancelWaiting bool
	// CancelBackfill: the write disables the job or follows its collection's disabling
	// (jobstate.BackfillOnChange): in the write's transaction, when the job exists, the
	// executions of its backfill that wait (DueAt BackfillWaiting) are deleted with no history
	// and the job's ExecutionCount written is that many less (with the waiting occurrence
	// CancelWaiting cancels, when there is one); the job returned says so. The execution under
	// way is left to finish.
	CancelBackfill bool
}

// CollectionVersion is a collection as of one write: its ID and Version.
type CollectionVersion struct {
	ID, Version int64
}

// ErrQuota is returned by JobPut when MaxJobs would be exceeded.
var ErrQuota = errors.New("quota exceeded")

// JobDeleteParams deletes a job with its executions and history.
type JobDeleteParams struct {
	Key JobKey
}

// JobCountParams counts a collection's jobs.
type JobCountParams struct {
	Collection CollectionKey
}

// HistoryEntry is one attempt of one execution.
type HistoryEntry struct {
	ID                    int64
	JobID                 int64
	ExecutionID           int64 // the execution the attempt belongs to (0: none)
	ExecutionTag          string
	ActionName            string // MainAction, ErrorAction
	Status                string // Completed, Failed, Postponed
	Message               string
	RetryCount            int
	RepeatCount           int
	ExpectedExecutionTime time.Time
	StartTime             time.Time
	EndTime               time.Time
}

// HistoryListParams lists a job's history newest first: by execution (RepeatCount) newest
// first, and within an execution by attempt, newest first. When executions overlap (one still
// retrying while the next has started) the entries of each stay together.
type HistoryListParams struct {
	Job         JobKey
	Status      string // "": any; else Completed, Failed or Postponed
	Skip, Limit int
}

// Describer is implemented by drivers that can say in words which store they are, for people
// (the dashboard's health page): "SQLite file /data/scheduler.db", never a password.
type Describer interface {
	Describe() string
}

// Describe names the store d is in words, or says "the store" when its driver cannot.
func Describe(d Driver) string {
	if s, ok := d.(Describer); ok {
		return s.Describe()
	}
	return "the store"
}

// Driver is a storage backend. Every method is safe for concurrent use. The dispatcher's
// methods (claiming due occurrences, recording attempts in batches, purging) are in Dispatch,
// which every driver implements too.
type Driver interface {
	CollectionGet(ctx context.Context, params CollectionGetParams) (*Collection, error)
	CollectionList(ctx context.Context, params CollectionListParams) ([]*Collection, error)
	// CollectionPut returns the stored record and whether it was created.
	CollectionPut(ctx context.Context, params CollectionPutParams) (*Collection, bool, error)
	CollectionDelete(ctx context.Context, params CollectionDeleteParams) error

	JobGet(ctx context.Context, params JobGetParams) (*Job, error)
	// JobGetWithCollection returns the job's collection and the job, in one lookup: the job is
	// nil when the collection holds none of that name, ErrNotFound is for an absent collection.
	JobGetWithCollection(ctx context.Context, params JobGetParams) (*Collection, *Job, error)
	JobList(ctx context.Context, params JobListParams) ([]*Job, error)
	JobCount(ctx context.Context, params JobCountParams) (int, error)
	// JobPut returns the stored record and whether it was created. Its Properties are
	// params.Job.Properties without Status, the very values (not a copy decoded from what was
	// written): neither side changes them afterwards.
	JobPut(ctx context.Context, params JobPutParams) (*Job, bool, error)
	JobDelete(ctx context.Context, params JobDeleteParams) error

	HistoryList(ctx context.Context, params HistoryListParams) ([]*HistoryEntry, error)

	Dispatch
	Maintenance
	Overview
	Leadership

	Close() error
}
