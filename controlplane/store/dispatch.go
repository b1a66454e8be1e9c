package store

import (
	"context"
	"time"
)

// Job states (Azure spelling).
const (
	JobStateEnabled   = "Enabled"
	JobStateDisabled  = "Disabled"
	JobStateCompleted = "Completed"
	JobStateFaulted   = "Faulted"
)

// Collection state that lets its jobs fire.
const CollectionStateEnabled = "Enabled"

// History action names and statuses (Azure spelling).
const (
	ActionMain  = "MainAction"
	ActionError = "ErrorAction"

	HistoryCompleted = "Completed"
	HistoryFailed    = "Failed"
	HistoryPostponed = "Postponed"
)

// Execution is an occurrence the dispatcher claimed and has not finished: it is stored before
// its first attempt runs and deleted when its last attempt is recorded, so a process that dies in
// between resumes it (with the same Tag) on start. Retries are this record's DueAt, not sleeps.
type Execution struct {
	ID          int64
	JobID       int64
	Tag         string    // x-ms-execution-tag: the same for every attempt of the occurrence
	Scheduled   time.Time // expected execution time
	RepeatCount int       // which execution of the job this is (1 for the first); set by the claim
	Missed      int       // earlier occurrences coalesced into this one (misfire after downtime)
	Manual      bool      // started by "run now", not by the schedule
	Phase       string    // ActionMain or ActionError
	Attempt     int       // attempts already made in this phase (the next attempt's retryCount)
	DueAt       time.Time // when the next attempt is due
	ClaimedAt   time.Time
}

// JobGetByIDParams selects one job by its ID.
type JobGetByIDParams struct {
	ID int64
}

// JobListSchedulableParams pages through the jobs that can fire: State Enabled, collection
// Enabled and a non-zero NextExecutionTime, ordered by ID.
type JobListSchedulableParams struct {
	CollectionID int64 // 0: every collection
	AfterID      int64 // keyset paging: only IDs greater than this
	Limit        int   // 0: no limit
}

// ExecutionClaim claims one occurrence of a job.
type ExecutionClaim struct {
	// Execution to store (Tag, Scheduled, Missed, Manual, Phase, DueAt, ClaimedAt; JobID is
	// the job claimed). ID and RepeatCount are set by the driver.
	Execution Execution
	// ExpectVersion > 0: a scheduled claim. It succeeds only when the job still has this
	// Version, is Enabled and its collection is Enabled (else ErrConflict); it then sets the
	// job's NextExecutionTime to NextExecutionTime (zero: nothing left). ExpectVersion == 0: a
	// manual run, made whatever the job's state, that leaves NextExecutionTime alone.
	ExpectVersion     int64
	NextExecutionTime time.Time
}

// ExecutionClaimManyParams claims several occurrences in one transaction. Every successful
// claim increments the job's ExecutionCount, sets its LastExecutionTime to when the attempt
// starts (the later of Now and the execution's DueAt: an occurrence claimed ahead starts when it
// is due) and bumps its Version.
//
// Term > 0 fences the claims: they are made only while Term is the leader's term (checked in the
// same transaction), else the call fails with ErrStaleTerm and claims nothing. Term 0: not fenced
// (manual runs, a single process).
type ExecutionClaimManyParams struct {
	Claims []ExecutionClaim
	Now    time.Time
	Term   int64
}

// ExecutionClaimResult is the outcome of one claim: Err is nil, ErrConflict or ErrNotFound.
type ExecutionClaimResult struct {
	Execution *Execution // the stored execution (nil on error)
	Version   int64      // the job's Version after the claim
	Err       error
}

// ExecutionListUnfinishedParams pages through the stored executions, ordered by ID.
type ExecutionListUnfinishedParams struct {
	AfterID int64
	Limit   int // 0: no limit
}

// AttemptRecord stores one attempt's history entry and what follows from it.
type AttemptRecord struct {
	ExecutionID int64
	JobID       int64
	History     HistoryEntry // ID is the driver's; JobID and ExecutionID are taken from above
	// Next is non-zero when the execution goes on: its next attempt (Phase, Attempt) is due then.
	Next    time.Time
	Phase   string
	Attempt int
	// Failure: the main action failed after its retries (FailureCount+1). It may come with a
	// record that goes on to the error action.
	Failure bool
	// Finished: the execution is over and deleted. Faulted says whether the occurrence faulted
	// (FaultedCount+1 and ConsecutiveFaults+1, else ConsecutiveFaults is reset).
	Finished bool
	Faulted  bool
	// FaultedAfter > 0: the job becomes Faulted (NextExecutionTime zero) when ConsecutiveFaults
	// reaches it. A finished Enabled job with nothing scheduled and no other execution becomes
	// Completed.
	FaultedAfter int
	// Cancelled (with Finished): the execution was cancelled before its first attempt (its job
	// changed after the occurrence was claimed ahead). It is deleted with no history entry, and
	// its job's ExecutionCount is decremented (it did not execute; Version bumped). Gone when the
	// execution no longer existed.
	Cancelled bool
}

// AttemptRecordManyParams records several attempts in one transaction.
type AttemptRecordManyParams struct {
	Records []AttemptRecord
	Now     time.Time
}

// AttemptRecordResult is the job as a record left it. Gone: the execution (or its job) no longer
// exists and nothing was stored. A record that changes nothing in its job leaves it untouched
// (its Version too): State is "" and the versions are 0. That is a record that neither finishes
// the execution nor reports a Failure, and one that finishes a good occurrence of a job with no
// consecutive faults and a next occurrence scheduled (the commonest record of all).
type AttemptRecordResult struct {
	Gone     bool
	State    string // the job's state after the record
	Version  int64  // the job's Version after the record
	Previous int64  // the job's Version before the record
}

// HistoryPurgeParams deletes history entries that ended before Before, and those beyond the
// KeepPerJob most recent executions of each job (0: no such limit): executions are numbered by
// the job's ExecutionCount (an entry's RepeatCount), so entries whose RepeatCount is at or below
// ExecutionCount - KeepPerJob go.
type HistoryPurgeParams struct {
	Before     time.Time
	KeepPerJob int
}

// JobPurgeFinalParams deletes Completed and Faulted jobs that reached that state before Before.
type JobPurgeFinalParams struct {
	Before time.Time
}

// Dispatch is what the dispatcher needs from a driver beyond the CRUD methods.
type Dispatch interface {
	JobGetByID(ctx context.Context, params JobGetByIDParams) (*Job, error)
	JobListSchedulable(ctx context.Context, params JobListSchedulableParams) ([]*Job, error)

	// ExecutionClaimMany claims occurrences in one transaction; results are in claim order.
	ExecutionClaimMany(ctx context.Context, params ExecutionClaimManyParams) ([]ExecutionClaimResult, error)
	ExecutionListUnfinished(ctx context.Context, params ExecutionListUnfinishedParams) ([]*Execution, error)

	// AttemptRecordMany records attempts in one transaction; results are in record order.
	AttemptRecordMany(ctx context.Context, params AttemptRecordManyParams) ([]AttemptRecordResult, error)

	// HistoryPurge and JobPurgeFinal return how many rows they deleted.
	HistoryPurge(ctx context.Context, params HistoryPurgeParams) (int64, error)
	JobPurgeFinal(ctx context.Context, params JobPurgeFinalParams) (int64, error)
}
