package provider

import (
	"context"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
)

func TestSemanticEquals(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		v    basetypes.StringValuableWithSemanticEquals
		o    types.String
		want bool
	}{
		{"an enum in another case", enumOf("week"), types.StringValue("Week"), true},
		{"another enum", enumOf("Week"), types.StringValue("Day"), false},
		{"an unknown enum", enumOf("Week"), types.StringUnknown(), false},
		{"a null enum", enumNull(), types.StringNull(), false},
		{"a duration as hh:mm:ss", durationOf("00:01:00"), types.StringValue("PT1M"), true},
		{"a duration in seconds", durationOf("PT600S"), types.StringValue("PT10M"), true},
		{"another duration", durationOf("PT1M"), types.StringValue("PT2M"), false},
		{"not a duration", durationOf("soon"), types.StringValue("PT1M"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, diags := tc.v.StringSemanticEquals(ctx, tc.o)
			if got != tc.want || diags.HasError() {
				t.Errorf("StringSemanticEquals = %v (%v), want %v", got, diags, tc.want)
			}
		})
	}
}

func TestSamePlanAndKeep(t *testing.T) {
	ctx := context.Background()
	plan := func(m samePlan, config, state types.String) types.String {
		resp := &planmodifier.StringResponse{PlanValue: config}
		m.PlanModifyString(ctx, planmodifier.StringRequest{ConfigValue: config, StateValue: state, PlanValue: config}, resp)
		return resp.PlanValue
	}
	s := types.StringValue
	for _, tc := range []struct {
		name                string
		m                   samePlan
		config, state, want types.String
	}{
		{"an enum in another case keeps the state's", samePlan{enumType{}}, s("week"), s("Week"), s("Week")},
		{"another enum plans the configuration's", samePlan{enumType{}}, s("day"), s("Week"), s("day")},
		{"a duration written another way keeps the state's", samePlan{durationType{}}, s("00:01:00"), s("PT1M"), s("PT1M")},
		{"another duration plans the configuration's", samePlan{durationType{}}, s("PT2M"), s("PT1M"), s("PT2M")},
		{"nothing in state: the configuration's", samePlan{enumType{}}, s("week"), types.StringNull(), s("week")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := plan(tc.m, tc.config, tc.state); !got.Equal(tc.want) {
				t.Errorf("planned %s, want %s", got, tc.want)
			}
		})
	}
	if got := keepEnum(enumOf("week"), "Week", false); !got.Equal(enumOf("week")) {
		t.Errorf("keepEnum kept %s, want the prior spelling week", got)
	}
	if got := keepEnum(enumOf("week"), "Day", false); !got.Equal(enumOf("Day")) {
		t.Errorf("keepEnum kept %s, want the answer Day (drift)", got)
	}
	if got := keepDuration(durationOf("00:00:30"), "PT30S", false); !got.Equal(durationOf("00:00:30")) {
		t.Errorf("keepDuration kept %s, want the prior spelling 00:00:30", got)
	}
	if got := keepEnum(enumNull(), "Week", true); !got.Equal(enumOf("Week")) {
		t.Errorf("an import took %s, want the answer Week", got)
	}
}
