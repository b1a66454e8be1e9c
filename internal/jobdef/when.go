package jobdef

import (
	"time"
	"unicode/utf8"

	"github.com/schedulerhq/terraform-provider-scheduler/internal/jobstate"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/recurrence"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/retry"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"
)

// Limits of the extensions that decide when a job runs (SPEC 8).
const (
	MaxNoteChars     = 512
	MinMisfireThresh = time.Second
	MaxMisfireThresh = 7 * 24 * time.Hour
)

// validateWhen checks overlap, misfire, note and the form of resumeAt (CheckResumeAt checks it
// against the clock and the job's state).
func validateWhen(ps *problems, p *wire.JobProperties) {
	ps.enumOptional("overlap", p.Overlap, jobstate.OverlapPolicies)
	if m := p.Misfire; m != nil {
		ps.enumOptional("misfire.policy", m.Policy, jobstate.MisfirePolicies)
		if m.Threshold != "" {
			d, err := retry.ParseInterval(m.Threshold)
			switch {
			case err != nil || (m.Threshold[0] != 'P' && m.Threshold[0] != 'p'):
				ps.add("misfire.threshold", "%q is not an ISO 8601 duration such as PT60S", m.Threshold)
			case d < MinMisfireThresh || d > MaxMisfireThresh:
				ps.add("misfire.threshold", "%s is outside PT1S..P7D", m.Threshold)
			}
		}
	}
	if n := utf8.RuneCountInString(p.Note); n > MaxNoteChars {
		ps.add("note", "is %d characters long; at most %d are allowed", n, MaxNoteChars)
	}
	if p.ResumeAt != "" {
		if _, err := recurrence.ParseTime(p.ResumeAt, nil); err != nil {
			ps.add("resumeAt", "%v", err)
		}
	}
}

// CheckResumeAt checks a job's resumeAt against the state it is written with (Enabled when
// empty) and the clock: only a Disabled job has one, and a new one (not the stored value) is in
// the future. stored is the stored job's resumeAt ("" when none).
func CheckResumeAt(p *wire.JobProperties, stored string, now time.Time) wire.Problems {
	if p == nil || p.ResumeAt == "" {
		return nil
	}
	var ps problems
	if s, _ := CanonicalJobState(p.State); s != StateDisabled {
		if s == "" {
			s = StateEnabled
		}
		ps.add("resumeAt", "is allowed only on a Disabled job (this one is written %s)", s)
	}
	at, err := recurrence.ParseTime(p.ResumeAt, nil)
	if err == nil && p.ResumeAt != stored && !at.After(now) {
		ps.add("resumeAt", "%s is not in the future (now is %s)", at.UTC().Format(time.RFC3339), now.UTC().Format(time.RFC3339))
	}
	return ps.list
}

// ResumeAt is when a job written with these properties resumes by itself; ok is false when it
// has no (valid) resumeAt.
func ResumeAt(p *wire.JobProperties) (time.Time, bool) {
	if p == nil || p.ResumeAt == "" {
		return time.Time{}, false
	}
	at, err := recurrence.ParseTime(p.ResumeAt, nil)
	return at, err == nil
}

// MisfireOf is a job's misfire rule: its policy (RunOnce when not set) and its threshold, else
// the daemon's.
func MisfireOf(p *wire.JobProperties, daemon time.Duration) jobstate.Misfire {
	m := jobstate.Misfire{Policy: jobstate.MisfireRunOnce, Threshold: daemon}
	if p == nil || p.Misfire == nil {
		return m
	}
	if pol, ok := Canonical(p.Misfire.Policy, jobstate.MisfirePolicies); ok {
		m.Policy = pol
	}
	if p.Misfire.Threshold != "" {
		if d, err := retry.ParseInterval(p.Misfire.Threshold); err == nil && d > 0 {
			m.Threshold = d
		}
	}
	return m
}

// OverlapOf is a job's overlap policy in its canonical spelling (jobstate.OverlapPolicies;
// Allow when it has none).
func OverlapOf(p *wire.JobProperties) string {
	if p != nil {
		if pol, ok := Canonical(p.Overlap, jobstate.OverlapPolicies); ok {
			return pol
		}
	}
	return jobstate.OverlapAllow
}
