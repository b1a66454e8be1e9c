package provider

import (
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/schedulerhq/terraform-provider-scheduler/internal/client"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"
)

func TestJobFromWireKeepsTheUsersSpelling(t *testing.T) {
	id := client.JobID{CollectionID: client.CollectionID{Subscription: "s", ResourceGroup: "rg", Name: "jc"}, Name: "nightly"}
	prior := &jobModel{
		JobCollectionID: types.StringValue(id.CollectionID.String()),
		Name:            types.StringValue("nightly"),
		StartTime:       types.StringValue("2026-03-01T02:00:00"),
		State:           enumOf("enabled"),
		Action: &actionModel{
			Type: enumOf("https"),
			Request: &requestModel{
				URI:     types.StringValue("https://example.com/cleanup"),
				Method:  enumOf("post"),
				Body:    types.StringNull(),
				Headers: types.MapValueMust(types.StringType, map[string]attr.Value{"content-type": types.StringValue("application/json")}),
				Authentication: &authenticationModel{Basic: &basicAuthModel{
					Username: types.StringValue("ops"), Password: types.StringValue("hunter2"),
				}},
			},
		},
		Recurrence: &recurrenceModel{
			Frequency: enumOf("week"),
			Interval:  types.Int64Null(),
			Count:     types.Int64Null(),
			EndTime:   types.StringValue("2026-12-31"),
			TimeZone:  types.StringValue("Europe/Berlin"),
			Schedule: &scheduleModel{
				Minutes:   types.ListNull(types.Int64Type),
				Hours:     types.ListValueMust(types.Int64Type, []attr.Value{types.Int64Value(22), types.Int64Value(2)}),
				WeekDays:  types.ListValueMust(types.StringType, []attr.Value{types.StringValue("monday"), types.StringValue("FRIDAY")}),
				MonthDays: types.ListNull(types.Int64Type),
			},
		},
	}
	one, four := 1, 4
	api := &wire.JobDefinition{Properties: &wire.JobProperties{
		StartTime: "2026-03-01T02:00:00+01:00",
		State:     "Enabled",
		Action: &wire.JobAction{
			Type: "Https",
			Request: &wire.HTTPRequest{
				URI: "https://example.com/cleanup", Method: "POST",
				Headers:        map[string]string{"Content-Type": "application/json"},
				Authentication: &wire.HTTPAuthentication{Type: "Basic", Username: "ops"},
			},
			RetryPolicy: &wire.RetryPolicy{RetryType: "Fixed", RetryInterval: "PT30S", RetryCount: &four},
		},
		Recurrence: &wire.JobRecurrence{
			Frequency: "Week", Interval: &one, EndTime: "2026-12-31T00:00:00+01:00", TimeZone: "Europe/Berlin",
			Schedule: &wire.JobRecurrenceSchedule{Hours: []int{2, 22}, WeekDays: []string{"Friday", "Monday"}},
		},
		Status: &wire.JobStatus{NextExecutionTime: "2026-03-02T02:00:00+01:00"},
	}}
	var got jobModel
	got.fromWire(id, api, prior)

	checks := []struct {
		name string
		got  attr.Value
		want attr.Value
	}{
		{"id", got.ID, types.StringValue(id.String())},
		{"start_time", got.StartTime, prior.StartTime},
		{"state", got.State, prior.State},
		{"action.type", got.Action.Type, prior.Action.Type},
		{"action.request.method", got.Action.Request.Method, prior.Action.Request.Method},
		{"action.request.headers", got.Action.Request.Headers, prior.Action.Request.Headers},
		{"password (write-only)", got.Action.Request.Authentication.Basic.Password, types.StringValue("hunter2")},
		{"recurrence.frequency", got.Recurrence.Frequency, prior.Recurrence.Frequency},
		{"recurrence.interval (server default)", got.Recurrence.Interval, types.Int64Null()},
		{"recurrence.end_time", got.Recurrence.EndTime, prior.Recurrence.EndTime},
		{"schedule.hours", got.Recurrence.Schedule.Hours, prior.Recurrence.Schedule.Hours},
		{"schedule.week_days", got.Recurrence.Schedule.WeekDays, prior.Recurrence.Schedule.WeekDays},
		{"schedule.minutes", got.Recurrence.Schedule.Minutes, types.ListNull(types.Int64Type)},
	}
	for _, c := range checks {
		if !c.got.Equal(c.want) {
			t.Errorf("%s = %s, want %s", c.name, c.got, c.want)
		}
	}
	if got.Action.RetryPolicy != nil {
		t.Errorf("retry_policy (server default, not configured) = %+v, want nil", got.Action.RetryPolicy)
	}
	next, ok := got.Status.Attributes()["next_execution_time"].(types.String)
	if !ok || next.ValueString() != "2026-03-02T02:00:00+01:00" {
		t.Errorf("status.next_execution_time = %v", got.Status.Attributes()["next_execution_time"])
	}
}

