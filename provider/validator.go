package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/schema/validator"

	"github.com/schedulerhq/terraform-provider-scheduler/internal/arm"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/client"
)

// armID validates an ARM id of a job collection (job false) or of a job (job true) at plan time.
type armID struct{ job bool }

var _ validator.String = armID{}

func (v armID) Description(context.Context) string {
	if v.job {
		return "must be a job's ARM id"
	}
	return "must be a job collection's ARM id"
}

func (v armID) MarkdownDescription(ctx context.Context) string { return v.Description(ctx) }

func (v armID) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	var err error
	if v.job {
		_, err = client.ParseJobID(req.ConfigValue.ValueString())
	} else {
		_, err = client.ParseCollectionID(req.ConfigValue.ValueString())
	}
	if err != nil {
		what := "scheduler_job_collection.<name>.id"
		if v.job {
			what = "scheduler_job.<name>.id"
		}
		resp.Diagnostics.AddAttributeError(req.Path, "Fix "+req.Path.String()+": use "+what, err.Error())
	}
}

// armName validates a name (resource group, job collection, job) against the grammar the daemon
// accepts (internal/arm), so that a name it would refuse with a 400 is an error at plan time.
type armName struct{ kind arm.Kind }

var _ validator.String = armName{}

func (v armName) Description(context.Context) string {
	return fmt.Sprintf("must be a %s the daemon accepts: 1 to %d ASCII letters, digits, '-', '_' or '.' "+
		"(a resource group also '(' and ')'), not ending with '.'", v.kind, v.kind.MaxLen())
}

func (v armName) MarkdownDescription(ctx context.Context) string { return v.Description(ctx) }

func (v armName) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	if err := arm.Check(v.kind, req.ConfigValue.ValueString()); err != nil {
		resp.Diagnostics.AddAttributeError(req.Path, "Fix "+req.Path.String()+": use a valid "+v.kind.String(), err.Error())
	}
}
