package store

import (
	"context"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/internal/jobstate"
)

// Job states (Azure spelling): the rulebook's (jobstate), which decides them.
const (
	JobStateEnabled   = jobstate.Enabled
	JobStateDisabled  = jobstate.Disabled
	JobStateCompleted = jobstate.Completed
	JobStateFaulted   = jobstate.Faulted
)

// Collection state that lets its jobs fire.
const CollectionStateEnabled = jobstate.CollectionEnabled

// History action names (the rulebook's phases) and statuses (Azure spelling).
const (
	ActionMain  = jobstate.PhaseMain
	ActionError = jobstate.PhaseError

	HistoryCompleted = "Completed"
	HistoryFailed    = "Failed"
	HistoryPostponed = "Postponed"
	// HistorySkipped (extension, SPEC 8) records occurrences that did not run: skipped by the
	// overlap policy while an execution was unfinished, or by the misfire policy Skip (the
	// rulebook's status).
	HistorySkipped = jobstate.Skipped
)

// BufferedDueAt is the due time an execution is stored with while it waits, buffered by the
// BufferOne overlap policy, for the end of its job's unfinished execution: no executor takes it
// (nothing is due that late) until the record that ends that execution releases it
// (AttemptRecord.Release), due then. It is BackfillWaiting: a waiting execution is a
// backfill's when its Backfill is set, else the one the overlap policy buffered. Neither kind
// is unfinished for the overlap rule: only the executions that do not wait are.
var BufferedDueAt = BackfillWaiting

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
	// Backfill: one of a backfill's executions (ExecutionBackfill). They run one after the
	// other: all but the running one wait, DueAt BackfillWaiting, until the record that finishes
	// the previous one makes the next due.
	Backfill  bool
	Phase     string    // ActionMain or ActionError
	Attempt   int       // attempts already made in this phase (the next attempt's retryCount)
	DueAt     time.Time // when the next attempt is due
	ClaimedAt time.Time
	// Owner is the replica that took the execution to run it ("" until one does: claims are
	// made unowned) and LeaseUntil when its lease ends unless renewed (zero while unowned). See
	// Leases.
	Owner      string
	LeaseUntil time.Time
}

// JobGetByIDParams selects one job by its ID.
type JobGetByIDParams struct {
	ID int64
}

// JobGetManyParams selects jobs by their IDs.
type JobGetManyParams struct {
	IDs []int64
}

// JobListSchedulableParams pages through the jobs that can fire: State Enabled, collection
// Enabled and a non-zero NextExecutionTime, ordered by ID.
type JobListSchedulableParams struct {
	CollectionID int64 // 0: every collection
	AfterID      int64 // keyset paging: only IDs greater than this
	Limit        int   // 0: no limit
}

// JobListPausedParams pages through the Disabled jobs whose definition holds a resumeAt (SPEC 8:
// a pause that ends by itself), ordered by ID. A driver may return a few more Disabled jobs (one
// whose note says "resumeAt"): the caller reads the definition.
type JobListPausedParams struct {
	AfterID int64 // keyset paging: only IDs greater than this
	Limit   int   // 0: no limit
}

// ExecutionClaim claims one occurrence of a job.
type ExecutionClaim struct {
	// Execution to store (Tag, Scheduled, Missed, Manual, Phase, DueAt, ClaimedAt; JobID is
	// the job claimed). ID and RepeatCount are set by the driver.
	Execution Execution
	// ExpectVersion > 0: a scheduled claim. It succeeds only when the job still has this
	// Version, is Enabled and its collection is Enabled (else ErrConflict); it then sets the
	// job's NextExecutionTime to NextExecutionTime (zero: nothing left). ExpectVersion == 0: a
	// manual run, made whatever the job's version, that leaves NextExecutionTime alone; a manual
	// run (Execution.Manual) of a job that may not run on request as its state and its
	// collection's are in the claim's transaction (jobstate.ManualRunAllowed: a collection
	// disabled since the caller read it) fails with a *RunRefusedError (the collection's row is
	// locked against its change until the commit, before the job's, as a collection's write
	// locks them), and one of a job that has a manual execution stored, not finished (by any
	// replica), or another manual claim earlier in the same call, with a *RunInFlightError: a
	// job runs on request once at a time.
	ExpectVersion     int64
	NextExecutionTime time.Time

	// Overlap is the job's overlap policy (jobstate.OverlapSkip, OverlapBufferOne; "" or Allow:
	// none) for a scheduled claim. With one, the driver locks the job's row, reads whether an
	// execution of the job is unfinished (stored, not buffered) and whether one is buffered, and
	// applies jobstate.Overlap in the claim's transaction: run (as without a policy), buffer (the
	// execution is stored due at BufferedDueAt; Result.Buffered) or skip (as Skip below, with
	// SkipNext as the job's next execution and a message naming the unfinished execution's tag;
	// Result.Skipped).
	Overlap  string
	SkipNext time.Time
	// Skip, when set, claims nothing: the occurrence is skipped. The job (version expected,
	// Claimable) takes NextExecutionTime (zero: nothing left; it is Completed when no execution
	// of it is stored) and a new Version, its ExecutionCount and LastExecutionTime unchanged,
	// and Skip (Status Skipped; JobID, ExecutionID and RepeatCount are the driver's) is stored
	// in its history. The misfire policy Skip records what it skipped this way.
	Skip *HistoryEntry
}

