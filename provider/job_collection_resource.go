package provider

import (
	"context"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/schedulerhq/terraform-provider-scheduler/internal/arm"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/client"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/jobdef"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"
)

var (
	_ resource.ResourceWithConfigure      = (*jobCollectionResource)(nil)
	_ resource.ResourceWithImportState    = (*jobCollectionResource)(nil)
	_ resource.ResourceWithValidateConfig = (*jobCollectionResource)(nil)
	_ resource.ResourceWithIdentity       = (*jobCollectionResource)(nil)
	_ resource.ResourceWithModifyPlan     = (*jobCollectionResource)(nil)
)

// Enum values in Azure's spelling; the schema accepts them in any case.
var (
	skuNames          = []string{jobdef.SkuFree, jobdef.SkuStandard, jobdef.SkuP10Premium, jobdef.SkuP20Premium}
	collectionStates  = []string{jobdef.StateEnabled, jobdef.StateDisabled, jobdef.StateSuspended}
	frequencies       = jobdef.Frequencies()
	weekDayNames      = jobdef.WeekDays()
	jobWritableStates = []string{jobdef.StateEnabled, jobdef.StateDisabled}
	actionTypes       = jobdef.ActionTypes()
	httpMethods       = jobdef.HTTPMethods()
	retryTypes        = jobdef.RetryTypes()
)

func newJobCollectionResource() resource.Resource { return &jobCollectionResource{} }

type jobCollectionResource struct {
	data *providerData
}

type jobCollectionModel struct {
	ID            types.String `tfsdk:"id"`
	Name          types.String `tfsdk:"name"`
	ResourceGroup types.String `tfsdk:"resource_group"`
	Location      types.String `tfsdk:"location"`
	Sku           enumValue    `tfsdk:"sku"`
	State         enumValue    `tfsdk:"state"`
	Quota         *quotaModel  `tfsdk:"quota"`
	Tags          types.Map    `tfsdk:"tags"`
	ForceDestroy  types.Bool   `tfsdk:"force_destroy"`
}

type quotaModel struct {
	MaxJobCount      types.Int64         `tfsdk:"max_job_count"`
	MaxJobOccurrence types.Int64         `tfsdk:"max_job_occurrence"`
	MaxRecurrence    *maxRecurrenceModel `tfsdk:"max_recurrence"`
}

type maxRecurrenceModel struct {
	Frequency enumValue   `tfsdk:"frequency"`
	Interval  types.Int64 `tfsdk:"interval"`
}

func (r *jobCollectionResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_job_collection"
}

func (r *jobCollectionResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = jobCollectionSchema()
}

