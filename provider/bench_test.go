package provider

import (
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/schedulerhq/terraform-provider-scheduler/internal/clock"
)

// benchJob is the job of tools/bench-plan.sh.
func benchJob() *jobModel {
	return &jobModel{
		StartTime: types.StringValue("2030-01-01T00:00:00"),
		State:     types.StringValue("Enabled"),
		Action: &actionModel{
			Type: types.StringValue("Https"),
			Request: &requestModel{
				URI: types.StringValue("https://example.com/hooks/1"), Method: types.StringValue("POST"),
				Body:    types.StringValue(`{"job":1}`),
				Headers: types.MapValueMust(types.StringType, map[string]attr.Value{"Content-Type": types.StringValue("application/json")}),
			},
			RetryPolicy: &retryPolicyModel{RetryType: types.StringValue("Fixed"), RetryInterval: types.StringValue("PT1M"), RetryCount: types.Int64Value(3)},
		},
		Recurrence: &recurrenceModel{
			Frequency: types.StringValue("Week"), Interval: types.Int64Null(), Count: types.Int64Null(), EndTime: types.StringNull(),
			TimeZone: types.StringValue("Europe/Berlin"),
			Schedule: &scheduleModel{
				WeekDays:  types.ListValueMust(types.StringType, []attr.Value{types.StringValue("Monday"), types.StringValue("Wednesday"), types.StringValue("Friday")}),
				Hours:     types.ListValueMust(types.Int64Type, []attr.Value{types.Int64Value(2)}),
				Minutes:   types.ListValueMust(types.Int64Type, []attr.Value{types.Int64Value(1)}),
				MonthDays: types.ListNull(types.Int64Type),
			},
		},
	}
}

// BenchmarkValidateJob is the plan-time check of one job (ValidateConfig without the framework).
func BenchmarkValidateJob(b *testing.B) {
	m := benchJob()
	c := clock.Real{}
	for b.Loop() {
		var diags diag.Diagnostics
		validateJob(&diags, m, c)
		if diags.HasError() {
			b.Fatal(diags)
		}
	}
}
