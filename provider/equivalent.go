package provider

import (
	"context"
	"slices"

	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// A value the API holds in another spelling than the configuration (after an import, or a change
// made through the API) plans no change when both mean the same: the plan keeps the state's
// spelling, which Terraform accepts as "functionally equivalent" to the configuration. After an
// apply the state keeps the configuration's spelling (spelling.go), so this matters for what the
// user did not write through Terraform.

// sameTimePlan keeps the state's end_time when the configuration names the same instant
// (another offset, Z, a fraction, lower case), read in the job's zone. Not for start_time: its
// offset is the schedule's zone when there is no time_zone.
type sameTimePlan struct{}

var _ planmodifier.String = sameTimePlan{}

func (sameTimePlan) Description(context.Context) string {
	return "plans no change for the same instant written another way"
}

func (m sameTimePlan) MarkdownDescription(ctx context.Context) string { return m.Description(ctx) }

func (sameTimePlan) PlanModifyString(ctx context.Context, req planmodifier.StringRequest, resp *planmodifier.StringResponse) {
	if !known(req.StateValue) || !known(req.ConfigValue) || req.StateValue.Equal(req.ConfigValue) {
		return
	}
	var plan jobModel
	if req.Plan.Get(ctx, &plan).HasError() {
		return // a whole block is unknown: the zone may be too
	}
	p, unknown := plan.toWire()
	// The zone is recurrence.time_zone's, else start_time's offset (an interval still unknown, as
	// Computed values are before their own modifier, does not change it).
	if slices.Contains(unknown, "startTime") || slices.Contains(unknown, "recurrence.timeZone") || slices.Contains(unknown, "recurrence.frequency") {
		return
	}
	if sameInstant(zoneOf(p))(req.ConfigValue.ValueString(), req.StateValue.ValueString()) {
		resp.PlanValue = req.StateValue
	}
}

// defaultOnePlan keeps an interval of 1 held by the API when the configuration leaves interval
// out (1 is its default), and plans the removal of any other; interval is Optional and Computed
// for this (a configuration without it plans null, not "known after apply").
type defaultOnePlan struct{}

var _ planmodifier.Int64 = defaultOnePlan{}

func (defaultOnePlan) Description(context.Context) string {
	return "an interval of 1 held by the API is the default: no change when the configuration leaves it out"
}

func (m defaultOnePlan) MarkdownDescription(ctx context.Context) string { return m.Description(ctx) }

func (defaultOnePlan) PlanModifyInt64(_ context.Context, req planmodifier.Int64Request, resp *planmodifier.Int64Response) {
	if !req.ConfigValue.IsNull() {
		return
	}
	if req.StateValue.ValueInt64() == 1 && !req.StateValue.IsNull() && !req.StateValue.IsUnknown() {
		resp.PlanValue = req.StateValue
		return
	}
	resp.PlanValue = types.Int64Null()
}

// known reports whether v is neither null nor unknown.
func known(v interface {
	IsNull() bool
	IsUnknown() bool
}) bool {
	return !v.IsNull() && !v.IsUnknown()
}
