package provider

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/schedulerhq/terraform-provider-scheduler/internal/jobdef"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/jobstate"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/recurrence"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"
)

// The attributes that decide when a job runs (SPEC 8): overlap, misfire { policy, threshold },
// resume_at and note on the job, jitter and exclude_dates in its recurrence. Each is absent
// unless set (a job that sets none is sent, read and planned exactly as before), and each is
// checked at plan time by the daemon's own rules (jobdef.Validate, the recurrence engine and
// jobdef.CheckResumeAt), which name the allowed values. Unlike Azure's fields, which the daemon
// may fill with defaults, an extension the API holds but the configuration leaves out is drift.

type misfireModel struct {
	Policy    types.String `tfsdk:"policy"`
	Threshold types.String `tfsdk:"threshold"`
}

// whenAttributes are the job's own attributes of when it runs.
func whenAttributes() map[string]schema.Attribute {
	return map[string]schema.Attribute{
		"overlap": schema.StringAttribute{
			Optional:      true,
			PlanModifiers: []planmodifier.String{samePlan{enumType{}}}, // another case plans no change
			MarkdownDescription: "What happens to an occurrence that falls due while the job's previous execution (its attempts, retries " +
				"and error action) is unfinished: `" + strings.Join(jobstate.OverlapPolicies, "`, `") + "` (any case). `Allow` " +
				"(the default, Azure's behaviour) runs it anyway; `Skip` skips it, recording a `Skipped` history entry naming the " +
				"running execution; `BufferOne` keeps at most one waiting and runs it when the previous one ends.",
		},
		"resume_at": schema.StringAttribute{
			Optional: true,
			MarkdownDescription: "ISO 8601 date-time (UTC without an offset) at which a `Disabled` job becomes `Enabled` by itself, " +
				"without replaying what it missed. Only with `state = \"Disabled\"`, and in the future when it is set or changed. " +
				"Once it has passed and the job is enabled again, the plan shows no change (the pause ended as configured); " +
				"a later update then sends the job `Enabled`.",
		},
		"note": schema.StringAttribute{
			Optional:            true,
			MarkdownDescription: "Why the job is paused, at most 512 characters. Kept when the job is enabled or disabled.",
		},
	}
}

// misfireBlock is the job's misfire policy.
func misfireBlock() schema.SingleNestedBlock {
	return schema.SingleNestedBlock{
		MarkdownDescription: "What happens to occurrences missed by more than `threshold` (the daemon was stopped or overloaded). Without it: `RunOnce` with the daemon's threshold.",
		Attributes: map[string]schema.Attribute{
			"policy": schema.StringAttribute{
				Optional:      true,
				PlanModifiers: []planmodifier.String{samePlan{enumType{}}},
				MarkdownDescription: "`" + strings.Join(jobstate.MisfirePolicies, "`, `") + "` (any case); default `RunOnce`. " +
					"`RunOnce` coalesces the missed occurrences into one execution (Azure's rule); `Skip` records them as skipped " +
					"and runs the next one when due; `RunAll` runs each, oldest first, at most 100.",
			},
			"threshold": schema.StringAttribute{
				Optional:            true,
				PlanModifiers:       []planmodifier.String{samePlan{durationType{}}},
				MarkdownDescription: "ISO 8601 duration from `PT1S` to `P7D`: how late an occurrence may start before it counts as missed; default the daemon's (60 seconds).",
			},
		},
	}
}

// whenRecurrenceAttributes are the recurrence's attributes of when it runs (also in the
// scheduler_occurrences data source).
func whenRecurrenceAttributes(attrs map[string]schema.Attribute) {
	attrs["jitter"] = schema.StringAttribute{
		Optional:      true,
		PlanModifiers: []planmodifier.String{samePlan{durationType{}}},
		MarkdownDescription: "ISO 8601 duration, at most `PT12H` and less than the rule's shortest period: each occurrence starts at " +
			"its scheduled time plus an offset in [0, jitter) derived from the job's id and the occurrence, the same on every " +
			"replica and in every preview (`x-ms-scheduler-expected-execution-time` stays the scheduled time). Spreads jobs that share an instant.",
	}
	attrs["exclude_dates"] = schema.ListAttribute{
		Optional:    true,
		ElementType: types.StringType,
		MarkdownDescription: "Up to 1,000 dates `YYYY-MM-DD`, no repeats: occurrences that fall on them in the rule's zone do not run " +
			"and do not count toward `count` (holidays). Keep a shared list in a `locals` block.",
	}
}

