package provider

import (
	"context"
	"fmt"
	"strings"

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

// requiredBlock makes a top-level block required: the framework cannot mark a block required
// (a missing block is a null object). An unknown value (a dynamic block over a value known only
// after apply) waits.
type requiredBlock struct{}

var _ validator.Object = requiredBlock{}

func (v requiredBlock) Description(context.Context) string { return "the block is required" }

func (v requiredBlock) MarkdownDescription(ctx context.Context) string { return v.Description(ctx) }

func (v requiredBlock) ValidateObject(_ context.Context, req validator.ObjectRequest, resp *validator.ObjectResponse) {
	if !req.ConfigValue.IsNull() {
		return
	}
	resp.Diagnostics.AddAttributeError(req.Path, "Missing "+req.Path.String()+" block",
		fmt.Sprintf("%s %s { ... } block is required.", article(req.Path.String()), req.Path.String()))
}

// exactlyOneBlock checks that a block holds exactly one of the nested blocks names (the
// authentication types), as one diagnostic on the block. Validators on the nested blocks would
// run when the block is absent too, and report the same mistake once per nested block.
type exactlyOneBlock []string

var _ validator.Object = exactlyOneBlock{}

func (v exactlyOneBlock) Description(context.Context) string {
	return "exactly one of the blocks " + strings.Join(v, ", ")
}

func (v exactlyOneBlock) MarkdownDescription(ctx context.Context) string { return v.Description(ctx) }

func (v exactlyOneBlock) ValidateObject(_ context.Context, req validator.ObjectRequest, resp *validator.ObjectResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	attrs := req.ConfigValue.Attributes()
	var set []string
	for _, name := range v {
		a, ok := attrs[name]
		switch {
		case !ok || a.IsNull():
		case a.IsUnknown():
			return // a dynamic block over a value known only after apply: wait
		default:
			set = append(set, name)
		}
	}
	switch len(set) {
	case 1:
		return
	case 0:
		resp.Diagnostics.AddAttributeError(req.Path, "Missing block in "+req.Path.String()+": set one of "+strings.Join(v, ", "),
			fmt.Sprintf("%s holds none of the blocks %s; it needs exactly one.", req.Path, strings.Join(v, ", ")))
	default:
		resp.Diagnostics.AddAttributeError(req.Path, "Invalid "+req.Path.String()+": set only one of "+strings.Join(v, ", "),
			fmt.Sprintf("%s holds %d blocks (%s); it takes exactly one.", req.Path, len(set), strings.Join(set, ", ")))
	}
}

// article is the indefinite article before word: "An" before a vowel ("An action block"), else "A".
func article(word string) string {
	if word != "" && strings.ContainsRune("aeiouAEIOU", rune(word[0])) {
		return "An"
	}
	return "A"
}
