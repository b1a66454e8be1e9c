package provider

import (
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/schedulerhq/terraform-provider-scheduler/internal/clock"
)

func ints(vs ...attr.Value) types.List { return types.ListValueMust(types.Int64Type, vs) }

// errorsOf renders attribute errors as "path: detail", one per line, in order.
func errorsOf(diags diag.Diagnostics) string {
	var lines []string
	for _, d := range diags.Errors() {
		line := d.Detail()
		if wp, ok := d.(diag.DiagnosticWithPath); ok {
			line = wp.Path().String() + " | " + line
		}
		lines = append(lines, line)
	}
	return strings.Join(lines, "\n")
}

func monthlyJob() *jobModel {
	m := benchJob()
	m.StartTime = types.StringValue("2026-02-01T10:00:00Z")
	m.Recurrence = &recurrenceModel{
		Frequency: types.StringValue("month"), Interval: types.Int64Null(), Count: types.Int64Null(),
		EndTime: types.StringValue("2026-01-01"), TimeZone: types.StringNull(),
		Schedule: &scheduleModel{
			Minutes: ints(types.Int64Value(60)), Hours: types.ListNull(types.Int64Type),
			WeekDays: types.ListNull(types.StringType), MonthDays: ints(types.Int64Value(1), types.Int64Value(32)),
		},
	}
	return m
}

func TestValidateJobReportsEveryProblemAtItsAttribute(t *testing.T) {
	var diags diag.Diagnostics
	validateJob(&diags, monthlyJob(), clock.NewFake(time.Date(2026, 1, 15, 0, 0, 0, 0, time.UTC)))
	want := strings.Join([]string{
		"recurrence.end_time | recurrence.end_time: 2026-01-01T00:00:00Z is before start_time 2026-02-01T10:00:00Z",
		"recurrence.schedule.minutes[0] | recurrence.schedule.minutes[0]: 60 is outside 0..59",
		"recurrence.schedule.month_days[1] | recurrence.schedule.month_days[1]: 32 is outside -31..-1, 1..31",
	}, "\n")
	if got := sortedLines(errorsOf(diags)); got != want {
		t.Errorf("errors\n got:\n%s\nwant:\n%s", got, want)
	}
}

// Unknown values are skipped, not guessed: problems that may depend on them are not reported,
// the others are.
func TestValidateJobSkipsWhatDependsOnUnknownValues(t *testing.T) {
	now := clock.NewFake(time.Date(2026, 1, 15, 0, 0, 0, 0, time.UTC))
	for _, tc := range []struct {
		name   string
		modify func(m *jobModel)
		want   []string
	}{
		{"unknown start_time: the end time and the never-fires check wait", func(m *jobModel) { m.StartTime = types.StringUnknown() }, []string{
			"recurrence.schedule.minutes[0] | recurrence.schedule.minutes[0]: 60 is outside 0..59",
			"recurrence.schedule.month_days[1] | recurrence.schedule.month_days[1]: 32 is outside -31..-1, 1..31",
		}},
		{"an unknown month day: that list waits", func(m *jobModel) {
			m.Recurrence.Schedule.MonthDays = ints(types.Int64Unknown(), types.Int64Value(32))
		}, []string{
			"recurrence.end_time | recurrence.end_time: 2026-01-01T00:00:00Z is before start_time 2026-02-01T10:00:00Z",
			"recurrence.schedule.minutes[0] | recurrence.schedule.minutes[0]: 60 is outside 0..59",
		}},
		{"unknown frequency: the whole schedule waits", func(m *jobModel) { m.Recurrence.Frequency = types.StringUnknown() }, nil},
		{"unknown uri: the schedule is still checked", func(m *jobModel) { m.Action.Request.URI = types.StringUnknown() }, []string{
			"recurrence.end_time | recurrence.end_time: 2026-01-01T00:00:00Z is before start_time 2026-02-01T10:00:00Z",
			"recurrence.schedule.minutes[0] | recurrence.schedule.minutes[0]: 60 is outside 0..59",
			"recurrence.schedule.month_days[1] | recurrence.schedule.month_days[1]: 32 is outside -31..-1, 1..31",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := monthlyJob()
			tc.modify(m)
			var diags diag.Diagnostics
			validateJob(&diags, m, now)
			if got, want := sortedLines(errorsOf(diags)), strings.Join(tc.want, "\n"); got != want {
				t.Errorf("errors\n got:\n%s\nwant:\n%s", got, want)
			}
		})
	}
}

func TestUnknownsCovers(t *testing.T) {
	u := unknowns{"startTime", "action.request.authentication.password"}
	for path, want := range map[string]bool{
		"":                                  true,
		"startTime":                         true,
		"recurrence.endTime":                true,
		"recurrence.schedule":               true,
		"recurrence.schedule.monthDays[2]":  false,
		"action.request.authentication.pfx": true,
		"action.request.uri":                false,
		"action.errorAction.request.uri":    false,
	} {
		if got := u.covers(path); got != want {
			t.Errorf("covers(%q) = %v, want %v", path, got, want)
		}
	}
}

func sortedLines(s string) string {
	if s == "" {
		return ""
	}
	lines := strings.Split(s, "\n")
	for i := 1; i < len(lines); i++ {
		for j := i; j > 0 && lines[j] < lines[j-1]; j-- {
			lines[j], lines[j-1] = lines[j-1], lines[j]
		}
	}
	return strings.Join(lines, "\n")
}
