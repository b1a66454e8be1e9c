package provider

import (
	"context"
	"slices"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/schedulerhq/terraform-provider-scheduler/internal/client"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/clock"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/jobdef"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/recurrence"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"
)

var (
	_ resource.ResourceWithConfigure      = (*jobResource)(nil)
	_ resource.ResourceWithImportState    = (*jobResource)(nil)
	_ resource.ResourceWithValidateConfig = (*jobResource)(nil)
	_ resource.ResourceWithModifyPlan     = (*jobResource)(nil)
	_ resource.ResourceWithIdentity       = (*jobResource)(nil)
)

// jobResource is scheduler_job. clock tells "now" to the plan-time validation (the anchor of a
// job without start_time); it runs before the provider is configured.
type jobResource struct {
	data  *providerData
	clock clock.Clock
}

func (r *jobResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_job"
}

func (r *jobResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = jobSchema()
}

func (r *jobResource) IdentitySchema(_ context.Context, _ resource.IdentitySchemaRequest, resp *resource.IdentitySchemaResponse) {
	resp.IdentitySchema = jobIdentitySchema()
}

func (r *jobResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	r.data = providerDataFrom(req.ProviderData, &resp.Diagnostics)
}

// ValidateConfig checks the job with the daemon's own validation (internal/jobdef, which compiles
// the recurrence with internal/recurrence): every problem is reported at its attribute with the
// engine's message. Problems about parts holding values known only after apply are skipped.
func (r *jobResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var m jobModel
	if diags := req.Config.Get(ctx, &m); diags.HasError() {
		return // a whole nested object is unknown: nothing to check yet
	}
	c := r.clock
	if c == nil {
		c = clock.Real{}
	}
	validateJob(&resp.Diagnostics, &m, c)
}

// validateJob reports the problems jobdef.Validate finds in m, at their attributes.
func validateJob(diags *diag.Diagnostics, m *jobModel, c clock.Clock) {
	if m.Action == nil {
		return // required: the schema reports it (or it is unknown)
	}
	p, unknown, forms := m.toWireNoting()
	_, problems := jobdef.Validate(p, c.Now())
	for _, pr := range problems {
		if unknown.covers(pr.Path) || schemaChecked(pr) {
			continue
		}
		at, msg := jobAttrPath(pr.Path, p), pr.Message
		switch {
		case slices.Contains(forms.writeOnly, pr.Path):
			at = writeOnlyPath(at) // the problem is the write-only value's
		case slices.Contains(forms.unset, pr.Path):
			msg += " (or " + lastName(at) + writeOnlySuffix + ")" // either form will do
		}
		addProblem(diags, at, msg)
	}
	for _, s := range forms.sensitive {
		at := jobAttrPath(s, p)
		name := lastName(at)
		diags.AddAttributeWarning(at, "Prefer "+name+writeOnlySuffix+": "+name+" is stored in the state",
			"The value of "+name+" is hidden in plans but written to the Terraform state. With Terraform 1.11+ or "+
				"OpenTofu 1.11+ set "+name+writeOnlySuffix+" instead (never stored), with "+name+versionSuffix+
				" to send a new value: for example from an ephemeral resource.")
	}
}

// schemaChecked reports problems the schema's own validators already report (an enum value that
// is not allowed), so that they are not reported twice.
func schemaChecked(pr wire.Problem) bool {
	if !strings.Contains(pr.Message, " is not one of ") {
		return false
	}
	for _, suffix := range []string{".type", ".method", ".retryType", "frequency", "state"} {
		if strings.HasSuffix(pr.Path, suffix) {
			return true
		}
	}
	return false
}

