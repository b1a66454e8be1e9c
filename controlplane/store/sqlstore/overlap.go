package sqlstore

import (
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/jobstate"
)

// SpecialClaim is what a claim that store.ExecutionClaim.Special says needs more than a scheduled
// claim comes to, given the job's executions as its driver read them in the claim's transaction
// (the tag of its oldest unfinished execution, "" for none, and whether one waits, buffered):
// the skip entry to record and the job's next execution time, or the execution to store and
// whether it waits (buffered). The overlap rule (jobstate.Overlap) decides; both drivers call this.
type SpecialClaim struct {
	Skip      *store.HistoryEntry
	Next      time.Time
	Execution store.Execution
	Buffered  bool
}

// DecideSpecialClaim decides a special claim at now (see SpecialClaim).
func DecideSpecialClaim(c store.ExecutionClaim, running string, waiting bool, now time.Time) SpecialClaim {
	d := SpecialClaim{Skip: c.Skip, Next: c.NextExecutionTime, Execution: c.Execution}
	if d.Execution.Phase == "" {
		d.Execution.Phase = store.ActionMain
	}
	if d.Skip != nil {
		return d
	}
	switch jobstate.Overlap(c.Overlap, running != "", waiting) {
	case jobstate.OverlapSkipIt:
		e := d.Execution
		d.Skip = &store.HistoryEntry{ExecutionTag: e.Tag, ActionName: store.ActionMain, Status: store.HistorySkipped,
			Message: jobstate.OverlapSkippedMessage(c.Overlap, running), ExpectedExecutionTime: e.Scheduled, StartTime: now, EndTime: now}
		d.Next = c.SkipNext
	case jobstate.OverlapBuffer:
		// It has not started: it waits until its release, and the job's lastExecutionTime stays.
		d.Buffered = true
		d.Execution.DueAt = store.BufferedDueAt
	case jobstate.OverlapRun:
	}
	return d
}
