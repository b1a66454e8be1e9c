package provider

import (
	"context"
	"errors"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/schedulerhq/terraform-provider-scheduler/internal/client"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/clock"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"
)

var _ datasource.DataSourceWithConfigure = (*occurrencesDataSource)(nil)

func newOccurrencesDataSource() datasource.DataSource { return &occurrencesDataSource{} }

type occurrencesDataSource struct{ data *providerData }

type occurrencesModel struct {
	StartTime  types.String     `tfsdk:"start_time"`
	Recurrence *recurrenceModel `tfsdk:"recurrence"`
	Limit      types.Int64      `tfsdk:"limit"`
	Executed   types.Int64      `tfsdk:"executed"`
	Now        types.String     `tfsdk:"now"`
	JobID      types.String     `tfsdk:"job_id"`
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
			"(no daemon is needed): the same `start_time` and `recurrence` as `scheduler_job`, checked by the same rules. " +
			jitterPreviewDoc + ": with `job_id` the times are the starts the daemon uses for that job; without it an occurrence " +
			"is listed at its scheduled time, the start of its window, and `recurrence_description` says how much later it may start " +
			"(`up to 5 minutes later`).",
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
			"job_id": schema.StringAttribute{
				Optional: true,
				MarkdownDescription: "ARM id of the job the preview is for (`scheduler_job.<name>.id`; the job need not exist): with " +
					"`recurrence.jitter` the times are then that job's starts, to the millisecond. Without it they are the scheduled times.",
				Validators: []validator.String{armID{job: true}},
			},
			"times": schema.ListAttribute{
				Computed:            true,
				ElementType:         types.StringType,
				MarkdownDescription: "The executions, RFC 3339 in the rule's zone (with milliseconds when a jittered start has them).",
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
	var job *client.JobID
	if s := m.JobID.ValueString(); s != "" {
		id, err := client.ParseJobID(s)
		if err != nil {
			resp.Diagnostics.AddAttributeError(path.Root("job_id"), "Set job_id to a job's id", err.Error())
			return
		}
		job = &id
	}
	var unknown unknowns // none: a data source is read once its configuration is known
	rec := m.Recurrence.toWire(conv{unknown: &unknown})
	times, err := preview(previewParams{StartTime: m.StartTime.ValueString(), Recurrence: rec, Now: now,
		Done: int(m.Executed.ValueInt64()), Count: count, Job: job})
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
	m.Description = types.StringValue(describe(m.StartTime.ValueString(), rec, now, true))
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}
