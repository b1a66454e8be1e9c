package ui

import (
	"encoding/hex"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/action"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/jobdef"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/jobstate"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/recurrence"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/retry"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"
)

// What the dashboard shows of the extensions of SPEC 8: a job's policies (overlap, misfire,
// retries, deadlines, signing, jitter, excluded dates), its pause (resumeAt, note), its runs as
// they start (jitter) and the trace of each execution. Every value is the rulebook's or the
// engine's reading of the job, so the page says what the dispatcher does.

// TraceIDPlaceholder is what Config.TraceURL holds where an execution's trace id goes.
const TraceIDPlaceholder = "{traceId}"

// policies is what the job page shows of how and when a job runs.
type policies struct {
	Overlap             string
	OverlapDefault      bool
	Misfire             string
	MisfireDefault      bool
	Threshold           string // ISO 8601
	ThresholdDaemon     bool   // the daemon's threshold: the job sets none
	Retry               retryView
	Timeout             string // ISO 8601
	TimeoutDefault      bool
	HasErrorAction      bool
	ErrorRetry          retryView
	ErrorTimeout        string
	ErrorTimeoutDefault bool
	Signed              bool // action.request.signing is set (its secrets are never read here)
	Rotating            bool // with a previous secret: two signatures per request
	Jitter              string
	ExcludeDates        []string // as written, in the rule's zone
}

// retryView is a retry policy in words.
type retryView struct {
	Type        string
	Interval    string
	MaxInterval string // Exponential only
	Count       int
	Default     bool // the job sets none: Azure's default policy
}

// jobPolicies reads a job's policies; misfire is the daemon's misfire threshold.
func jobPolicies(j *store.Job, rule *recurrence.Rule, misfire time.Duration) policies {
	p := &j.Properties
	var out policies
	out.Overlap, out.OverlapDefault = jobstate.OverlapAllow, true
	if c, ok := jobdef.Canonical(p.Overlap, jobstate.OverlapPolicies); ok {
		out.Overlap, out.OverlapDefault = c, false
	}
	m := jobdef.MisfireOf(p, misfire)
	out.Misfire, out.Threshold = m.Policy, isoDuration(m.Threshold)
	out.MisfireDefault = p.Misfire == nil || p.Misfire.Policy == ""
	out.ThresholdDaemon = p.Misfire == nil || p.Misfire.Threshold == ""
	out.Retry = retryOf(jobstate.RetryPolicy(p, jobstate.PhaseMain), p.Action != nil && p.Action.RetryPolicy == nil)
	out.Timeout, out.TimeoutDefault = isoDuration(jobstate.DefaultTimeout), true
	if a := p.Action; a != nil {
		if a.Timeout != "" {
			out.Timeout, out.TimeoutDefault = isoDuration(jobstate.Timeout(&wire.JobErrorAction{Timeout: a.Timeout}, jobstate.DefaultTimeout)), false
		}
		if a.Request != nil && a.Request.Signing != nil {
			out.Signed, out.Rotating = true, a.Request.Signing.PreviousSecret != ""
		}
		if e := a.ErrorAction; e != nil {
			out.HasErrorAction = true
			out.ErrorRetry = retryOf(jobstate.RetryPolicy(p, jobstate.PhaseError), e.RetryPolicy == nil && a.RetryPolicy == nil)
			out.ErrorTimeout = isoDuration(jobstate.Timeout(e, jobstate.DefaultTimeout))
			out.ErrorTimeoutDefault = e.Timeout == ""
		}
	}
	if rule != nil && rule.Jitter() > 0 {
		out.Jitter = isoDuration(rule.Jitter())
	}
	if r := p.Recurrence; r != nil && rule != nil && rule.ExcludedDates() > 0 {
		out.ExcludeDates = r.ExcludeDates
	}
	return out
}

func retryOf(p retry.Policy, isDefault bool) retryView {
	v := retryView{Type: p.Type.String(), Count: p.Count, Default: isDefault}
	if p.Type != retry.None {
		v.Interval = isoDuration(p.Interval)
	}
	if p.Type == retry.Exponential {
		v.MaxInterval = isoDuration(p.MaxInterval)
	}
	return v
}

// isoDuration writes a duration in ISO 8601: in seconds below two minutes (PT30S, PT60S, PT90S),
// else in days (of 24 hours), hours, minutes and seconds (PT5M, PT1H30M, P1DT2H).
func isoDuration(d time.Duration) string {
	if d <= 0 {
		return "PT0S"
	}
	if d < 2*time.Minute {
		return "PT" + strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + "S"
	}
	var b strings.Builder
	b.WriteByte('P')
	if d >= 24*time.Hour {
		b.WriteString(strconv.FormatInt(int64(d/(24*time.Hour)), 10) + "D")
		d %= 24 * time.Hour
	}
	if d == 0 {
		return b.String()
	}
	b.WriteByte('T')
	for _, u := range []struct {
		size time.Duration
		unit string
	}{{time.Hour, "H"}, {time.Minute, "M"}} {
		if d >= u.size {
			b.WriteString(strconv.FormatInt(int64(d/u.size), 10) + u.unit)
			d %= u.size
		}
	}
	if d > 0 {
		s := strconv.FormatFloat(d.Seconds(), 'f', -1, 64)
		b.WriteString(s + "S")
	}
	return b.String()
}