// planDescription plans recurrence_description from the configured schedule when it is known
// (else it stays unknown until apply), so that plan shows the rule in words.
func (r *jobResource) planDescription(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse, replacing bool) {
	var plan jobModel
	if diags := req.Plan.Get(ctx, &plan); diags.HasError() {
		return // a whole nested object is unknown: the words wait for apply
	}
	p, unknown := plan.toWire()
	for _, u := range unknown {
		if part(u) == "schedule" {
			return
		}
	}
	creating := req.State.Raw.IsNull() || replacing // a replacement is created anew
	if !creating && sameSchedule(ctx, req) {
		var prior types.String // the schedule as it was: its words too
		resp.Diagnostics.Append(req.State.GetAttribute(ctx, path.Root("recurrence_description"), &prior)...)
		if !prior.IsNull() {
			resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root("recurrence_description"), prior)...)
			return
		}
	}
	c := r.clock
	if c == nil {
		c = clock.Real{}
	}
	if words := describe(p.StartTime, p.Recurrence, c.Now(), creating); words != "" {
		resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root("recurrence_description"), words)...)
	}
}

// unchanged reports whether the plan keeps every argument of the state.
func unchanged(ctx context.Context, req resource.ModifyPlanRequest) bool {
	if req.State.Raw.IsNull() {
		return false
	}
	for _, name := range append([]string{"job_collection_id", "name", "start_time", "state", "action", "recurrence"}, whenArguments...) {
		var planned, prior attr.Value
		if req.Plan.GetAttribute(ctx, path.Root(name), &planned).HasError() || req.State.GetAttribute(ctx, path.Root(name), &prior).HasError() {
			return false
		}
		if !planned.Equal(prior) {
			return false
		}
	}
	return true
}

// sameSchedule reports whether the plan keeps the state's start_time and recurrence.
func sameSchedule(ctx context.Context, req resource.ModifyPlanRequest) bool {
	for _, name := range []string{"start_time", "recurrence"} {
		var planned, prior attr.Value
		if req.Plan.GetAttribute(ctx, path.Root(name), &planned).HasError() || req.State.GetAttribute(ctx, path.Root(name), &prior).HasError() {
			return false
		}
		if !planned.Equal(prior) {
			return false
		}
	}
	return true
}

// ModifyPlan replaces a job in a final state (Completed, Faulted) whose configuration changed
// (the API refuses to update it), warning when the new job runs at once; and plans the words of
// the schedule.
func (r *jobResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() {
		return // destroy
	}
	if unchanged(ctx, req) {
		// The attribute modifiers found the configuration equivalent to the state (equivalent.go):
		// no change, so the computed attributes keep their values too.
		resp.Plan.Raw = req.State.Raw.Copy()
		return
	}
	live, replacing := r.planReplacement(ctx, req, resp)
	if resp.Diagnostics.HasError() {
		return
	}
	r.checkResumeAt(ctx, req, resp)
	if resp.Diagnostics.HasError() {
		return
	}
	r.planDescription(ctx, req, resp, replacing)
	if replacing {
		r.warnRunsAgain(ctx, req, resp, live)
	}
	var plan jobModel
	if req.Plan.Get(ctx, &plan).HasError() {
		return
	}
	done := 0
	if !replacing && !req.State.Raw.IsNull() {
		var executions types.Int64
		if !req.State.GetAttribute(ctx, path.Root("status").AtName("execution_count"), &executions).HasError() {
			done = int(executions.ValueInt64())
		}
	}
	c := r.clock
	if c == nil {
		c = clock.Real{}
	}
	checkPlannedLimits(r.data, c, &plan, done, resp)
}

