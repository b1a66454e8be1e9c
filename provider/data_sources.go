package provider

import (
	"context"
	"errors"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/schedulerhq/terraform-provider-scheduler/internal/client"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/clock"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/jobdef"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"
)

var (
	_ datasource.DataSourceWithConfigure = (*jobCollectionDataSource)(nil)
	_ datasource.DataSourceWithConfigure = (*jobDataSource)(nil)
	_ datasource.DataSourceWithConfigure = (*jobHistoryDataSource)(nil)
	_ datasource.DataSourceWithConfigure = (*occurrencesDataSource)(nil)
)

// ---- scheduler_job_collection ----

func newJobCollectionDataSource() datasource.DataSource { return &jobCollectionDataSource{} }

type jobCollectionDataSource struct{ data *providerData }

func (d *jobCollectionDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_job_collection"
}

func (d *jobCollectionDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	attrs := dataSourceAttrs(jobCollectionSchema().Attributes, true)
	attrs["name"] = schema.StringAttribute{Required: true, MarkdownDescription: "Name of the collection."}
	attrs["resource_group"] = schema.StringAttribute{Optional: true, MarkdownDescription: "Resource group of the collection; default `default`."}
	resp.Schema = schema.Schema{
		MarkdownDescription: "Reads a job collection of the provider's subscription.",
		Attributes:          attrs,
	}
}

func (d *jobCollectionDataSource) Configure(_ context.Context, req datasource.ConfigureRequest, resp *datasource.ConfigureResponse) {
	d.data = providerDataFrom(req.ProviderData, &resp.Diagnostics)
}

func (d *jobCollectionDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	c := clientFor(d.data, &resp.Diagnostics)
	if c == nil {
		return
	}
	var cfg jobCollectionModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &cfg)...)
	if resp.Diagnostics.HasError() {
		return
	}
	rg := cfg.ResourceGroup.ValueString()
	if rg == "" {
		rg = "default"
	}
	id := client.CollectionID{Subscription: d.data.subscription, ResourceGroup: rg, Name: cfg.Name.ValueString()}
	out, err := c.CollectionGet(ctx, id)
	if err != nil {
		apiError(&resp.Diagnostics, "reading job collection "+id.String(), err)
		return
	}
	var m jobCollectionModel
	m.fromWire(ctx, id, out, nil)
	m.Name, m.ResourceGroup = cfg.Name, cfg.ResourceGroup
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

// ---- scheduler_job ----

func newJobDataSource() datasource.DataSource { return &jobDataSource{} }

type jobDataSource struct{ data *providerData }

func (d *jobDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_job"
}

func (d *jobDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	js := jobSchema()
	attrs := dataSourceBlockAttrs(js.Attributes, js.Blocks) // the job as read: all computed
	attrs["job_collection_id"] = schema.StringAttribute{Required: true, MarkdownDescription: "ARM id of the job collection.", Validators: []validator.String{armID{}}}
	attrs["name"] = schema.StringAttribute{Required: true, MarkdownDescription: "Name of the job."}
	resp.Schema = schema.Schema{
		MarkdownDescription: "Reads a job: its definition (secrets are never returned) and its status.",
		Attributes:          attrs,
	}
}

func (d *jobDataSource) Configure(_ context.Context, req datasource.ConfigureRequest, resp *datasource.ConfigureResponse) {
	d.data = providerDataFrom(req.ProviderData, &resp.Diagnostics)
}

