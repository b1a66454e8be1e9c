package provider

import (
	"context"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/schedulerhq/terraform-provider-scheduler/internal/arm"
)

// TestNameValidator: a name the daemon would refuse with a 400 is an error at plan time, naming
// the attribute and saying why.
func TestNameValidator(t *testing.T) {
	for _, tc := range []struct {
		kind arm.Kind
		name string
		want string // "" when valid
	}{
		{arm.Job, "nightly-cleanup_1.x", ""},
		{arm.ResourceGroup, "rg(blue)", ""},
		{arm.Job, "nightly cleanup", `the job name "nightly cleanup" contains the character ' '`},
		{arm.Job, "..", `is a dot segment`},
		{arm.Collection, "ſched", "non-ASCII character U+017F"},
		{arm.Collection, "c(1)", `the character '('`},
		{arm.ResourceGroup, strings.Repeat("r", 91), "is 91 characters long; at most 90"},
	} {
		req := validator.StringRequest{Path: path.Root("name"), ConfigValue: types.StringValue(tc.name)}
		var resp validator.StringResponse
		armName{tc.kind}.ValidateString(context.Background(), req, &resp)
		switch {
		case tc.want == "" && resp.Diagnostics.HasError():
			t.Errorf("%v %q: %v", tc.kind, tc.name, resp.Diagnostics)
		case tc.want != "" && (len(resp.Diagnostics) != 1 || !strings.Contains(resp.Diagnostics[0].Detail(), tc.want) ||
			resp.Diagnostics[0].Summary() != "Fix name: use a valid "+tc.kind.String()):
			t.Errorf("%v %q: %v, want one error containing %q", tc.kind, tc.name, resp.Diagnostics, tc.want)
		}
	}
}

// A missing required block is named with the right article: An action { ... } block.
func TestRequiredBlockMessage(t *testing.T) {
	for _, tc := range []struct{ attr, want string }{
		{"action", "An action { ... } block is required."},
		{"recurrence", "A recurrence { ... } block is required."},
	} {
		var resp validator.ObjectResponse
		requiredBlock{}.ValidateObject(context.Background(), validator.ObjectRequest{
			Path:        path.Root(tc.attr),
			ConfigValue: types.ObjectNull(map[string]attr.Type{}),
		}, &resp)
		if n := resp.Diagnostics.ErrorsCount(); n != 1 {
			t.Fatalf("%s: %d errors, want 1", tc.attr, n)
		}
		if got := resp.Diagnostics.Errors()[0].Detail(); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.attr, got, tc.want)
		}
	}
}
