package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/schedulerhq/terraform-provider-scheduler/internal/client"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/jobdef"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"
)

var _ datasource.DataSourceWithConfigure = (*jobHistoryDataSource)(nil)

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
