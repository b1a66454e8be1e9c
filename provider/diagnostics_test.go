package provider

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"
)

// objectOf builds a value of typ from fields: a tftypes.Value, a nested map for an object, or
// a []map for a list of objects; every attribute not given is null.
func objectOf(t *testing.T, typ tftypes.Type, fields map[string]any) tftypes.Value {
	t.Helper()
	obj, ok := typ.(tftypes.Object)
	if !ok {
		t.Fatalf("%s is not an object type", typ)
	}
	vals := map[string]tftypes.Value{}
	for name, at := range obj.AttributeTypes {
		switch v := fields[name].(type) {
		case nil:
			vals[name] = tftypes.NewValue(at, nil)
		case tftypes.Value:
			vals[name] = v
		case map[string]any:
			vals[name] = objectOf(t, at, v)
		case []map[string]any:
			lt, ok := at.(tftypes.List)
			if !ok {
				t.Fatalf("field %s: %s is not a list type", name, at)
			}
			et := lt.ElementType
			elems := make([]tftypes.Value, len(v))
			for i, e := range v {
				elems[i] = objectOf(t, et, e)
			}
			vals[name] = tftypes.NewValue(at, elems)
		default:
			t.Fatalf("field %s: unexpected %T", name, v)
		}
	}
	for name := range fields {
		if _, ok := obj.AttributeTypes[name]; !ok {
			t.Fatalf("no attribute %q in %s", name, typ)
		}
	}
	return tftypes.NewValue(typ, vals)
}

func tfStrs(vs ...string) tftypes.Value {
	elems := make([]tftypes.Value, len(vs))
	for i, v := range vs {
		elems[i] = tftypes.NewValue(tftypes.String, v)
	}
	return tftypes.NewValue(tftypes.List{ElementType: tftypes.String}, elems)
}

func tfStr(v string) tftypes.Value { return tftypes.NewValue(tftypes.String, v) }

// validateThroughServer validates a scheduler_job configuration the way tofu does (the provider
// server: schema validators, then ValidateConfig) and renders each diagnostic as
// "summary | attribute path | detail".
func validateThroughServer(t *testing.T, recurrence map[string]any) []string {
	t.Helper()
	ctx := context.Background()
	server, err := providerserver.NewProtocol6WithError(New("test")())()
	if err != nil {
		t.Fatal(err)
	}
	schemas, err := server.GetProviderSchema(ctx, &tfprotov6.GetProviderSchemaRequest{})
	if err != nil {
		t.Fatal(err)
	}
	typ := schemas.ResourceSchemas["scheduler_job"].ValueType()
	config := objectOf(t, typ, map[string]any{
		"job_collection_id": tfStr("/subscriptions/default/resourceGroups/default/providers/Microsoft.Scheduler/jobCollections/plan-only"),
		"name":              tfStr("diag"),
		"start_time":        tfStr("2026-02-02T10:00:00Z"),
		"action":            map[string]any{"type": tfStr("http"), "request": map[string]any{"uri": tfStr("http://example.com/"), "method": tfStr("get")}},
		"recurrence":        recurrence,
	})
	dv, err := tfprotov6.NewDynamicValue(typ, config)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := server.ValidateResourceConfig(ctx, &tfprotov6.ValidateResourceConfigRequest{TypeName: "scheduler_job", Config: &dv})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, d := range resp.Diagnostics {
		out = append(out, fmt.Sprintf("%s | %s | %s", d.Summary, d.Attribute, d.Detail))
	}
	return out
}