// planReplacement replaces a job in a final state whose configuration changed; it returns the
// job's live state and whether it is replaced.
func (r *jobResource) planReplacement(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) (string, bool) {
	if req.State.Raw.IsNull() {
		return "", false // create
	}
	var status types.Object
	resp.Diagnostics.Append(req.State.GetAttribute(ctx, path.Root("status"), &status)...)
	if resp.Diagnostics.HasError() || status.IsNull() || status.IsUnknown() {
		return "", false
	}
	live, ok := status.Attributes()["state"].(types.String)
	if !ok || (live.ValueString() != jobdef.StateCompleted && live.ValueString() != jobdef.StateFaulted) {
		return "", false
	}
	for _, name := range append([]string{"start_time", "state", "action", "recurrence"}, whenArguments...) {
		var planned, prior attr.Value
		resp.Diagnostics.Append(req.Plan.GetAttribute(ctx, path.Root(name), &planned)...)
		resp.Diagnostics.Append(req.State.GetAttribute(ctx, path.Root(name), &prior)...)
		if resp.Diagnostics.HasError() {
			return "", false
		}
		if !planned.Equal(prior) {
			resp.RequiresReplace = append(resp.RequiresReplace, path.Root(name))
		}
	}
	return live.ValueString(), len(resp.RequiresReplace) > 0
}

// warnRunsAgain warns that the job replacing a final one runs at once: its start_time has passed
// (or it has none), so the new job runs as soon as it is created, although the old one already ran.
func (r *jobResource) warnRunsAgain(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse, live string) {
	var plan jobModel
	if req.Plan.Get(ctx, &plan).HasError() {
		return
	}
	p, unknown := plan.toWire()
	if slices.ContainsFunc(unknown, func(u string) bool { return part(u) == "schedule" }) {
		return // the schedule is known only after apply
	}
	c := r.clock
	if c == nil {
		c = clock.Real{}
	}
	rule, err := recurrence.Compile(p.StartTime, p.Recurrence, c.Now())
	if err != nil {
		return
	}
	if _, immediate, ok := rule.First(c.Now()); !ok || !immediate {
		return
	}
	why := "Its start_time is in the past"
	if p.StartTime == "" {
		why = "It has no start_time"
	}
	resp.Diagnostics.AddWarning("Replacing the "+live+" job "+plan.Name.ValueString()+" runs it again now",
		"The job is "+live+", so the API cannot update it: this plan replaces it. "+why+
			", so the new job runs once, immediately, when it is created, although the old one already ran. "+
			"To avoid the run, set start_time to a future time (or remove the job from the configuration).")
}

func (r *jobResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	c := clientFor(r.data, &resp.Diagnostics)
	if c == nil {
		return
	}
	var plan, config jobModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(req.Config.Get(ctx, &config)...)
	if resp.Diagnostics.HasError() {
		return
	}
	copyWriteOnly(&plan, &config) // the plan never holds them
	coll, err := client.ParseCollectionID(plan.JobCollectionID.ValueString())
	if err != nil {
		resp.Diagnostics.AddAttributeError(path.Root("job_collection_id"), "Set job_collection_id to a job collection's id", err.Error())
		return
	}
	id := client.JobID{CollectionID: coll, Name: plan.Name.ValueString()}
	if _, err := c.JobGet(ctx, id); err == nil {
		resp.Diagnostics.AddError("Import the existing job instead of creating it",
			"A job "+id.String()+" already exists. Import it with\n  terraform import <address> "+id.String()+"\nor choose another name.")
		return
	} else if !client.IsNotFound(err) {
		apiError(&resp.Diagnostics, "checking whether job "+id.String()+" exists", err)
		return
	}
	if state, ok := putJob(ctx, c, id, &plan, "creating", "created", &resp.Diagnostics); ok {
		resp.Diagnostics.Append(resp.State.Set(ctx, state)...)
		setIdentity(ctx, resp.Identity, jobIdentity(id), &resp.Diagnostics)
	}
}

// putJob sends the planned job and returns the state to record; doing and done ("creating",
// "created") name the step in the error and the log.
func putJob(ctx context.Context, c *client.Client, id client.JobID, plan *jobModel, doing, done string, diags *diag.Diagnostics) (*jobModel, bool) {
	props, _ := plan.toWire()
	out, err := c.JobPut(ctx, id, &wire.JobDefinition{Properties: props})
	if err != nil {
		apiError(diags, doing+" job "+id.String(), err)
		return nil, false
	}
	var state jobModel
	state.fromWire(id, out, plan)
	tflog.Info(ctx, done+" job", map[string]any{"id": id.String()})
	return &state, true
}