func jobCollectionSchema() schema.Schema {
	replace := []planmodifier.String{stringplanmodifier.RequiresReplace()}
	return schema.Schema{
		MarkdownDescription: "A job collection: a group of jobs sharing a SKU, a state and quotas " +
			"(Azure Scheduler `Microsoft.Scheduler/jobCollections`). Deleting it deletes its jobs: the jobs this configuration " +
			"manages are destroyed first; any other job stops the destroy unless `force_destroy` is set.",
		Attributes: map[string]schema.Attribute{
			"id": schema.StringAttribute{
				Computed:            true,
				MarkdownDescription: "The ARM id: `/subscriptions/{subscription}/resourceGroups/{resource_group}/providers/Microsoft.Scheduler/jobCollections/{name}`.",
				PlanModifiers:       []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
			},
			"name": schema.StringAttribute{
				Required:            true,
				MarkdownDescription: "Name of the collection, unique in its resource group. Changing it replaces the collection.",
				PlanModifiers:       replace,
				Validators:          []validator.String{armName{arm.Collection}},
			},
			"resource_group": schema.StringAttribute{
				Optional:            true,
				Computed:            true,
				Default:             stringdefault.StaticString("default"),
				MarkdownDescription: "Resource group of the collection; default `default`. Changing it replaces the collection.",
				PlanModifiers:       replace,
				Validators:          []validator.String{armName{arm.ResourceGroup}},
			},
			"location": schema.StringAttribute{
				Optional:            true,
				Computed:            true,
				Default:             stringdefault.StaticString("local"),
				MarkdownDescription: "Location label of the collection (informative for a self-hosted daemon); default `local`. Changing it replaces the collection.",
				PlanModifiers:       replace,
			},
			"sku": schema.StringAttribute{
				Optional:            true,
				Computed:            true,
				Default:             stringdefault.StaticString(jobdef.SkuStandard),
				MarkdownDescription: "Pricing tier, which sets the default limits: `Free` (5 jobs, at most hourly, no outbound authentication), `Standard` and `P10Premium` (50 jobs, every minute), `P20Premium` (1000 jobs). Any case; default `Standard`.",
				Validators:          []validator.String{stringvalidator.OneOfCaseInsensitive(skuNames...)},
				CustomType:          enumType{},
				PlanModifiers:       []planmodifier.String{samePlan{enumType{}}},
			},
			"state": schema.StringAttribute{
				Optional:            true,
				Computed:            true,
				Default:             stringdefault.StaticString(jobdef.StateEnabled),
				MarkdownDescription: "`Enabled`, `Disabled` or `Suspended` (any case); default `Enabled`. The jobs of a collection that is not enabled do not fire. Disabling or suspending it cancels, in the same write, its jobs' backfill executions not yet started and the occurrences waiting under the overlap policy `BufferOne` (the executions under way finish).",
				Validators:          []validator.String{stringvalidator.OneOfCaseInsensitive(collectionStates...)},
				CustomType:          enumType{},
				PlanModifiers:       []planmodifier.String{samePlan{enumType{}}},
			},
			"tags": schema.MapAttribute{
				Optional:            true,
				ElementType:         types.StringType,
				MarkdownDescription: "Free-form tags.",
			},
			"force_destroy": schema.BoolAttribute{
				Optional: true,
				MarkdownDescription: "Whether destroying the collection may delete jobs this configuration does not manage (created through the API " +
					"or by another configuration); default `false`: the destroy fails while the collection holds such jobs, naming them. " +
					"A destroy plan warns how many jobs the collection holds. Not sent to the daemon.",
			},
		},
		Blocks: map[string]schema.Block{
			"quota": schema.SingleNestedBlock{
				MarkdownDescription: "Limits overriding the SKU's defaults.",
				Attributes: map[string]schema.Attribute{
					"max_job_count": schema.Int64Attribute{
						Optional:            true,
						MarkdownDescription: "Most jobs the collection may hold.",
						Validators:          []validator.Int64{int64validator.AtLeast(1)},
					},
					"max_job_occurrence": schema.Int64Attribute{
						Optional:            true,
						MarkdownDescription: "Largest `recurrence.count` a job may have.",
						Validators:          []validator.Int64{int64validator.AtLeast(1)},
					},
				},
				Blocks: map[string]schema.Block{
					"max_recurrence": schema.SingleNestedBlock{
						MarkdownDescription: "Fastest recurrence allowed: no two of a job's next 1,000 executions may be closer than this.",
						Attributes: map[string]schema.Attribute{
							"frequency": schema.StringAttribute{
								// Optional: the framework requires a Required attribute of a block even when the block is absent.
								Optional:            true,
								MarkdownDescription: "Required. `Minute`, `Hour`, `Day`, `Week` or `Month` (any case).",
								Validators:          []validator.String{stringvalidator.OneOfCaseInsensitive(frequencies...)},
								CustomType:          enumType{},
								PlanModifiers:       []planmodifier.String{samePlan{enumType{}}},
							},
							"interval": schema.Int64Attribute{
								Optional:            true,
								MarkdownDescription: "How many frequency units; default 1.",
								Validators:          []validator.Int64{int64validator.AtLeast(1)},
							},
						},
					},
				},
			},
		},
	}
}

func (r *jobCollectionResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	r.data = providerDataFrom(req.ProviderData, &resp.Diagnostics)
}