// Special reports whether a claim needs more than a scheduled or manual claim: an overlap
// policy or a skip.
func (c *ExecutionClaim) Special() bool {
	return c.Skip != nil || (c.ExpectVersion > 0 && jobstate.Overlapping(c.Overlap))
}

// ExecutionClaimManyParams claims several occurrences in one transaction. Every successful
// claim increments the job's ExecutionCount, sets its LastExecutionTime to when the attempt
// starts (the later of Now and the execution's DueAt: an occurrence claimed ahead starts when it
// is due; one the overlap rule buffers leaves it alone until its release) and bumps its Version.
//
// Term > 0 fences the claims: they are made only while Term is the leader's term (checked in the
// same transaction), else the call fails with ErrStaleTerm and claims nothing. Term 0: not fenced
// (manual runs, a single process).
type ExecutionClaimManyParams struct {
	Claims []ExecutionClaim
	Now    time.Time
	Term   int64
}

// RunInFlightError refuses a manual claim of a job whose manual run is in flight: Tag is that
// run's execution tag (what the API names in its 409). It wraps ErrConflict.
type RunInFlightError struct {
	Tag string
}

func (e *RunInFlightError) Error() string {
	return "a manual run is in flight (execution tag " + e.Tag + ")"
}

// InFlightTag returns the execution tag of the run in flight.
func (e *RunInFlightError) InFlightTag() string { return e.Tag }

// Unwrap makes the error an ErrConflict.
func (e *RunInFlightError) Unwrap() error { return ErrConflict }

// ExecutionClaimResult is the outcome of one claim: Err is nil, ErrConflict (a
// *RunInFlightError or a *RunRefusedError among them) or ErrNotFound.
type ExecutionClaimResult struct {
	Execution *Execution // the stored execution (nil on error, and when skipped)
	Version   int64      // the job's Version after the claim
	Err       error
	// Skipped: nothing was claimed, the occurrence was skipped and recorded (ExecutionClaim.Skip,
	// or the overlap rule); the job's next execution is the one the claim gave for that case.
	// Buffered: the execution is stored waiting (DueAt BufferedDueAt) for the end of the job's
	// unfinished one.
	Skipped  bool
	Buffered bool
}

// BackfillWaiting is the DueAt of a backfill's execution that waits for the previous one to
// finish: later than any take or hold reaches (and still within what every driver keeps).
var BackfillWaiting = time.Date(2200, 1, 1, 0, 0, 0, 0, time.UTC)

// ExecutionBackfillParams stores a backfill of job JobID (SPEC 8): one execution per occurrence,
// in order (Tag and Scheduled each; the driver sets the rest). In one transaction, when the job
// exists (else ErrNotFound), may run on request as its state and its collection's are in that
// transaction (jobstate.ManualRunAllowed, else a *RunRefusedError: a collection disabled since
// the caller read it stores nothing; the collection's row is locked against its change until the
// commit, so that a disabling that follows finds the backfill and cancels it,
// CollectionPutParams.CancelBackfillOf) and has no backfill execution stored (else a
// *BackfillInFlightError):
// the first execution is due at Now, the others wait (BackfillWaiting); each counts as an
// execution of the job (ExecutionCount, in order, their RepeatCount), LastExecutionTime becomes
// Now and Version is bumped once. When a record finishes a backfill execution (AttemptRecord.Backfill),
// the job's next waiting one (lowest ID) becomes due at the record's Now, in the same
// transaction: a backfill's executions run one after the other, oldest first, and a
// restart or another replica carries on where it was.
type ExecutionBackfillParams struct {
	JobID      int64
	Executions []Execution
	Now        time.Time
}