// pause is what a job's page and lists say of its pause: until when (resumeAt, on a Disabled
// job) and why (note, kept whatever the state).
type pause struct {
	Paused   bool      // the job is Disabled
	ResumeAt time.Time // zero: no end set
	Note     string
	Loc      *time.Location // the job's zone
}

func pauseOf(j *store.Job, loc *time.Location) pause {
	p := pause{Paused: j.State == store.JobStateDisabled, Note: j.Properties.Note, Loc: loc}
	if p.Paused {
		if at, ok := jobdef.ResumeAt(&j.Properties); ok {
			p.ResumeAt = at
		}
	}
	return p
}

// Any reports whether there is anything to say.
func (p pause) Any() bool { return p.Paused && !p.ResumeAt.IsZero() || p.Note != "" }

// run is one coming run of a job: when it starts (its scheduled time plus the rulebook's jitter
// offset for the job and the occurrence, jobstate.StartAt) and its jitter window.
type run struct {
	Start     time.Time
	Scheduled time.Time
	WindowEnd time.Time // zero without jitter: the window is [Scheduled, WindowEnd)
}

// Jittered reports whether the run has a jitter window.
func (r run) Jittered() bool { return !r.WindowEnd.IsZero() }

// startOf is the run of an occurrence of j scheduled at, as the dispatcher starts it (the key is
// the job's identity key, as the dispatcher's schedule passes it).
func startOf(j *store.Job, rule *recurrence.Rule, scheduled time.Time) run {
	if rule == nil {
		return run{Start: scheduled, Scheduled: scheduled}
	}
	loc := rule.Location()
	r := run{Start: scheduled.In(loc), Scheduled: scheduled.In(loc)}
	if rule.Jitter() <= 0 || scheduled.IsZero() {
		return r
	}
	r.Start = jobstate.StartAt(rule, j.Key.CanonicalID(), scheduled).In(loc)
	r.WindowEnd = scheduled.Add(rule.Jitter()).In(loc)
	return r
}

// traceRef is the trace of an execution as a history entry shows it.
type traceRef struct {
	ID  string // 32 hex digits; "" when the entry has none (a skipped occurrence)
	URL string // "" when the operator set no --trace-url
}

// traceOf is the trace of the execution a history entry belongs to: the one its attempts carry
// in traceparent (action.ExecutionTrace of the job's resource ID and the tag).
func (s *Server) traceOf(j *store.Job, h *store.HistoryEntry) traceRef {
	if h.Status == store.HistorySkipped {
		return traceRef{}
	}
	return s.traceOfTag(j, h.ExecutionTag)
}

// traceOfTag is the trace of j's execution tagged tag (none without a tag).
func (s *Server) traceOfTag(j *store.Job, tag string) traceRef {
	if tag == "" {
		return traceRef{}
	}
	id, _ := action.ExecutionTrace(j.Key.ID(), tag)
	t := traceRef{ID: hex.EncodeToString(id[:])}
	if s.traceURL != "" {
		t.URL = strings.ReplaceAll(s.traceURL, TraceIDPlaceholder, t.ID)
	}
	return t
}

// historyRow is a history entry with its trace.
type historyRow struct {
	*store.HistoryEntry
	Trace traceRef
}

// Skipped reports whether the entry records occurrences that did not run (overlap or misfire).
func (h historyRow) Skipped() bool { return h.Status == store.HistorySkipped }

// CheckTraceURL checks a trace URL template (Config.TraceURL): "" or an absolute http(s) URL
// holding TraceIDPlaceholder.
func CheckTraceURL(tpl string) error {
	if tpl == "" {
		return nil
	}
	u, err := url.Parse(strings.ReplaceAll(tpl, TraceIDPlaceholder, "0"))
	switch {
	case err != nil:
		return fmt.Errorf("trace URL %q: %w", tpl, err)
	case u.Scheme != "http" && u.Scheme != "https" || u.Host == "":
		return fmt.Errorf("trace URL %q: want an absolute http or https URL", tpl)
	case !strings.Contains(tpl, TraceIDPlaceholder):
		return fmt.Errorf("trace URL %q: want %s where the trace id goes", tpl, TraceIDPlaceholder)
	}
	return nil
}
