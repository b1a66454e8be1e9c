package provider

import (
	"context"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/list"
	"github.com/hashicorp/terraform-plugin-framework/list/schema"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/schedulerhq/terraform-provider-scheduler/internal/client"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/jobdef"
)

var _ list.ListResourceWithConfigure = (*jobListResource)(nil)

// jobListResource is `list "scheduler_job"` (Terraform 1.14+, `terraform query`): the jobs of a
// collection, optionally in one state, each with its identity and, when asked, its attributes
// (from which `terraform query -generate-config-out` writes their configuration).
type jobListResource struct{ data *providerData }

func newJobListResource() list.ListResource { return &jobListResource{} }

type jobListModel struct {
	JobCollectionID types.String `tfsdk:"job_collection_id"`
	State           types.String `tfsdk:"state"`
}

// jobListStates are the states a listing can be filtered on.
var jobListStates = []string{jobdef.StateEnabled, jobdef.StateDisabled, jobdef.StateCompleted, jobdef.StateFaulted}

func (l *jobListResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_job"
}

func (l *jobListResource) ListResourceConfigSchema(_ context.Context, _ list.ListResourceSchemaRequest, resp *list.ListResourceSchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "Lists the jobs of a collection (Terraform 1.14 and later: `list` blocks in `.tfquery.hcl` files and " +
			"`terraform query`; OpenTofu has no list resources), each with its identity, so that `terraform query " +
			"-generate-config-out` writes their configuration and import blocks.",
		Attributes: map[string]schema.Attribute{
			"job_collection_id": schema.StringAttribute{
				Required:            true,
				MarkdownDescription: "ARM id of the job collection.",
				Validators:          []validator.String{armID{}},
			},
			"state": schema.StringAttribute{
				Optional:            true,
				MarkdownDescription: "Only the jobs in this state: `Enabled`, `Disabled`, `Completed` or `Faulted` (any case).",
				Validators:          []validator.String{stringvalidator.OneOfCaseInsensitive(jobListStates...)},
			},
		},
	}
}

func (l *jobListResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	l.data = providerDataFrom(req.ProviderData, &resp.Diagnostics)
}

func (l *jobListResource) List(ctx context.Context, req list.ListRequest, stream *list.ListResultsStream) {
	var diags diag.Diagnostics
	var m jobListModel
	diags.Append(req.Config.Get(ctx, &m)...)
	c := clientFor(l.data, &diags)
	if diags.HasError() || c == nil {
		stream.Results = list.ListResultsStreamDiagnostics(diags)
		return
	}
	coll, err := client.ParseCollectionID(m.JobCollectionID.ValueString())
	if err != nil {
		diags.AddAttributeError(path.Root("job_collection_id"), "Set job_collection_id to a job collection's id", err.Error())
		stream.Results = list.ListResultsStreamDiagnostics(diags)
		return
	}
	jobs, err := c.JobList(ctx, client.JobListParams{Collection: coll, State: canonical(m.State.ValueString(), jobListStates)})
	if err != nil {
		apiError(&diags, "listing the jobs of job collection "+coll.String(), err)
		stream.Results = list.ListResultsStreamDiagnostics(diags)
		return
	}
	stream.Results = func(push func(list.ListResult) bool) {
		for i, j := range jobs {
			if req.Limit > 0 && int64(i) >= req.Limit {
				return
			}
			id := client.JobID{CollectionID: coll, Name: j.Name[strings.LastIndex(j.Name, "/")+1:]} // "collection/job"
			r := req.NewListResult(ctx)
			r.DisplayName = id.Name
			r.Diagnostics.Append(r.Identity.Set(ctx, jobIdentity(id))...)
			if req.IncludeResource {
				var s jobModel
				s.importedFromWire(id, &j)
				r.Diagnostics.Append(r.Resource.Set(ctx, &s)...)
			}
			if !push(r) {
				return
			}
		}
	}
}