func (d *jobDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	c := clientFor(d.data, &resp.Diagnostics)
	if c == nil {
		return
	}
	var collID, name types.String
	resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root("job_collection_id"), &collID)...)
	resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root("name"), &name)...)
	if resp.Diagnostics.HasError() {
		return
	}
	coll, err := client.ParseCollectionID(collID.ValueString())
	if err != nil {
		resp.Diagnostics.AddAttributeError(path.Root("job_collection_id"), "Set job_collection_id to a job collection's id", err.Error())
		return
	}
	id := client.JobID{CollectionID: coll, Name: name.ValueString()}
	out, err := c.JobGet(ctx, id)
	if err != nil {
		apiError(&resp.Diagnostics, "reading job "+id.String(), err)
		return
	}
	var m jobModel
	m.fromWire(id, out, nil)
	m.JobCollectionID, m.Name = collID, name
	if out.Properties != nil {
		if live, ok := jobdef.CanonicalJobState(out.Properties.State); ok {
			m.State = types.StringValue(live) // the data source shows the live state
		}
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

// ---- scheduler_job_history ----

func newJobHistoryDataSource() datasource.DataSource { return &jobHistoryDataSource{} }

type jobHistoryDataSource struct{ data *providerData }

type jobHistoryModel struct {
	JobID   types.String `tfsdk:"job_id"`
	Status  types.String `tfsdk:"status"`
	Max     types.Int64  `tfsdk:"max"`
	Entries types.List   `tfsdk:"entries"`
}

var historyEntryTypes = map[string]attr.Type{
	"action_name":             types.StringType,
	"status":                  types.StringType,
	"message":                 types.StringType,
	"retry_count":             types.Int64Type,
	"repeat_count":            types.Int64Type,
	"expected_execution_time": types.StringType,
	"start_time":              types.StringType,
	"end_time":                types.StringType,
}

func (d *jobHistoryDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_job_history"
}

func (d *jobHistoryDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	entry := map[string]schema.Attribute{
		"action_name":             schema.StringAttribute{Computed: true, MarkdownDescription: "`MainAction` or `ErrorAction`."},
		"status":                  schema.StringAttribute{Computed: true, MarkdownDescription: "`Completed`, `Failed` or `Postponed`."},
		"message":                 schema.StringAttribute{Computed: true, MarkdownDescription: "Status line and up to 2,048 bytes of the response."},
		"retry_count":             schema.Int64Attribute{Computed: true, MarkdownDescription: "Which retry of the occurrence this attempt was (0: the first attempt)."},
		"repeat_count":            schema.Int64Attribute{Computed: true, MarkdownDescription: "Which occurrence of the job."},
		"expected_execution_time": schema.StringAttribute{Computed: true, MarkdownDescription: "When the occurrence was due (RFC 3339)."},
		"start_time":              schema.StringAttribute{Computed: true, MarkdownDescription: "When the attempt started (RFC 3339)."},
		"end_time":                schema.StringAttribute{Computed: true, MarkdownDescription: "When the attempt ended (RFC 3339)."},
	}
	resp.Schema = schema.Schema{
		MarkdownDescription: "Reads a job's execution history, newest first: one entry per attempt, the newest execution's attempts first (newest attempt first), then the previous execution's.",
		Attributes: map[string]schema.Attribute{
			"job_id": schema.StringAttribute{Required: true, MarkdownDescription: "ARM id of the job (`scheduler_job.<name>.id`).", Validators: []validator.String{armID{job: true}}},
			"status": schema.StringAttribute{
				Optional:            true,
				MarkdownDescription: "Keep only entries with this status: `Completed`, `Failed` or `Postponed` (any case).",
				Validators:          []validator.String{stringvalidator.OneOfCaseInsensitive(jobdef.HistoryStatuses()...)},
			},
			"max": schema.Int64Attribute{
				Optional:            true,
				MarkdownDescription: "Most entries to return; default 100.",
				Validators:          []validator.Int64{int64validator.Between(1, 1000)},
			},
			"entries": schema.ListNestedAttribute{
				Computed:            true,
				MarkdownDescription: "The entries, newest execution first, each execution's attempts newest first.",
				NestedObject:        schema.NestedAttributeObject{Attributes: entry},
			},
		},
	}
}

func (d *jobHistoryDataSource) Configure(_ context.Context, req datasource.ConfigureRequest, resp *datasource.ConfigureResponse) {
	d.data = providerDataFrom(req.ProviderData, &resp.Diagnostics)
}

func (d *jobHistoryDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	c := clientFor(d.data, &resp.Diagnostics)
	if c == nil {
		return
	}
	var m jobHistoryModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	id, err := client.ParseJobID(m.JobID.ValueString())
	if err != nil {
		resp.Diagnostics.AddAttributeError(path.Root("job_id"), "Set job_id to a job's id", err.Error())
		return
	}
	limit := 100
	if !m.Max.IsNull() {
		limit = int(m.Max.ValueInt64())
	}
	hist, err := c.HistoryList(ctx, client.HistoryListParams{Job: id, Status: canonical(m.Status.ValueString(), []string{"Completed", "Failed", "Postponed"}), Max: limit})
	if err != nil {
		apiError(&resp.Diagnostics, "reading the history of job "+id.String(), err)
		return
	}
	elems := make([]attr.Value, 0, len(hist))
	for _, h := range hist {
		p := h.Properties
		if p == nil {
			p = &wire.JobHistoryDefinitionProperties{}
		}
		elems = append(elems, types.ObjectValueMust(historyEntryTypes, map[string]attr.Value{
			"action_name":             types.StringValue(p.ActionName),
			"status":                  types.StringValue(p.Status),
			"message":                 types.StringValue(p.Message),
			"retry_count":             types.Int64Value(int64(p.RetryCount)),
			"repeat_count":            types.Int64Value(int64(p.RepeatCount)),
			"expected_execution_time": types.StringValue(p.ExpectedExecutionTime),
			"start_time":              types.StringValue(p.StartTime),
			"end_time":                types.StringValue(p.EndTime),
		}))
	}
	m.Entries = types.ListValueMust(types.ObjectType{AttrTypes: historyEntryTypes}, elems)
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

// ---- scheduler_occurrences ----

func newOccurrencesDataSource() datasource.DataSource { return &occurrencesDataSource{} }

type occurrencesDataSource struct{ data *providerData }

type occurrencesModel struct {
	StartTime  types.String     `tfsdk:"start_time"`
	Recurrence *recurrenceModel `tfsdk:"recurrence"`
	Limit      types.Int64      `tfsdk:"limit"`
	Executed   types.Int64      `tfsdk:"executed"`
	Now        types.String     `tfsdk:"now"`
	Times      types.List       `tfsdk:"times"`
	// Description is the rule in words.
	Description types.String `tfsdk:"recurrence_description"`
}

func (d *occurrencesDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_occurrences"
}

func (d *occurrencesDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	js := jobSchema()
	resp.Schema = schema.Schema{
		MarkdownDescription: "Previews the next executions of a schedule, computed locally with the daemon's own engine " +
			"(no daemon is needed): the same `start_time` and `recurrence` as `scheduler_job`, checked by the same rules.",
		Attributes: map[string]schema.Attribute{
			"start_time": dataSourceAttr(js.Attributes["start_time"], false),
			"limit": schema.Int64Attribute{
				Optional:            true,
				MarkdownDescription: "How many executions to compute, 1 to 1000; default 10.",
				Validators:          []validator.Int64{int64validator.Between(1, MaxPreview)},
			},
			"executed": schema.Int64Attribute{
				Optional:            true,
				MarkdownDescription: "Executions the job already had (they count toward `recurrence.count`); default 0.",
				Validators:          []validator.Int64{int64validator.AtLeast(0)},
			},
			"now": schema.StringAttribute{
				Optional:            true,
				MarkdownDescription: "RFC 3339 time the job is created (or updated) at; default the current time.",
			},
			"times": schema.ListAttribute{
				Computed:            true,
				ElementType:         types.StringType,
				MarkdownDescription: "The executions, RFC 3339 in the rule's zone.",
			},
			"recurrence_description": schema.StringAttribute{
				Computed:            true,
				MarkdownDescription: recurrenceDescriptionDoc,
			},
		},
		Blocks: map[string]schema.Block{
			"recurrence": dataSourceBlock(js.Blocks["recurrence"]),
		},
	}
}

func (d *occurrencesDataSource) Configure(_ context.Context, req datasource.ConfigureRequest, resp *datasource.ConfigureResponse) {
	d.data = providerDataFrom(req.ProviderData, &resp.Diagnostics)
}

func (d *occurrencesDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	var m occurrencesModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	c := clock.Clock(clock.Real{})
	if d.data != nil && d.data.clock != nil {
		c = d.data.clock
	}
	now, err := parseNow(m.Now.ValueString(), c.Now)
	if err != nil {
		resp.Diagnostics.AddAttributeError(path.Root("now"), "Fix now", err.Error())
		return
	}
	count := 10
	if !m.Limit.IsNull() {
		count = int(m.Limit.ValueInt64())
	}
	var unknown unknowns // none: a data source is read once its configuration is known
	rec := m.Recurrence.toWire(conv{&unknown})
	times, err := preview(previewParams{StartTime: m.StartTime.ValueString(), Recurrence: rec, Now: now, Done: int(m.Executed.ValueInt64()), Count: count})
	if err != nil {
		var ps wire.Problems
		if !errors.As(err, &ps) {
			resp.Diagnostics.AddError("Fix the schedule", err.Error())
			return
		}
		for _, pr := range ps {
			addProblem(&resp.Diagnostics, jobAttrPath(pr.Path, nil), pr.Message)
		}
		return
	}
	m.Times = stringList(times)
	m.Description = types.StringValue(describe(m.StartTime.ValueString(), rec, now))
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}