// ExecutionBackfillResult is a stored backfill: its executions as stored (IDs, RepeatCount,
// DueAt), the job's Version before and after and its ExecutionCount after.
type ExecutionBackfillResult struct {
	Executions []*Execution
	Previous   int64
	Version    int64
	Count      int
}

// BackfillInFlightError refuses a backfill of a job whose previous backfill is unfinished: Tag is
// the execution tag of its first execution still stored. It wraps ErrConflict.
type BackfillInFlightError struct {
	Tag string
}

func (e *BackfillInFlightError) Error() string {
	return "a backfill is unfinished (execution tag " + e.Tag + ")"
}

// Unwrap makes the error an ErrConflict.
func (e *BackfillInFlightError) Unwrap() error { return ErrConflict }

// RunRefusedError refuses a manual run (ExecutionClaim) or a backfill of a job that may not run
// on request (jobstate.ManualRunAllowed) as its state and its collection's are when the run is
// claimed or the backfill stored: final, or in a collection that is not Enabled. It wraps
// ErrConflict.
type RunRefusedError struct {
	State, CollectionState string
}

func (e *RunRefusedError) Error() string {
	return "the job (" + e.State + ") in its collection (" + e.CollectionState + ") does not run on request"
}

// Unwrap makes the error an ErrConflict.
func (e *RunRefusedError) Unwrap() error { return ErrConflict }

// ExecutionListUnfinishedParams pages through the stored executions, ordered by ID.
type ExecutionListUnfinishedParams struct {
	JobID   int64 // > 0: that job's executions only (the dashboard's job page)
	AfterID int64
	Limit   int // 0: no limit
}

// AttemptRecord stores one attempt's history entry and what follows from it.
type AttemptRecord struct {
	ExecutionID int64
	JobID       int64
	// Owner is who made the attempt: the record (a cancellation too) applies only while the
	// execution's owner is Owner ("" for a single process, whose executions nobody takes), else
	// it is Gone and nothing is stored. An attempt made by a replica whose lease expired is thus
	// never recorded: its execution was rescued and runs again, with its tag, under another owner,
	// whose record alone counts.
	Owner   string
	History HistoryEntry // ID is the driver's; JobID and ExecutionID are taken from above
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
	// Release (with Finished): the job's overlap policy buffers occurrences: when no other
	// execution of the job is unfinished after this record (jobstate.BufferedRuns), the one
	// buffered (DueAt BufferedDueAt) is released, due at Now, in the same transaction
	// (AttemptRecordResult.Released).
	Release bool
	// Backfill (with Finished): the execution is a backfill's (Execution.Backfill): the job's
	// next waiting backfill execution (the lowest ID due at BackfillWaiting) becomes due at Now
	// in the same transaction, before any buffered one is considered for Release (so that a
	// buffered occurrence waits for the whole backfill). A record without it releases none.
	Backfill bool
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
	// Released is the buffered execution this record released (AttemptRecord.Release), due now.
	// It starts now: the job's LastExecutionTime becomes Now (a buffered claim left it alone) and
	// its Version is bumped (State, Version and Previous say so even when the record alone would
	// not have touched the job).
	Released *Execution
	// BackfillNext is the ID of the job's backfill execution this record made due (AttemptRecord.
	// Backfill, Finished): 0 when none waited any more (the backfill is over, or its waiting
	// executions were cancelled by the job's disabling or its collection's,
	// JobPutParams.CancelBackfill, CollectionPutParams.CancelBackfillOf).
	BackfillNext int64
}

// ExecutionTakeParams takes up to Limit unowned executions for Owner: those due at or before
// DueBefore, earliest due first, or with IDs set exactly those (whatever their due time). Each
// taken execution's owner becomes Owner and its lease ends Lease after Now. Concurrent takers
// take disjoint sets and never wait for each other (FOR UPDATE SKIP LOCKED).
type ExecutionTakeParams struct {
	Owner     string
	Limit     int
	DueBefore time.Time
	IDs       []int64
	Lease     time.Duration
	Now       time.Time
}

// TakenExecution is an execution as taken, with its job (as JobGetByID reads it).
type TakenExecution struct {
	Execution *Execution
	Job       *Job
}

