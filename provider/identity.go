package provider

import (
	"context"
	"errors"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/identityschema"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/schedulerhq/terraform-provider-scheduler/internal/client"
)

// The resources' identities (Terraform 1.12+, OpenTofu 1.12+): the parts of the ARM id, so that
// `import { to = ..., identity = { ... } }` and `terraform query` name a collection or a job
// without writing its id.

// collectionIdentityModel identifies a scheduler_job_collection.
type collectionIdentityModel struct {
	Subscription  types.String `tfsdk:"subscription"`
	ResourceGroup types.String `tfsdk:"resource_group"`
	Name          types.String `tfsdk:"name"`
}

// jobIdentityModel identifies a scheduler_job.
type jobIdentityModel struct {
	Subscription  types.String `tfsdk:"subscription"`
	ResourceGroup types.String `tfsdk:"resource_group"`
	JobCollection types.String `tfsdk:"job_collection"`
	Name          types.String `tfsdk:"name"`
}

func identityString(desc string) identityschema.StringAttribute {
	return identityschema.StringAttribute{RequiredForImport: true, Description: desc}
}

func collectionIdentitySchema() identityschema.Schema {
	return identityschema.Schema{Attributes: map[string]identityschema.Attribute{
		"subscription":   identityString("Subscription id (the provider's `subscription_id`, `default` unless set)."),
		"resource_group": identityString("Resource group of the collection."),
		"name":           identityString("Name of the collection."),
	}}
}

func jobIdentitySchema() identityschema.Schema {
	return identityschema.Schema{Attributes: map[string]identityschema.Attribute{
		"subscription":   identityString("Subscription id (the provider's `subscription_id`, `default` unless set)."),
		"resource_group": identityString("Resource group of the job's collection."),
		"job_collection": identityString("Name of the job's collection."),
		"name":           identityString("Name of the job."),
	}}
}

func collectionIdentity(id client.CollectionID) *collectionIdentityModel {
	return &collectionIdentityModel{
		Subscription:  types.StringValue(id.Subscription),
		ResourceGroup: types.StringValue(id.ResourceGroup),
		Name:          types.StringValue(id.Name),
	}
}

func jobIdentity(id client.JobID) *jobIdentityModel {
	return &jobIdentityModel{
		Subscription:  types.StringValue(id.Subscription),
		ResourceGroup: types.StringValue(id.ResourceGroup),
		JobCollection: types.StringValue(id.CollectionID.Name),
		Name:          types.StringValue(id.Name),
	}
}

// setIdentity records v as the resource's identity when the CLI keeps identities (to is nil
// otherwise).
func setIdentity(ctx context.Context, to *tfsdk.ResourceIdentity, v any, diags *diag.Diagnostics) {
	if to != nil {
		diags.Append(to.Set(ctx, v)...)
	}
}

// errIncompleteIdentity is an identity with a part missing.
var errIncompleteIdentity = errors.New("every attribute of the identity is required")

// importedCollectionID is the collection to import: by its ARM id, or by its identity.
func importedCollectionID(ctx context.Context, req resource.ImportStateRequest, diags *diag.Diagnostics) (client.CollectionID, error) {
	if req.ID != "" || req.Identity == nil {
		return client.ParseCollectionID(req.ID)
	}
	var m collectionIdentityModel
	if d := req.Identity.Get(ctx, &m); d.HasError() {
		diags.Append(d...)
		return client.CollectionID{}, errIncompleteIdentity
	}
	id := client.CollectionID{Subscription: m.Subscription.ValueString(), ResourceGroup: m.ResourceGroup.ValueString(), Name: m.Name.ValueString()}
	if id.Subscription == "" || id.ResourceGroup == "" || id.Name == "" {
		return id, errIncompleteIdentity
	}
	return client.ParseCollectionID(id.String()) // the id's own checks
}

// importedJobID is the job to import: by its ARM id, or by its identity.
func importedJobID(ctx context.Context, req resource.ImportStateRequest, diags *diag.Diagnostics) (client.JobID, error) {
	if req.ID != "" || req.Identity == nil {
		return client.ParseJobID(req.ID)
	}
	var m jobIdentityModel
	if d := req.Identity.Get(ctx, &m); d.HasError() {
		diags.Append(d...)
		return client.JobID{}, errIncompleteIdentity
	}
	id := client.JobID{
		CollectionID: client.CollectionID{Subscription: m.Subscription.ValueString(), ResourceGroup: m.ResourceGroup.ValueString(), Name: m.JobCollection.ValueString()},
		Name:         m.Name.ValueString(),
	}
	if id.Subscription == "" || id.ResourceGroup == "" || id.CollectionID.Name == "" || id.Name == "" {
		return id, errIncompleteIdentity
	}
	return client.ParseJobID(id.String())
}