// ModifyPlan records the planned collection for its jobs' plans (planned.go); in a plan
// destroying the collection, it says how many jobs it holds: those the plan does not destroy are
// deleted with it (force_destroy) or stop the destroy.
func (r *jobCollectionResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if !req.Plan.Raw.IsNull() {
		r.planCollection(ctx, req, resp)
		return
	}
	if req.State.Raw.IsNull() {
		return
	}
	var quiet diag.Diagnostics // an unconfigured provider: the destroy itself will say so
	c := clientFor(r.data, &quiet)
	var prior jobCollectionModel
	if c == nil || req.State.Get(ctx, &prior).HasError() {
		return
	}
	id, err := client.ParseCollectionID(prior.ID.ValueString())
	if err != nil {
		return
	}
	jobs, err := c.JobList(ctx, client.JobListParams{Collection: id})
	if err != nil || len(jobs) == 0 {
		return
	}
	if prior.ForceDestroy.ValueBool() {
		resp.Diagnostics.AddWarning(fmt.Sprintf("Destroying job collection %s deletes the %s it holds", id.Name, jobCount(len(jobs))),
			"force_destroy is set: the jobs this plan does not destroy are deleted with the collection ("+jobNames(jobs)+").")
		return
	}
	resp.Diagnostics.AddWarning(fmt.Sprintf("Job collection %s holds %s", id.Name, jobCount(len(jobs))),
		"The jobs this plan destroys are deleted first; any other ("+jobNames(jobs)+") stops the destroy. "+
			"Set force_destroy = true to delete them with the collection.")
}

// ValidateConfig runs the daemon's own collection checks on known values.
func (r *jobCollectionResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var m jobCollectionModel
	if diags := req.Config.Get(ctx, &m); diags.HasError() {
		return // an unknown nested object: nothing to check yet
	}
	if q := m.Quota; q != nil && q.MaxRecurrence != nil && q.MaxRecurrence.Frequency.IsNull() {
		resp.Diagnostics.AddAttributeError(path.Root("quota").AtName("max_recurrence").AtName("frequency"),
			"Missing quota.max_recurrence.frequency", "A max_recurrence block needs frequency: Minute, Hour, Day, Week or Month.")
		return
	}
	def := m.toWire(ctx)
	for _, p := range jobdef.ValidateCollection(def.Properties) {
		if strings.HasPrefix(p.Path, "quota") && m.Quota != nil && m.Quota.MaxRecurrence != nil && m.Quota.MaxRecurrence.Frequency.IsUnknown() {
			continue
		}
		addProblem(&resp.Diagnostics, collectionAttrPath(p.Path), p.Message)
	}
}

func (m *jobCollectionModel) toWire(ctx context.Context) *wire.JobCollectionDefinition {
	p := &wire.JobCollectionProperties{
		Sku:   &wire.Sku{Name: canonical(str(m.Sku), skuNames)},
		State: canonical(str(m.State), collectionStates),
	}
	if p.Sku.Name == "" {
		p.Sku = nil
	}
	if q := m.Quota; q != nil {
		p.Quota = &wire.JobCollectionQuota{MaxJobCount: intPtr(q.MaxJobCount), MaxJobOccurrence: intPtr(q.MaxJobOccurrence)}
		if mr := q.MaxRecurrence; mr != nil {
			p.Quota.MaxRecurrence = &wire.JobMaxRecurrence{Frequency: canonical(str(mr.Frequency), frequencies), Interval: intPtr(mr.Interval)}
		}
	}
	def := &wire.JobCollectionDefinition{Location: str(m.Location), Properties: p}
	if !m.Tags.IsNull() && !m.Tags.IsUnknown() {
		_ = m.Tags.ElementsAs(ctx, &def.Tags, false)
	}
	return def
}