// whenToWire sets the extensions of m on p.
func (m *jobModel) whenToWire(c conv, p *wire.JobProperties) {
	p.Overlap = canonical(c.str(m.Overlap, "overlap"), jobstate.OverlapPolicies)
	p.ResumeAt = c.str(m.ResumeAt, "resumeAt")
	p.Note = c.str(m.Note, "note")
	if mf := m.Misfire; mf != nil {
		p.Misfire = &wire.JobMisfire{
			Policy:    canonical(c.str(mf.Policy, "misfire.policy"), jobstate.MisfirePolicies),
			Threshold: c.str(mf.Threshold, "misfire.threshold"),
		}
		if *p.Misfire == (wire.JobMisfire{}) {
			p.Misfire = nil // an empty block is no policy
		}
	}
}

// whenRecurrenceToWire sets the recurrence's extensions of r on out.
func (r *recurrenceModel) whenToWire(c conv, out *wire.JobRecurrence) {
	out.Jitter = c.str(r.Jitter, "recurrence.jitter")
	out.ExcludeDates = c.strs(r.ExcludeDates, "recurrence.excludeDates")
}

// whenFromWire reads the extensions of the API's answer into m; prior is the plan or state
// (fresh: none, an import).
func (m *jobModel) whenFromWire(p *wire.JobProperties, prior *jobModel, fresh bool) {
	m.Overlap = keepExtension(prior.Overlap, p.Overlap, sameFold)
	m.ResumeAt = keepExtension(prior.ResumeAt, p.ResumeAt, sameInstant(time.UTC))
	m.Note = keepExtension(prior.Note, p.Note, sameString)
	m.Misfire = nil
	if mf := p.Misfire; mf != nil && *mf != (wire.JobMisfire{}) {
		pm := prior.Misfire
		if pm == nil {
			pm = &misfireModel{Policy: types.StringNull(), Threshold: types.StringNull()}
		}
		m.Misfire = &misfireModel{
			Policy:    keepExtension(pm.Policy, mf.Policy, sameFold),
			Threshold: keepExtension(pm.Threshold, mf.Threshold, sameDuration),
		}
	} else if !fresh && prior.Misfire != nil && prior.Misfire.Policy.IsNull() && prior.Misfire.Threshold.IsNull() {
		m.Misfire = prior.Misfire // an empty block written by the user
	}
}

// whenFromWire reads the recurrence's extensions of the answer into out.
func (out *recurrenceModel) whenFromWire(r *wire.JobRecurrence, prior *recurrenceModel) {
	out.Jitter = keepExtension(prior.Jitter, r.Jitter, sameDuration)
	out.ExcludeDates = keepDates(prior.ExcludeDates, r.ExcludeDates)
}

// keepExtension keeps the prior value when it means the same as the answer, else takes the
// answer: unlike keepString, a value the configuration leaves out but the API holds (set outside
// Terraform) is drift, since the daemon never sets one by default.
func keepExtension(prior types.String, api string, eq func(a, b string) bool) types.String {
	if api == "" {
		if known(prior) && prior.ValueString() == "" {
			return prior
		}
		return types.StringNull()
	}
	if known(prior) && eq(prior.ValueString(), api) {
		return prior
	}
	return types.StringValue(api)
}