// ExecutionLeaseRenewParams pushes the lease of Owner's executions IDs to Lease after Now, or
// with Release gives them up (unowned again: another taker may take them at once).
type ExecutionLeaseRenewParams struct {
	Owner   string
	IDs     []int64
	Lease   time.Duration
	Now     time.Time
	Release bool
}

// ExecutionRescueParams re-queues the executions whose lease ended before Now: their owner is
// cleared, so that any replica takes them again; they keep their ID, tag, phase and attempt.
// Term > 0 fences it as ExecutionClaimManyParams.Term does.
type ExecutionRescueParams struct {
	Now  time.Time
	Term int64
}

// HistoryPurgeParams deletes history entries that ended before Before, and those beyond the
// KeepPerJob most recent executions of each job (0: no such limit): executions are numbered by
// the job's ExecutionCount (an entry's RepeatCount), so entries whose RepeatCount is at or below
// ExecutionCount - KeepPerJob go.
type HistoryPurgeParams struct {
	Before     time.Time
	KeepPerJob int
	// Pause, when set, is called after each statement that deleted entries (each deletes a
	// bounded chunk): the caller waits there, so that the purge leaves the store's writer to the
	// fires between its statements. An error ends the purge with it.
	Pause func(ctx context.Context) error
}

// JobPurgeFinalParams deletes Completed and Faulted jobs that reached that state before Before.
type JobPurgeFinalParams struct {
	Before time.Time
}

// Leases share executions among replicas (river's producer and rescuer): claims are made
// unowned; an executor takes a batch (ExecutionTake) sized to its free workers, holds each under a
// lease it renews in batches while the attempts run (ExecutionLeaseRenew), and records them with
// AttemptRecord.Owner; the leader re-queues the executions of owners that stopped renewing
// (ExecutionRescue). A single process needs none of this: it runs what it claims, unowned.
type Leases interface {
	// ExecutionTake returns the executions taken, earliest due first.
	ExecutionTake(ctx context.Context, params ExecutionTakeParams) ([]TakenExecution, error)
	// ExecutionLeaseRenew returns the IDs (of params.IDs) that are no longer Owner's: finished,
	// deleted, or rescued and perhaps taken by another owner. The caller must not record them.
	ExecutionLeaseRenew(ctx context.Context, params ExecutionLeaseRenewParams) ([]int64, error)
	// ExecutionRescue returns how many executions it re-queued.
	ExecutionRescue(ctx context.Context, params ExecutionRescueParams) (int64, error)
}

// Dispatch is what the dispatcher needs from a driver beyond the CRUD methods.
type Dispatch interface {
	JobGetByID(ctx context.Context, params JobGetByIDParams) (*Job, error)
	// JobGetMany returns the jobs of params.IDs that exist, each once, in no particular order (one round
	// trip: the dispatcher reloads a burst of changed jobs with it).
	JobGetMany(ctx context.Context, params JobGetManyParams) ([]*Job, error)
	// JobListSchedulable pages through the jobs that can fire (the scheduler's load): each with
	// its properties as stored in PropertiesJSON, not decoded (Properties is zero).
	JobListSchedulable(ctx context.Context, params JobListSchedulableParams) ([]*Job, error)
	// JobListPaused pages through the Disabled jobs that may have a resumeAt, ordered by ID (the
	// scheduler's resumer reads which do: see JobListPausedParams).
	JobListPaused(ctx context.Context, params JobListPausedParams) ([]*Job, error)

	// ExecutionClaimMany claims occurrences in one transaction; results are in claim order.
	ExecutionClaimMany(ctx context.Context, params ExecutionClaimManyParams) ([]ExecutionClaimResult, error)
	ExecutionListUnfinished(ctx context.Context, params ExecutionListUnfinishedParams) ([]*Execution, error)
	// ExecutionBackfill stores a backfill's executions (see ExecutionBackfillParams).
	ExecutionBackfill(ctx context.Context, params ExecutionBackfillParams) (*ExecutionBackfillResult, error)

	// AttemptRecordMany records attempts in one transaction; results are in record order.
	AttemptRecordMany(ctx context.Context, params AttemptRecordManyParams) ([]AttemptRecordResult, error)

	Leases

	// HistoryPurge and JobPurgeFinal return how many rows they deleted.
	HistoryPurge(ctx context.Context, params HistoryPurgeParams) (int64, error)
	JobPurgeFinal(ctx context.Context, params JobPurgeFinalParams) (int64, error)
}