// fromWire sets m from the API's answer; prior is what state or plan held (nil on import).
func (m *jobCollectionModel) fromWire(ctx context.Context, id client.CollectionID, def *wire.JobCollectionDefinition, prior *jobCollectionModel) {
	fresh := prior == nil
	if fresh {
		prior = &jobCollectionModel{}
	}
	m.ID = types.StringValue(id.String())
	m.Name = keepString(prior.Name, id.Name, fresh, sameFold)
	m.ResourceGroup = keepString(prior.ResourceGroup, id.ResourceGroup, fresh, sameFold)
	m.Location = keepString(prior.Location, def.Location, fresh, sameString)
	m.Tags = keepStringMap(ctx, prior.Tags, def.Tags, fresh)
	m.ForceDestroy = prior.ForceDestroy // the provider's, not the daemon's
	p := def.Properties
	if p == nil {
		p = &wire.JobCollectionProperties{}
	}
	sku := ""
	if p.Sku != nil {
		sku = p.Sku.Name
	}
	m.Sku = keepEnum(prior.Sku, sku, fresh)
	m.State = keepEnum(prior.State, p.State, fresh)
	// A quota set outside Terraform shows as drift.
	m.Quota = nil
	if q := p.Quota; q != nil && (q.MaxJobCount != nil || q.MaxJobOccurrence != nil || q.MaxRecurrence != nil) {
		pq := prior.Quota
		f := fresh || pq == nil
		if pq == nil {
			pq = &quotaModel{}
		}
		m.Quota = &quotaModel{
			MaxJobCount:      keepInt(pq.MaxJobCount, q.MaxJobCount, f),
			MaxJobOccurrence: keepInt(pq.MaxJobOccurrence, q.MaxJobOccurrence, f),
		}
		if mr := q.MaxRecurrence; mr != nil && mr.Frequency != "" {
			pmr := pq.MaxRecurrence
			fr := f || pmr == nil
			if pmr == nil {
				pmr = &maxRecurrenceModel{}
			}
			m.Quota.MaxRecurrence = &maxRecurrenceModel{
				Frequency: keepEnum(pmr.Frequency, mr.Frequency, fr),
				Interval:  keepInt(pmr.Interval, mr.Interval, fr),
			}
		}
	}
}

func (r *jobCollectionResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	c := clientFor(r.data, &resp.Diagnostics)
	if c == nil {
		return
	}
	var plan jobCollectionModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	id := client.CollectionID{Subscription: r.data.subscription, ResourceGroup: plan.ResourceGroup.ValueString(), Name: plan.Name.ValueString()}
	if _, err := c.CollectionGet(ctx, id); err == nil {
		resp.Diagnostics.AddError("Import the existing job collection instead of creating it",
			"A job collection "+id.String()+" already exists. Import it with\n  terraform import <address> "+id.String()+"\nor choose another name.")
		return
	} else if !client.IsNotFound(err) {
		apiError(&resp.Diagnostics, "checking whether job collection "+id.String()+" exists", err)
		return
	}
	if state, ok := putCollection(ctx, c, id, &plan, "creating", "created", &resp.Diagnostics); ok {
		resp.Diagnostics.Append(resp.State.Set(ctx, state)...)
		setIdentity(ctx, resp.Identity, collectionIdentity(id), &resp.Diagnostics)
	}
}

// putCollection sends the planned collection and returns the state to record; doing and done
// ("creating", "created") name the step in the error and the log.
func putCollection(ctx context.Context, c *client.Client, id client.CollectionID, plan *jobCollectionModel, doing, done string, diags *diag.Diagnostics) (*jobCollectionModel, bool) {
	out, err := c.CollectionPut(ctx, id, plan.toWire(ctx))
	if err != nil {
		apiError(diags, doing+" job collection "+id.String(), err)
		return nil, false
	}
	var state jobCollectionModel
	state.fromWire(ctx, id, out, plan)
	tflog.Info(ctx, done+" job collection", map[string]any{"id": id.String()})
	return &state, true
}

// collectionIDFromState parses the id recorded in state.
func collectionIDFromState(prior *jobCollectionModel, diags *diag.Diagnostics) (client.CollectionID, bool) {
	id, err := client.ParseCollectionID(prior.ID.ValueString())
	if err != nil {
		diags.AddAttributeError(path.Root("id"), "Re-import the job collection: its id in state is invalid", err.Error())
		return client.CollectionID{}, false
	}
	return id, true
}

