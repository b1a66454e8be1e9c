package jobstate

// Record is what a record of an attempt says about its occurrence (an Outcome's flags).
type Record struct {
	Failure  bool // the main action failed after its retries
	Finished bool // the execution is over
	Faulted  bool // with Finished: the occurrence faulted
	// FaultedAfter > 0: consecutive faulted occurrences that make a job Faulted.
	FaultedAfter int
}

// RecordedJob is a job as a record finds it.
type RecordedJob struct {
	State             string
	ConsecutiveFaults int
	Scheduled         bool // it has a next execution
	OtherExecutions   bool // executions of it other than the record's are stored
}

// Recorded is what a record does to its job.
type Recorded struct {
	// Changed: the record changes the job (else the job row is left as it is, its version too).
	Changed bool
	// What the job's failureCount and faultedCount grow by.
	Failures, Faults int
	// ConsecutiveFaults after the record.
	ConsecutiveFaults int
	// State after the record; Final when the record made it final (Completed or Faulted: its next
	// execution is cleared and it becomes final now).
	State string
	Final bool
}

// Apply is the rule of a record: a failure counts (failureCount), a faulted occurrence counts
// (faultedCount, consecutive faults), a good one resets the run of consecutive faults. When the
// execution finished, an Enabled job becomes Faulted when its consecutive faults reach
// FaultedAfter, else Completed when nothing is scheduled and no other execution of it is left.
//
// A record that neither fails, faults, nor finishes an execution of a job with consecutive faults
// or nothing scheduled changes nothing: most records are that one (a good occurrence of a job with
// more to run), and the store skips rewriting the job. Each driver evaluates this rule inside its
// record statement (the SQL named as this function's twin); the conformance suite pins both to
// RecordTable.
func (r Record) Apply(j RecordedJob) Recorded {
	faulted := r.Finished && r.Faulted
	out := Recorded{State: j.State, ConsecutiveFaults: j.ConsecutiveFaults}
	out.Changed = r.Failure || faulted || (r.Finished && (j.ConsecutiveFaults != 0 || !j.Scheduled))
	if !out.Changed {
		return out
	}
	if r.Failure {
		out.Failures = 1
	}
	switch {
	case faulted:
		out.Faults = 1
		out.ConsecutiveFaults++
	case r.Finished:
		out.ConsecutiveFaults = 0
	}
	out.State, out.Final = r.Settle(j.State, out.ConsecutiveFaults, j.Scheduled, j.OtherExecutions)
	return out
}

// faults reports whether the record makes its job Faulted, consecutiveFaults being the job's
// count after the record.
func (r Record) faults(state string, consecutiveFaults int) bool {
	return r.Finished && r.Faulted && state == Enabled && r.FaultedAfter > 0 && consecutiveFaults >= r.FaultedAfter
}

// AsksOtherExecutions reports whether Settle reads otherExecutions: only for a finished execution
// of an Enabled job with nothing scheduled that the record does not fault, so that a store counts
// the job's other executions only then.
func (r Record) AsksOtherExecutions(state string, consecutiveFaults int, scheduled bool) bool {
	return r.Finished && state == Enabled && !scheduled && !r.faults(state, consecutiveFaults)
}

// Settle is the state a record leaves its job in once its counters are applied (Apply's last
// step, for a store that applies the counters itself): consecutiveFaults is the job's count after
// the record, scheduled whether it has a next execution, otherExecutions whether executions of it
// other than the record's are left. final reports that the record made the job final (its next
// execution is cleared, it becomes final now).
func (r Record) Settle(state string, consecutiveFaults int, scheduled, otherExecutions bool) (newState string, final bool) {
	switch {
	case r.faults(state, consecutiveFaults):
		return Faulted, true
	case r.AsksOtherExecutions(state, consecutiveFaults, scheduled) && !otherExecutions:
		return Completed, true
	}
	return state, false
}

// RecordCase is one row of RecordTable.
type RecordCase struct {
	Name   string
	Record Record
	Job    RecordedJob
	Want   Recorded
}

