package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"

	"github.com/schedulerhq/terraform-provider-scheduler/internal/client"
)

var _ datasource.DataSourceWithConfigure = (*jobCollectionDataSource)(nil)

func newJobCollectionDataSource() datasource.DataSource { return &jobCollectionDataSource{} }

type jobCollectionDataSource struct{ data *providerData }

func (d *jobCollectionDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_job_collection"
}

func (d *jobCollectionDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	cs := jobCollectionSchema()
	attrs := dataSourceBlockAttrs(cs.Attributes, cs.Blocks) // the collection as read: all computed
	attrs["name"] = schema.StringAttribute{Required: true, MarkdownDescription: "Name of the collection."}
	attrs["resource_group"] = schema.StringAttribute{Optional: true, MarkdownDescription: "Resource group of the collection; default `default`."}
	attrs["force_destroy"] = schema.BoolAttribute{Computed: true, MarkdownDescription: "Always null: `force_destroy` is a setting of the `scheduler_job_collection` resource, not of the collection."}
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
