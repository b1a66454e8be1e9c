package jobstate

import (
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/internal/recurrence"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"
)

// Resume is what enabling a paused job does to its definition (SPEC 8): the end of its pause
// (resumeAt) goes, its note stays. Whoever enables a job calls it: a PATCH of its state, and the
// scheduler when resumeAt comes (Resumed).
func Resume(p *wire.JobProperties) { p.ResumeAt = "" }

// ResumeDue reports whether a job in state, paused until resumeAt (zero: a pause without end),
// is enabled by itself at now: it is Disabled and resumeAt has come.
func ResumeDue(state string, resumeAt, now time.Time) bool {
	return state == Disabled && !resumeAt.IsZero() && !now.Before(resumeAt)
}

// Resumed is a paused job enabled by itself at its resumeAt at (SPEC 8): its definition as
// Resume leaves it, and its next execution and state as enabling it at at makes them (FirstRun:
// the first occurrence from at on, so that nothing missed during the pause is replayed, and
// Completed when nothing is left). p is changed; executed is the job's executionCount.
func Resumed(p *wire.JobProperties, rule *recurrence.Rule, collectionState string, executed int, at time.Time) (next time.Time, state string) {
	Resume(p)
	return FirstRun(rule, Enabled, collectionState, executed, at)
}