func TestJobFromWireShowsDrift(t *testing.T) {
	id := client.JobID{CollectionID: client.CollectionID{Subscription: "s", ResourceGroup: "rg", Name: "jc"}, Name: "j"}
	prior := &jobModel{
		StartTime: types.StringValue("2026-03-01T02:00:00Z"),
		State:     enumOf("Enabled"),
		Action:    &actionModel{Type: enumOf("Http"), Request: &requestModel{URI: types.StringValue("http://a/"), Method: enumOf("GET"), Headers: types.MapNull(types.StringType)}},
		Recurrence: &recurrenceModel{
			Frequency: enumOf("Day"), Interval: types.Int64Value(1),
		},
	}
	two := 2
	api := &wire.JobDefinition{Properties: &wire.JobProperties{
		StartTime:  "2026-03-01T03:00:00Z",
		State:      "Disabled",
		Action:     &wire.JobAction{Type: "Http", Request: &wire.HTTPRequest{URI: "http://b/", Method: "GET"}},
		Recurrence: &wire.JobRecurrence{Frequency: "Hour", Interval: &two},
	}}
	var got jobModel
	got.fromWire(id, api, prior)
	for name, c := range map[string][2]attr.Value{
		"start_time": {got.StartTime, types.StringValue("2026-03-01T03:00:00Z")},
		"state":      {got.State, enumOf("Disabled")},
		"uri":        {got.Action.Request.URI, types.StringValue("http://b/")},
		"frequency":  {got.Recurrence.Frequency, enumOf("Hour")},
		"interval":   {got.Recurrence.Interval, types.Int64Value(2)},
	} {
		if !c[0].Equal(c[1]) {
			t.Errorf("%s = %s, want %s", name, c[0], c[1])
		}
	}

	// A completed job keeps its configured state; the live one is in status.
	api.Properties.State = "Completed"
	got.fromWire(id, api, prior)
	live, _ := got.Status.Attributes()["state"].(types.String)
	if got.State.ValueString() != "Enabled" || live.ValueString() != "Completed" {
		t.Errorf("state %s, status.state %s; want Enabled and Completed", got.State, live)
	}
}

func TestImportTakesTheAnswer(t *testing.T) {
	id := client.JobID{CollectionID: client.CollectionID{Subscription: "s", ResourceGroup: "rg", Name: "jc"}, Name: "j"}
	one := 1
	api := &wire.JobDefinition{Properties: &wire.JobProperties{
		State:      "Enabled",
		Action:     &wire.JobAction{Type: "Http", Request: &wire.HTTPRequest{URI: "http://b/", Method: "GET", Authentication: &wire.HTTPAuthentication{Type: "Basic", Username: "u"}}},
		Recurrence: &wire.JobRecurrence{Frequency: "Hour", Interval: &one, Schedule: &wire.JobRecurrenceSchedule{Minutes: []int{0, 30}}},
	}}
	var got jobModel
	got.fromWire(id, api, nil)
	if got.JobCollectionID.ValueString() != id.CollectionID.String() || got.Name.ValueString() != "j" {
		t.Errorf("ids: %s %s", got.JobCollectionID, got.Name)
	}
	if got.Action.Request.Authentication.Basic.Username.ValueString() != "u" || !got.Action.Request.Authentication.Basic.Password.IsNull() {
		t.Errorf("basic = %+v, want username u and a null password", got.Action.Request.Authentication.Basic)
	}
	want := types.ListValueMust(types.Int64Type, []attr.Value{types.Int64Value(0), types.Int64Value(30)})
	if !got.Recurrence.Schedule.Minutes.Equal(want) || got.Recurrence.Interval.ValueInt64() != 1 {
		t.Errorf("recurrence = %+v", got.Recurrence)
	}
}

// A recurrence, an error action or an authentication added outside Terraform shows as drift.
func TestJobFromWireShowsAddedParts(t *testing.T) {
	id := client.JobID{CollectionID: client.CollectionID{Subscription: "s", ResourceGroup: "rg", Name: "jc"}, Name: "j"}
	prior := &jobModel{
		State: enumOf("Enabled"),
		Action: &actionModel{Type: enumOf("Http"), Request: &requestModel{
			URI: types.StringValue("http://a/"), Method: enumOf("GET"), Body: types.StringValue(""), Headers: types.MapNull(types.StringType),
		}},
	}
	api := &wire.JobDefinition{Properties: &wire.JobProperties{
		State: "Enabled",
		Action: &wire.JobAction{
			Type:        "Http",
			Request:     &wire.HTTPRequest{URI: "http://a/", Method: "GET", Authentication: &wire.HTTPAuthentication{Type: "Basic", Username: "intruder"}},
			ErrorAction: &wire.JobErrorAction{Type: "Http", Request: &wire.HTTPRequest{URI: "http://b/", Method: "POST"}},
		},
		Recurrence: &wire.JobRecurrence{Frequency: "Hour"},
	}}
	var got jobModel
	got.fromWire(id, api, prior)
	if got.Recurrence == nil || got.Recurrence.Frequency.ValueString() != "Hour" {
		t.Errorf("recurrence = %+v, want the added Hour recurrence", got.Recurrence)
	}
	if e := got.Action.ErrorAction; e == nil || e.Request.URI.ValueString() != "http://b/" {
		t.Errorf("error_action = %+v, want the added one", e)
	}
	if a := got.Action.Request.Authentication; a == nil || a.Basic == nil || a.Basic.Username.ValueString() != "intruder" || !a.Basic.Password.IsNull() {
		t.Errorf("authentication = %+v, want the added Basic one without password", a)
	}
	if !got.Action.Request.Body.Equal(types.StringValue("")) {
		t.Errorf("body = %s, want the empty string the user wrote", got.Action.Request.Body)
	}
}
