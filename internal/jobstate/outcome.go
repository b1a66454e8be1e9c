package jobstate

import (
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/internal/retry"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"
)

// Attempt is one attempt's result, as Outcome needs it.
type Attempt struct {
	Success        bool
	Phase          string       // PhaseMain or PhaseError
	Retries        int          // attempts already made in this phase (this attempt's retryCount)
	Policy         retry.Policy // the phase's retry policy (RetryPolicy)
	HasErrorAction bool         // the job has an error action
	End            time.Time    // when the attempt ended
	Tag            string       // the execution's tag: seeds an Exponential policy's jitter
}

// Result names what an attempt leads to.
type Result int

// Results of an attempt.
const (
	// Succeeded: the main action succeeded; the execution is over.
	Succeeded Result = iota + 1
	// Recovered: the error action succeeded after the main action failed; the execution is over
	// and the occurrence is not faulted (it resets the run of consecutive faults).
	Recovered
	// Retried: the phase's retry policy retries the attempt at Next.
	Retried
	// ToErrorAction: the main action failed after its retries; the error action runs at once.
	ToErrorAction
	// FaultedOccurrence: the main action failed after its retries and there is no error action,
	// or the error action failed after its own: the execution is over and the occurrence faulted.
	FaultedOccurrence
)

// Outcome is what an attempt leads to, in the terms of a record.
type Outcome struct {
	Result Result
	// Failure: the main action failed after its retries (the job's failureCount grows).
	Failure bool
	// Finished: the execution is over; Faulted says whether the occurrence faulted.
	Finished, Faulted bool
	// When the execution goes on (Retried, ToErrorAction): its next attempt's time, phase and
	// retry count.
	Next    time.Time
	Phase   string
	Retries int
}

// Outcome decides what an attempt leads to: a success finishes the execution; a failure is
// retried while the phase's policy (Fixed or Exponential) has retries left, Interval (Fixed) or
// Backoff (Exponential) after the attempt ended;
// a main action failed after its retries goes on to the error action when there is one, at once;
// else the occurrence is faulted. A failed attempt that will be retried is recorded as Failed.
func (a Attempt) Outcome() Outcome {
	switch {
	case a.Success && a.Phase == PhaseError:
		return Outcome{Result: Recovered, Finished: true}
	case a.Success:
		return Outcome{Result: Succeeded, Finished: true}
	case a.Policy.Type != retry.None && a.Retries < a.Policy.Count:
		return Outcome{Result: Retried, Next: a.End.Add(Backoff(a.Policy, a.Tag, a.Retries)), Phase: a.Phase, Retries: a.Retries + 1}
	case a.Phase == PhaseMain && a.HasErrorAction:
		return Outcome{Result: ToErrorAction, Failure: true, Next: a.End, Phase: PhaseError}
	default:
		return Outcome{Result: FaultedOccurrence, Failure: a.Phase == PhaseMain, Finished: true, Faulted: true}
	}
}

// RetryPolicy is the retry policy of an execution's phase: the error action's own, else the main
// action's; an invalid one (never stored: the API validates) reads as the default.
func RetryPolicy(p *wire.JobProperties, phase string) retry.Policy {
	var rp *wire.RetryPolicy
	if p != nil && p.Action != nil {
		rp = p.Action.RetryPolicy
		if phase == PhaseError && p.Action.ErrorAction != nil && p.Action.ErrorAction.RetryPolicy != nil {
			rp = p.Action.ErrorAction.RetryPolicy
		}
	}
	pol, problems := retry.Parse("action.retryPolicy", rp)
	if len(problems) > 0 {
		return retry.Default()
	}
	return pol
}