func (r *jobCollectionResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	c := clientFor(r.data, &resp.Diagnostics)
	if c == nil {
		return
	}
	var prior jobCollectionModel
	resp.Diagnostics.Append(req.State.Get(ctx, &prior)...)
	if resp.Diagnostics.HasError() {
		return
	}
	id, ok := collectionIDFromState(&prior, &resp.Diagnostics)
	if !ok {
		return
	}
	out, err := c.CollectionGet(ctx, id)
	if client.IsNotFound(err) {
		tflog.Info(ctx, "job collection deleted outside Terraform: removed from state", map[string]any{"id": id.String()})
		resp.State.RemoveResource(ctx) // deleted outside Terraform: plan its creation
		// The framework wants an identity even then (a CLI without identities sends none).
		setIdentity(ctx, resp.Identity, collectionIdentity(id), &resp.Diagnostics)
		return
	}
	if err != nil {
		apiError(&resp.Diagnostics, "reading job collection "+id.String(), err)
		return
	}
	fresh := prior.Name.IsNull() // just imported
	var state jobCollectionModel
	if fresh {
		state.fromWire(ctx, id, out, nil)
	} else {
		state.fromWire(ctx, id, out, &prior)
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
	setIdentity(ctx, resp.Identity, collectionIdentity(id), &resp.Diagnostics)
}

func (r *jobCollectionResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	c := clientFor(r.data, &resp.Diagnostics)
	if c == nil {
		return
	}
	var plan, prior jobCollectionModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(req.State.Get(ctx, &prior)...)
	if resp.Diagnostics.HasError() {
		return
	}
	id, ok := collectionIDFromState(&prior, &resp.Diagnostics)
	if !ok {
		return
	}
	if state, ok := putCollection(ctx, c, id, &plan, "updating", "updated", &resp.Diagnostics); ok {
		resp.Diagnostics.Append(resp.State.Set(ctx, state)...)
		setIdentity(ctx, resp.Identity, collectionIdentity(id), &resp.Diagnostics)
	}
}

func (r *jobCollectionResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	c := clientFor(r.data, &resp.Diagnostics)
	if c == nil {
		return
	}
	var prior jobCollectionModel
	resp.Diagnostics.Append(req.State.Get(ctx, &prior)...)
	if resp.Diagnostics.HasError() {
		return
	}
	id, ok := collectionIDFromState(&prior, &resp.Diagnostics)
	if !ok {
		return
	}
	if !prior.ForceDestroy.ValueBool() {
		// The jobs this configuration manages were destroyed first (they depend on the collection):
		// what is left belongs to someone else.
		jobs, err := c.JobList(ctx, client.JobListParams{Collection: id})
		if err != nil && !client.IsNotFound(err) {
			apiError(&resp.Diagnostics, "listing the jobs of job collection "+id.String(), err)
			return
		}
		if len(jobs) > 0 {
			resp.Diagnostics.AddError(fmt.Sprintf("Job collection %s holds %s this configuration does not manage", id.Name, jobCount(len(jobs))),
				"Deleting the collection would delete "+jobNames(jobs)+" with it. Set force_destroy = true to delete them, "+
					"or import them (or delete them) first.")
			return
		}
	}
	if err := c.CollectionDelete(ctx, id); err != nil && !client.IsNotFound(err) {
		apiError(&resp.Diagnostics, "deleting job collection "+id.String(), err)
	}
}

// ImportState takes the collection's ARM id or its identity.
func (r *jobCollectionResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	id, err := importedCollectionID(ctx, req, &resp.Diagnostics)
	if err != nil {
		resp.Diagnostics.AddError("Import the job collection by its ARM id or its identity (subscription, resource_group, name)", err.Error())
		return
	}
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), id.String())...)
	setIdentity(ctx, resp.Identity, collectionIdentity(id), &resp.Diagnostics)
}

func (r *jobCollectionResource) IdentitySchema(_ context.Context, _ resource.IdentitySchemaRequest, resp *resource.IdentitySchemaResponse) {
	resp.IdentitySchema = collectionIdentitySchema()
}

// canonical returns v in Azure's spelling when it is one of allowed (any case), else v.
func canonical(v string, allowed []string) string {
	c, _ := jobdef.Canonical(v, allowed)
	return c
}

// jobCount is "1 job" or "n jobs".
func jobCount(n int) string {
	if n == 1 {
		return "1 job"
	}
	return fmt.Sprintf("%d jobs", n)
}

// jobNames names the jobs, at most 10 ("a, b and 3 more").
func jobNames(jobs []wire.JobDefinition) string {
	names := make([]string, 0, min(len(jobs), 10))
	for _, j := range jobs[:min(len(jobs), 10)] {
		names = append(names, j.Name[strings.LastIndex(j.Name, "/")+1:]) // "collection/job" in the API
	}
	out := strings.Join(names, ", ")
	if len(jobs) > 10 {
		out += fmt.Sprintf(" and %d more", len(jobs)-10)
	}
	return out
}
