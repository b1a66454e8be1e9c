package provider

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/schedulerhq/terraform-provider-scheduler/internal/retry"
)

// A value the API holds in another spelling than the configuration (after an import, or a change
// made through the API) plans no change when both mean the same: the plan keeps the state's
// spelling, which Terraform accepts as "functionally equivalent" to the configuration. After an
// apply the state keeps the configuration's spelling (spelling.go), so this matters for what the
// user did not write through Terraform. Enums and durations do this by their type's semantic
// equality (semantic.go: samePlan); here are the rest: an instant in the job's zone, lists and
// maps compared as sets, and the defaults the API holds.

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

// known reports whether v is neither null nor unknown.
func known(v interface {
	IsNull() bool
	IsUnknown() bool
}) bool {
	return !v.IsNull() && !v.IsUnknown()
}

// sameFoldListPlan keeps the state's list when the configuration holds the same strings in
// another case or order (week_days).
type sameFoldListPlan struct{}

var _ planmodifier.List = sameFoldListPlan{}

func (sameFoldListPlan) Description(context.Context) string {
	return "plans no change for the same values in another case or order"
}

func (m sameFoldListPlan) MarkdownDescription(ctx context.Context) string { return m.Description(ctx) }

func (sameFoldListPlan) PlanModifyList(_ context.Context, req planmodifier.ListRequest, resp *planmodifier.ListResponse) {
	if !known(req.StateValue) || !known(req.ConfigValue) {
		return
	}
	var state []string
	for _, e := range req.StateValue.Elements() {
		s, ok := e.(types.String)
		if !ok || !known(s) {
			return
		}
		state = append(state, s.ValueString())
	}
	if kept := keepFoldList(req.ConfigValue, state, false); kept.Equal(req.ConfigValue) {
		resp.PlanValue = req.StateValue
	}
}

// sameHeadersPlan keeps the state's headers when the configuration holds the same ones with
// names in another case (the daemon answers them in canonical case).
type sameHeadersPlan struct{}

var _ planmodifier.Map = sameHeadersPlan{}

func (sameHeadersPlan) Description(context.Context) string {
	return "plans no change for the same headers with names in another case"
}

func (m sameHeadersPlan) MarkdownDescription(ctx context.Context) string { return m.Description(ctx) }

func (sameHeadersPlan) PlanModifyMap(ctx context.Context, req planmodifier.MapRequest, resp *planmodifier.MapResponse) {
	if !known(req.StateValue) || !known(req.ConfigValue) {
		return
	}
	var state map[string]string
	if req.StateValue.ElementsAs(ctx, &state, false).HasError() {
		return
	}
	if kept := keepStringMap(ctx, req.ConfigValue, state, false); kept.Equal(req.ConfigValue) {
		resp.PlanValue = req.StateValue
	}
}

// defaultPlan keeps a value the API holds that equals the attribute's default when the
// configuration leaves the attribute out, and plans the removal of any other; the attribute is
// Optional and Computed for this (a configuration without it plans null, not "known after
// apply"). An API client that writes the default explicitly (retryCount 4, timeout PT60S) thus
// imports with an empty plan. value names the default; is tells whether a value is it.
type defaultPlan struct {
	value string
	is    func(string) bool
}

var _ planmodifier.String = defaultPlan{}

// defaultEnum is the default enum value v, in any case.
func defaultEnum(v string) defaultPlan {
	return defaultPlan{v, func(s string) bool { return strings.EqualFold(s, v) }}
}

// defaultDuration is the default duration d, however written (read with the daemon's parser).
func defaultDuration(d time.Duration) defaultPlan {
	return defaultPlan{d.String(), func(s string) bool {
		got, err := retry.ParseInterval(s)
		return err == nil && got == d
	}}
}

func (m defaultPlan) Description(context.Context) string {
	return "a value held by the API equal to the default (" + m.value + ") is no change when the configuration leaves it out"
}

func (m defaultPlan) MarkdownDescription(ctx context.Context) string { return m.Description(ctx) }

func (m defaultPlan) PlanModifyString(_ context.Context, req planmodifier.StringRequest, resp *planmodifier.StringResponse) {
	if !req.ConfigValue.IsNull() {
		return
	}
	if known(req.StateValue) && m.is(req.StateValue.ValueString()) {
		resp.PlanValue = req.StateValue
		return
	}
	resp.PlanValue = types.StringNull()
}

// defaultIntPlan is defaultPlan for a number (interval 1, retry_count 4).
type defaultIntPlan struct{ value int64 }

var _ planmodifier.Int64 = defaultIntPlan{}

func (m defaultIntPlan) Description(context.Context) string {
	return fmt.Sprintf("a value held by the API equal to the default (%d) is no change when the configuration leaves it out", m.value)
}

func (m defaultIntPlan) MarkdownDescription(ctx context.Context) string { return m.Description(ctx) }

func (m defaultIntPlan) PlanModifyInt64(_ context.Context, req planmodifier.Int64Request, resp *planmodifier.Int64Response) {
	if !req.ConfigValue.IsNull() {
		return
	}
	if known(req.StateValue) && req.StateValue.ValueInt64() == m.value {
		resp.PlanValue = req.StateValue
		return
	}
	resp.PlanValue = types.Int64Null()
}