// keepDates keeps the prior list of excluded dates when it holds the same dates as the answer
// (in any order), else takes the answer, which may be drift.
func keepDates(prior types.List, api []string) types.List {
	if len(api) == 0 {
		if known(prior) && len(prior.Elements()) == 0 {
			return prior
		}
		return types.ListNull(types.StringType)
	}
	if known(prior) {
		var p []string
		for _, e := range prior.Elements() {
			s, ok := e.(types.String)
			if !ok || !known(s) {
				p = nil
				break
			}
			p = append(p, s.ValueString())
		}
		a := slices.Clone(api)
		slices.Sort(p)
		slices.Sort(a)
		if p != nil && slices.Equal(p, a) {
			return prior
		}
	}
	elems := make([]attr.Value, len(api))
	for i, d := range api {
		elems[i] = types.StringValue(d)
	}
	return types.ListValueMust(types.StringType, elems)
}

// pauseEnded reports whether the job's pause, as prior (the plan or state) configures it, has
// ended by itself: prior is Disabled with a resume_at that has passed at now, and the API holds the
// job Enabled without one. The configuration is then what happened, not drift.
func pauseEnded(prior *jobModel, live string, api *wire.JobProperties, now time.Time) bool {
	if prior == nil || live != jobdef.StateEnabled || api.ResumeAt != "" || !known(prior.ResumeAt) || !known(prior.State) {
		return false
	}
	if !strings.EqualFold(prior.State.ValueString(), jobdef.StateDisabled) {
		return false
	}
	at, err := recurrence.ParseTime(prior.ResumeAt.ValueString(), nil)
	return err == nil && !at.After(now)
}

// whenArguments are the root arguments of when a job runs, compared by the plan's checks of
// what changed.
var whenArguments = []string{"overlap", "misfire", "resume_at", "note"}

// checkResumeAt reports, at plan time, a resume_at the API would refuse (jobdef.CheckResumeAt):
// on a job not written Disabled, or, when it is new or changed (not the state's), not in the
// future. An unchanged resume_at that has passed is fine: the pause has ended or ends now.
func (r *jobResource) checkResumeAt(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	var planned, state types.String
	if req.Plan.GetAttribute(ctx, path.Root("resume_at"), &planned).HasError() || !known(planned) {
		return
	}
	var jobState enumValue
	if req.Plan.GetAttribute(ctx, path.Root("state"), &jobState).HasError() || jobState.IsUnknown() {
		return
	}
	if !req.State.Raw.IsNull() {
		_ = req.State.GetAttribute(ctx, path.Root("resume_at"), &state)
	}
	p := &wire.JobProperties{State: canonical(str(jobState), jobWritableStates), ResumeAt: planned.ValueString()}
	for _, pr := range jobdef.CheckResumeAt(p, str(state), r.now()) {
		addProblem(&resp.Diagnostics, jobAttrPath(pr.Path, p), pr.Message)
	}
}

// now is the resource's clock's time.
func (r *jobResource) now() time.Time {
	if r.clock == nil {
		return time.Now()
	}
	return r.clock.Now()
}

// keepEndedPause keeps the configured state and resume_at in state once the pause they
// configure has ended by itself (pauseEnded): what the configuration asked for happened.
func (m *jobModel) keepEndedPause(prior *jobModel, api *wire.JobProperties, now time.Time) {
	if api == nil {
		return
	}
	live, _ := jobdef.CanonicalJobState(api.State)
	if pauseEnded(prior, live, api, now) {
		m.State, m.ResumeAt = prior.State, prior.ResumeAt
	}
}

// sendEndedPause is what an update sends for plan when the pause it configures has ended by
// itself (the state shows the job Enabled again, and resume_at is unchanged and passed): the job
// Enabled without resumeAt, since the daemon refuses a resumeAt in the past that is not the one
// it holds. It returns the plan to send and whether it differs from plan.
func sendEndedPause(plan, prior *jobModel, now time.Time) (jobModel, bool) {
	live, ok := prior.Status.Attributes()["state"].(types.String)
	if !ok || !known(plan.ResumeAt) || !plan.ResumeAt.Equal(prior.ResumeAt) {
		return *plan, false
	}
	api := &wire.JobProperties{State: live.ValueString()}
	if !pauseEnded(plan, live.ValueString(), api, now) {
		return *plan, false
	}
	send := *plan
	send.State, send.ResumeAt = enumOf(jobdef.StateEnabled), types.StringNull()
	return send, true
}