// RecordTable pins Record.Apply: the rule's table test runs it, and the store's conformance suite
// drives both drivers through the same rows, so that the SQL twins decide as the rule does.
var RecordTable = []RecordCase{
	{"good occurrence, more to run: untouched",
		Record{Finished: true, FaultedAfter: 10}, RecordedJob{State: Enabled, Scheduled: true},
		Recorded{State: Enabled}},
	{"retry scheduled: untouched",
		Record{FaultedAfter: 10}, RecordedJob{State: Enabled, ConsecutiveFaults: 2, Scheduled: true},
		Recorded{State: Enabled, ConsecutiveFaults: 2}},
	{"good occurrence resets consecutive faults",
		Record{Finished: true, FaultedAfter: 10}, RecordedJob{State: Enabled, ConsecutiveFaults: 3, Scheduled: true},
		Recorded{Changed: true, State: Enabled}},
	{"main action failed, error action next",
		Record{Failure: true, FaultedAfter: 10}, RecordedJob{State: Enabled, ConsecutiveFaults: 1, Scheduled: true},
		Recorded{Changed: true, Failures: 1, ConsecutiveFaults: 1, State: Enabled}},
	{"faulted occurrence counts",
		Record{Failure: true, Finished: true, Faulted: true, FaultedAfter: 10}, RecordedJob{State: Enabled, ConsecutiveFaults: 1, Scheduled: true},
		Recorded{Changed: true, Failures: 1, Faults: 1, ConsecutiveFaults: 2, State: Enabled}},
	{"error action failed: faulted, no new failure",
		Record{Finished: true, Faulted: true, FaultedAfter: 10}, RecordedJob{State: Enabled, Scheduled: true},
		Recorded{Changed: true, Faults: 1, ConsecutiveFaults: 1, State: Enabled}},
	{"error action succeeded: resets",
		Record{Finished: true, FaultedAfter: 10}, RecordedJob{State: Enabled, ConsecutiveFaults: 4, Scheduled: true},
		Recorded{Changed: true, State: Enabled}},
	{"faults reach FaultedAfter: Faulted",
		Record{Failure: true, Finished: true, Faulted: true, FaultedAfter: 3}, RecordedJob{State: Enabled, ConsecutiveFaults: 2, Scheduled: true},
		Recorded{Changed: true, Failures: 1, Faults: 1, ConsecutiveFaults: 3, State: Faulted, Final: true}},
	{"faults below FaultedAfter",
		Record{Failure: true, Finished: true, Faulted: true, FaultedAfter: 3}, RecordedJob{State: Enabled, ConsecutiveFaults: 1, Scheduled: true},
		Recorded{Changed: true, Failures: 1, Faults: 1, ConsecutiveFaults: 2, State: Enabled}},
	{"FaultedAfter 0 never faults the job",
		Record{Failure: true, Finished: true, Faulted: true}, RecordedJob{State: Enabled, ConsecutiveFaults: 50, Scheduled: true},
		Recorded{Changed: true, Failures: 1, Faults: 1, ConsecutiveFaults: 51, State: Enabled}},
	{"last execution ends: Completed",
		Record{Finished: true, FaultedAfter: 10}, RecordedJob{State: Enabled},
		Recorded{Changed: true, State: Completed, Final: true}},
	{"last execution faulted: Completed",
		Record{Failure: true, Finished: true, Faulted: true, FaultedAfter: 10}, RecordedJob{State: Enabled},
		Recorded{Changed: true, Failures: 1, Faults: 1, ConsecutiveFaults: 1, State: Completed, Final: true}},
	{"nothing scheduled, another execution left: Enabled",
		Record{Finished: true, FaultedAfter: 10}, RecordedJob{State: Enabled, OtherExecutions: true},
		Recorded{Changed: true, State: Enabled}},
	{"faulted beats completed",
		Record{Finished: true, Faulted: true, FaultedAfter: 1}, RecordedJob{State: Enabled},
		Recorded{Changed: true, Faults: 1, ConsecutiveFaults: 1, State: Faulted, Final: true}},
	{"disabled job with nothing scheduled stays Disabled",
		Record{Finished: true, FaultedAfter: 10}, RecordedJob{State: Disabled},
		Recorded{Changed: true, State: Disabled}},
	{"disabled job does not fault",
		Record{Failure: true, Finished: true, Faulted: true, FaultedAfter: 1}, RecordedJob{State: Disabled},
		Recorded{Changed: true, Failures: 1, Faults: 1, ConsecutiveFaults: 1, State: Disabled}},
	{"failure without finishing never completes",
		Record{Failure: true, FaultedAfter: 10}, RecordedJob{State: Enabled},
		Recorded{Changed: true, Failures: 1, State: Enabled}},
}
