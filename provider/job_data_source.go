package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/schedulerhq/terraform-provider-scheduler/internal/client"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/jobdef"
)

var _ datasource.DataSourceWithConfigure = (*jobDataSource)(nil)

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
			m.State = enumOf(live) // the data source shows the live state
		}
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}