// jobIDFromState parses the id recorded in state.
func jobIDFromState(prior *jobModel, diags *diag.Diagnostics) (client.JobID, bool) {
	id, err := client.ParseJobID(prior.ID.ValueString())
	if err != nil {
		diags.AddAttributeError(path.Root("id"), "Re-import the job: its id in state is invalid", err.Error())
		return client.JobID{}, false
	}
	return id, true
}

func (r *jobResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	c := clientFor(r.data, &resp.Diagnostics)
	if c == nil {
		return
	}
	var prior jobModel
	resp.Diagnostics.Append(req.State.Get(ctx, &prior)...)
	if resp.Diagnostics.HasError() {
		return
	}
	id, ok := jobIDFromState(&prior, &resp.Diagnostics)
	if !ok {
		return
	}
	out, err := c.JobGet(ctx, id)
	if client.IsNotFound(err) {
		tflog.Info(ctx, "job deleted outside Terraform: removed from state", map[string]any{"id": id.String()})
		resp.State.RemoveResource(ctx) // deleted outside Terraform (or with its collection): plan its creation
		// The framework wants an identity even then (a CLI without identities sends none).
		setIdentity(ctx, resp.Identity, jobIdentity(id), &resp.Diagnostics)
		return
	}
	if err != nil {
		apiError(&resp.Diagnostics, "reading job "+id.String(), err)
		return
	}
	var state jobModel
	if prior.Action == nil { // just imported: only the id is known
		state.importedFromWire(id, out)
	} else {
		state.fromWire(id, out, &prior)
		state.keepEndedPause(&prior, out.Properties, r.now())
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
	setIdentity(ctx, resp.Identity, jobIdentity(id), &resp.Diagnostics)
}

func (r *jobResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	c := clientFor(r.data, &resp.Diagnostics)
	if c == nil {
		return
	}
	var plan, config, prior jobModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(req.Config.Get(ctx, &config)...)
	resp.Diagnostics.Append(req.State.Get(ctx, &prior)...)
	if resp.Diagnostics.HasError() {
		return
	}
	copyWriteOnly(&plan, &config) // the plan never holds them
	id, ok := jobIDFromState(&prior, &resp.Diagnostics)
	if !ok {
		return
	}
	send, ended := sendEndedPause(&plan, &prior, r.now())
	if state, ok := putJob(ctx, c, id, &send, "updating", "updated", &resp.Diagnostics); ok {
		if ended { // the state keeps the configured pause, which has ended
			state.State, state.ResumeAt = plan.State, plan.ResumeAt
		}
		resp.Diagnostics.Append(resp.State.Set(ctx, state)...)
		setIdentity(ctx, resp.Identity, jobIdentity(id), &resp.Diagnostics)
	}
}

func (r *jobResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	c := clientFor(r.data, &resp.Diagnostics)
	if c == nil {
		return
	}
	var prior jobModel
	resp.Diagnostics.Append(req.State.Get(ctx, &prior)...)
	if resp.Diagnostics.HasError() {
		return
	}
	id, ok := jobIDFromState(&prior, &resp.Diagnostics)
	if !ok {
		return
	}
	if err := c.JobDelete(ctx, id); err != nil && !client.IsNotFound(err) {
		apiError(&resp.Diagnostics, "deleting job "+id.String(), err)
	}
}

// ImportState takes the job's ARM id or its identity.
func (r *jobResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	id, err := importedJobID(ctx, req, &resp.Diagnostics)
	if err != nil {
		resp.Diagnostics.AddError("Import the job by its ARM id or its identity (subscription, resource_group, job_collection, name)", err.Error())
		return
	}
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), id.String())...)
	setIdentity(ctx, resp.Identity, jobIdentity(id), &resp.Diagnostics)
}