// One mistake, one diagnostic, on the attribute, saying what is wrong with HCL names.
func TestDiagnosticsOnePerMistake(t *testing.T) {
	for _, tc := range []struct {
		name       string
		recurrence map[string]any
		want       []string
	}{
		{"an unknown week day", map[string]any{"frequency": tfStr("week"), "schedule": map[string]any{"week_days": tfStrs("monday", "funday")}},
			[]string{`Invalid recurrence.schedule.week_days[1]: "funday" is not a day of the week: one of Monday, Tuesday, Wednesday, Thursday, Friday, Saturday, Sunday | ` +
				`AttributeName("recurrence").AttributeName("schedule").AttributeName("week_days").ElementKeyInt(1) | ` +
				`recurrence.schedule.week_days[1]: "funday" is not a day of the week: one of Monday, Tuesday, Wednesday, Thursday, Friday, Saturday, Sunday`}},
		{"an unknown monthly occurrence day", map[string]any{"frequency": tfStr("month"), "schedule": map[string]any{
			"monthly_occurrences": []map[string]any{{"day": tfStr("friday")}, {"day": tfStr("fri")}}}},
			[]string{`Invalid recurrence.schedule.monthly_occurrences[1].day: "fri" is not a day of the week: one of Monday, Tuesday, Wednesday, Thursday, Friday, Saturday, Sunday | ` +
				`AttributeName("recurrence").AttributeName("schedule").AttributeName("monthly_occurrences").ElementKeyInt(1).AttributeName("day") | ` +
				`recurrence.schedule.monthly_occurrences[1].day: "fri" is not a day of the week: one of Monday, Tuesday, Wednesday, Thursday, Friday, Saturday, Sunday`}},
		{"an end before the start, in HCL names", map[string]any{"frequency": tfStr("day"), "end_time": tfStr("2026-01-01")},
			[]string{`Invalid recurrence.end_time: 2026-01-01T00:00:00Z is before start_time 2026-02-02T10:00:00Z | ` +
				`AttributeName("recurrence").AttributeName("end_time") | recurrence.end_time: 2026-01-01T00:00:00Z is before start_time 2026-02-02T10:00:00Z`}},
		{"an unknown frequency: the schema's message only", map[string]any{"frequency": tfStr("fortnight")},
			[]string{`Invalid Attribute Value Match | AttributeName("recurrence").AttributeName("frequency") | ` +
				`Attribute recurrence.frequency value must be one of: ["Minute" "Hour" "Day" "Week" "Month"], got: "fortnight"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := validateThroughServer(t, tc.recurrence)
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("diagnostics\n got:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}

func TestHCLNames(t *testing.T) {
	for in, want := range map[string]string{
		`2026-01-01T00:00:00Z is before startTime 2026-02-01T10:00:00Z`:                      `2026-01-01T00:00:00Z is before start_time 2026-02-01T10:00:00Z`,
		`properties.recurrence.schedule.monthDays[2]: 32 is outside -31..-1, 1..31`:          `properties.recurrence.schedule.month_days[2]: 32 is outside -31..-1, 1..31`,
		`"http://e.com/fooBar" is not an absolute http or https URI (clientId, errorAction)`: `"http://e.com/fooBar" is not an absolute http or https URI (client_id, error_action)`,
	} {
		if got := hclNames(in); got != want {
			t.Errorf("hclNames(%q)\n got %q\nwant %q", in, got, want)
		}
	}
}

func TestJobAttrPath(t *testing.T) {
	job := &wire.JobProperties{Action: &wire.JobAction{
		Request:     &wire.HTTPRequest{Authentication: &wire.HTTPAuthentication{Type: "Basic"}},
		ErrorAction: &wire.JobErrorAction{Request: &wire.HTTPRequest{Authentication: &wire.HTTPAuthentication{Type: "ActiveDirectoryOAuth"}}},
	}}
	for in, want := range map[string]string{
		"recurrence.schedule.monthDays[2]":                     "recurrence.schedule.month_days[2]",
		"recurrence.schedule.monthlyOccurrences[1].occurrence": "recurrence.schedule.monthly_occurrences[1].occurrence",
		"recurrence.schedule.monthlyOccurrences[1].Occurrence": "recurrence.schedule.monthly_occurrences[1].occurrence",
		"startTime":                                          "start_time",
		"recurrence.endTime":                                 "recurrence.end_time",
		"action.retryPolicy.retryInterval":                   "action.retry_policy.retry_interval",
		"action.request.headers.X-Trace.Id":                  `action.request.headers["X-Trace.Id"]`,
		"action.request.authentication.password":             "action.request.authentication.basic.password",
		"action.request.authentication.type":                 "action.request.authentication",
		"action.errorAction.request.authentication.clientId": "action.error_action.request.authentication.active_directory_oauth.client_id",
		"action.errorAction.request.uri":                     "action.error_action.request.uri",
	} {
		if got := jobAttrPath(in, job).String(); got != want {
			t.Errorf("jobAttrPath(%q) = %s, want %s", in, got, want)
		}
	}
	if !jobAttrPath("", job).Equal(path.Empty()) {
		t.Errorf("the empty path must map to the whole resource")
	}
	if got := collectionAttrPath("sku.name").String(); got != "sku" {
		t.Errorf("collectionAttrPath(sku.name) = %s", got)
	}
	if got := collectionAttrPath("quota.maxRecurrence.frequency").String(); got != "quota.max_recurrence.frequency" {
		t.Errorf("collectionAttrPath = %s", got)
	}
}
