package provider

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/client"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/clock"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/jobstate"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/recurrence"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"
)

func strs(ss ...string) types.List {
	elems := make([]attr.Value, len(ss))
	for i, s := range ss {
		elems[i] = types.StringValue(s)
	}
	return types.ListValueMust(types.StringType, elems)
}

// whenJob is a daily job at 00:00 Berlin that sets every extension of when it runs.
func whenJob() *jobModel {
	m := benchJob()
	m.StartTime = types.StringValue("2040-12-23T00:00:00")
	m.State = enumOf("disabled")
	m.Recurrence = &recurrenceModel{
		Frequency: enumOf("day"), Interval: types.Int64Null(), Count: types.Int64Value(4), EndTime: types.StringNull(),
		TimeZone: types.StringValue("Europe/Berlin"),
		Jitter:   types.StringValue("PT5M"), ExcludeDates: strs("2040-12-25", "2040-12-26"),
	}
	m.Overlap = types.StringValue("bufferone")
	m.Misfire = &misfireModel{Policy: types.StringValue("runall"), Threshold: types.StringValue("PT2M")}
	m.ResumeAt = types.StringValue("2040-12-24T08:00:00Z")
	m.Note = types.StringValue("database migration")
	return m
}

// The extensions reach the API in its spelling, and a job that sets none sends none (Azure
// clients see exactly what they always saw).
func TestWhenToWire(t *testing.T) {
	p, unknown := whenJob().toWire()
	if len(unknown) != 0 {
		t.Fatalf("unknown %v", unknown)
	}
	if p.Overlap != "BufferOne" || *p.Misfire != (wire.JobMisfire{Policy: "RunAll", Threshold: "PT2M"}) ||
		p.ResumeAt != "2040-12-24T08:00:00Z" || p.Note != "database migration" ||
		p.Recurrence.Jitter != "PT5M" || strings.Join(p.Recurrence.ExcludeDates, ",") != "2040-12-25,2040-12-26" {
		t.Errorf("sent %+v, misfire %+v, recurrence %+v", p, p.Misfire, p.Recurrence)
	}
	p, _ = benchJob().toWire()
	if p.Overlap != "" || p.Misfire != nil || p.ResumeAt != "" || p.Note != "" || p.Recurrence.Jitter != "" || p.Recurrence.ExcludeDates != nil {
		t.Errorf("a job without extensions sent %+v, recurrence %+v", p, p.Recurrence)
	}
	empty := benchJob()
	empty.Misfire = &misfireModel{Policy: types.StringNull(), Threshold: types.StringNull()}
	if p, _ = empty.toWire(); p.Misfire != nil {
		t.Errorf("an empty misfire block sent %+v", p.Misfire)
	}
}

// Every mistake is reported at plan time, once, at its attribute, with the daemon's own message
// (the allowed names in it).
func TestWhenAtPlanTime(t *testing.T) {
	now := clock.NewFake(time.Date(2040, 1, 15, 0, 0, 0, 0, time.UTC))
	for _, tc := range []struct {
		name   string
		modify func(m *jobModel)
		want   []string
	}{
		{"valid", func(*jobModel) {}, nil},
		{"an unknown overlap policy", func(m *jobModel) { m.Overlap = types.StringValue("sometimes") }, []string{
			`overlap | overlap: "sometimes" is not one of Allow, Skip, BufferOne`,
		}},
		{"an unknown misfire policy and a threshold out of range", func(m *jobModel) {
			m.Misfire = &misfireModel{Policy: types.StringValue("later"), Threshold: types.StringValue("P8D")}
		}, []string{
			`misfire.policy | misfire.policy: "later" is not one of RunOnce, Skip, RunAll`,
			"misfire.threshold | misfire.threshold: P8D is outside PT1S..P7D",
		}},
		{"a threshold that is not a duration", func(m *jobModel) {
			m.Misfire = &misfireModel{Policy: types.StringNull(), Threshold: types.StringValue("soon")}
		}, []string{`misfire.threshold | misfire.threshold: "soon" is not an ISO 8601 duration such as PT60S`}},
		{"jitter of a whole period", func(m *jobModel) {
			m.Recurrence.Frequency, m.Recurrence.Interval, m.Recurrence.Jitter = enumOf("minute"), types.Int64Value(5), types.StringValue("PT5M")
		}, []string{"recurrence.jitter | recurrence.jitter: 5m0s is not less than the rule's shortest period between two executions, 5m0s"}},
		{"jitter over PT12H", func(m *jobModel) { m.Recurrence.Jitter = types.StringValue("P1D") }, []string{
			"recurrence.jitter | recurrence.jitter: P1D is more than PT12H",
		}},
		{"a date that is not a date, and a repeated one", func(m *jobModel) {
			m.Recurrence.ExcludeDates = strs("2040-12-25", "2040-13-01", "2040-12-25")
		}, []string{
			`recurrence.exclude_dates[1] | recurrence.exclude_dates[1]: "2040-13-01" is not a date YYYY-MM-DD such as 2026-12-25`,
			`recurrence.exclude_dates[2] | recurrence.exclude_dates[2]: "2040-12-25" is a duplicate of exclude_dates[0]`,
		}},
		{"a note of 513 characters", func(m *jobModel) { m.Note = types.StringValue(strings.Repeat("n", 513)) }, []string{
			"note | note: is 513 characters long; at most 512 are allowed",
		}},
		{"resume_at that is not a time", func(m *jobModel) { m.ResumeAt = types.StringValue("tomorrow") }, []string{
			`resume_at | resume_at: "tomorrow" is not an ISO 8601 date-time such as 2012-08-04T00:00:00Z or a date such as 2012-11-04: expected the year as YYYY-`,
		}},
		{"an unknown note hides nothing else", func(m *jobModel) {
			m.Note = types.StringUnknown()
			m.Overlap = types.StringValue("sometimes")
			m.Recurrence.Jitter = types.StringValue("P1D")
		}, []string{
			`overlap | overlap: "sometimes" is not one of Allow, Skip, BufferOne`,
			"recurrence.jitter | recurrence.jitter: P1D is more than PT12H",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := whenJob()
			tc.modify(m)
			var diags diag.Diagnostics
			validateJob(&diags, m, now)
			if got, want := sortedLines(errorsOf(diags)), sortedLines(strings.Join(tc.want, "\n")); got != want {
				t.Errorf("errors\n got:\n%s\nwant:\n%s", got, want)
			}
		})
	}
}

// State keeps the configuration's spelling when the API answers the same in its own; a value
// changed or added outside Terraform is drift; an import takes the answer; a job without
// extensions reads none.
func TestWhenFromWire(t *testing.T) {
	id := client.JobID{CollectionID: client.CollectionID{Subscription: "s", ResourceGroup: "rg", Name: "jc"}, Name: "when"}
	answer := func(edit func(p *wire.JobProperties)) *wire.JobDefinition {
		p, _ := whenJob().toWire()
		p.State = "Disabled"
		p.Misfire.Threshold = "PT120S"
		p.ResumeAt = "2040-12-24T09:00:00+01:00"
		p.Recurrence.Jitter = "PT300S"
		p.Recurrence.ExcludeDates = []string{"2040-12-26", "2040-12-25"}
		if edit != nil {
			edit(p)
		}
		return &wire.JobDefinition{Properties: p}
	}
	read := func(prior *jobModel, def *wire.JobDefinition) *jobModel {
		var m jobModel
		m.fromWire(id, def, prior)
		return &m
	}
	t.Run("the same, spelled otherwise", func(t *testing.T) {
		prior := whenJob()
		m := read(prior, answer(nil))
		if !m.Overlap.Equal(prior.Overlap) || !m.Misfire.Policy.Equal(prior.Misfire.Policy) || !m.Misfire.Threshold.Equal(prior.Misfire.Threshold) ||
			!m.ResumeAt.Equal(prior.ResumeAt) || !m.Note.Equal(prior.Note) || !m.Recurrence.Jitter.Equal(prior.Recurrence.Jitter) ||
			!m.Recurrence.ExcludeDates.Equal(prior.Recurrence.ExcludeDates) {
			t.Errorf("state %+v misfire %+v recurrence %+v", m, m.Misfire, m.Recurrence)
		}
	})
	t.Run("changed outside Terraform", func(t *testing.T) {
		m := read(whenJob(), answer(func(p *wire.JobProperties) {
			p.Overlap, p.Misfire.Policy, p.Note = "Skip", "Skip", "other"
			p.Recurrence.ExcludeDates = []string{"2040-12-25"}
			p.Recurrence.Jitter = "PT1M"
		}))
		if got := []string{m.Overlap.ValueString(), m.Misfire.Policy.ValueString(), m.Note.ValueString(), m.Recurrence.Jitter.ValueString(),
			m.Recurrence.ExcludeDates.String()}; strings.Join(got, " ") != `Skip Skip other PT1M ["2040-12-25"]` {
			t.Errorf("state %v", got)
		}
	})
	t.Run("added outside Terraform", func(t *testing.T) {
		prior := benchJob()
		prior.Recurrence = whenJob().Recurrence
		prior.Recurrence.Jitter, prior.Recurrence.ExcludeDates = types.StringNull(), types.ListNull(types.StringType)
		m := read(prior, answer(nil))
		if m.Overlap.ValueString() != "BufferOne" || m.Misfire == nil || m.Misfire.Policy.ValueString() != "RunAll" || m.Note.ValueString() != "database migration" ||
			m.Recurrence.Jitter.ValueString() != "PT300S" || len(m.Recurrence.ExcludeDates.Elements()) != 2 {
			t.Errorf("state %+v misfire %+v recurrence %+v", m, m.Misfire, m.Recurrence)
		}
	})
	t.Run("import", func(t *testing.T) {
		m := read(nil, answer(nil))
		if m.Overlap.ValueString() != "BufferOne" || m.Misfire.Threshold.ValueString() != "PT120S" || m.ResumeAt.ValueString() != "2040-12-24T09:00:00+01:00" ||
			m.Recurrence.ExcludeDates.String() != `["2040-12-26","2040-12-25"]` {
			t.Errorf("state %+v misfire %+v recurrence %+v", m, m.Misfire, m.Recurrence)
		}
		plain := read(nil, &wire.JobDefinition{Properties: &wire.JobProperties{State: "Enabled", Recurrence: &wire.JobRecurrence{Frequency: "Day"}}})
		if !plain.Overlap.IsNull() || plain.Misfire != nil || !plain.ResumeAt.IsNull() || !plain.Note.IsNull() ||
			!plain.Recurrence.Jitter.IsNull() || !plain.Recurrence.ExcludeDates.IsNull() {
			t.Errorf("a job without extensions read %+v, recurrence %+v", plain, plain.Recurrence)
		}
	})
	t.Run("an empty misfire block stays", func(t *testing.T) {
		prior := whenJob()
		prior.Misfire = &misfireModel{Policy: types.StringNull(), Threshold: types.StringNull()}
		if m := read(prior, answer(func(p *wire.JobProperties) { p.Misfire = nil })); m.Misfire == nil || !m.Misfire.Policy.IsNull() {
			t.Errorf("misfire %+v", m.Misfire)
		}
	})
}

// A pause configured with resume_at that has ended (the job Enabled again without resumeAt, the
// time passed) keeps the configuration in state, and an update then sends the job Enabled; before
// the time, or with resume_at changed, the configuration is sent as it is.
func TestEndedPause(t *testing.T) {
	at := time.Date(2040, 12, 24, 8, 0, 0, 0, time.UTC)
	enabled := &wire.JobProperties{State: "Enabled", Note: "database migration"}
	for _, tc := range []struct {
		name  string
		now   time.Time
		api   *wire.JobProperties
		ended bool
	}{
		{"resumed after resume_at", at.Add(time.Minute), enabled, true},
		{"at resume_at", at, enabled, true},
		{"enabled before resume_at: drift", at.Add(-time.Minute), enabled, false},
		{"still disabled", at.Add(time.Minute), &wire.JobProperties{State: "Disabled", ResumeAt: "2040-12-24T08:00:00Z"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			prior := whenJob()
			var m jobModel
			m.fromWire(client.JobID{Name: "when"}, &wire.JobDefinition{Properties: tc.api}, prior)
			m.keepEndedPause(prior, tc.api, tc.now)
			kept := m.State.Equal(prior.State) && m.ResumeAt.Equal(prior.ResumeAt)
			if tc.api.State == "Enabled" && kept != tc.ended {
				t.Errorf("state %s resume_at %s, kept %v, want %v", m.State, m.ResumeAt, kept, tc.ended)
			}
			state := *prior
			state.Status = statusObject(tc.api.State, nil)
			send, changed := sendEndedPause(prior, &state, tc.now)
			if changed != tc.ended {
				t.Fatalf("send changed %v, want %v", changed, tc.ended)
			}
			p, _ := send.toWire()
			if tc.ended && (p.State != "Enabled" || p.ResumeAt != "" || p.Note != "database migration") {
				t.Errorf("sent state %s resumeAt %q note %q", p.State, p.ResumeAt, p.Note)
			}
		})
	}
	t.Run("a new resume_at is sent", func(t *testing.T) {
		prior := whenJob()
		plan := whenJob()
		plan.ResumeAt = types.StringValue("2041-01-01T00:00:00Z")
		prior.Status = statusObject("Enabled", nil)
		if _, changed := sendEndedPause(plan, prior, at.Add(time.Hour)); changed {
			t.Error("a changed resume_at was not sent")
		}
	})
}

// The previews are the rulebook's: excluded dates left out, and with a job id each occurrence at
// its jittered start (jobstate.StartAt with the job's canonical id, whatever the id's case);
// without one, at its scheduled time.
func TestPreviewHonoursJitterAndExclusions(t *testing.T) {
	rec := &wire.JobRecurrence{Frequency: "Day", TimeZone: "Europe/Berlin", Jitter: "PT5M", ExcludeDates: []string{"2040-12-25", "2040-12-26"}}
	now := time.Date(2040, 12, 1, 0, 0, 0, 0, time.UTC)
	params := previewParams{StartTime: "2040-12-23T00:00:00", Recurrence: rec, Now: now, Count: 4}
	scheduled, err := preview(params)
	if err != nil {
		t.Fatal(err)
	}
	if want := "2040-12-23T00:00:00+01:00 2040-12-24T00:00:00+01:00 2040-12-27T00:00:00+01:00 2040-12-28T00:00:00+01:00"; strings.Join(scheduled, " ") != want {
		t.Errorf("without a job\n got %v\nwant %s", scheduled, want)
	}
	job := client.JobID{CollectionID: client.CollectionID{Subscription: DefaultSubscriptionID, ResourceGroup: "Default", Name: "Ops"}, Name: "Nightly"}
	params.Job = &job
	started, err := preview(params)
	if err != nil {
		t.Fatal(err)
	}
	rule, err := recurrence.Compile(params.StartTime, rec, now)
	if err != nil {
		t.Fatal(err)
	}
	// The key the daemon's dispatcher offsets this job's occurrences by.
	key := store.JobKey{CollectionKey: store.CollectionKey{Subscription: DefaultSubscriptionID, ResourceGroup: "default", Name: "ops"}, Name: "nightly"}.CanonicalID()
	for i, s := range scheduled {
		at, _ := time.Parse(time.RFC3339, s)
		want := jobstate.StartAt(rule, key, at)
		got, err := time.Parse(time.RFC3339Nano, started[i])
		if err != nil || !got.Equal(want) {
			t.Errorf("occurrence %d: %s, want %s (%v)", i, started[i], want.Format(time.RFC3339Nano), err)
		}
		if off := got.Sub(at); off < 0 || off >= 5*time.Minute {
			t.Errorf("occurrence %d: offset %s outside [0, 5m)", i, off)
		}
	}
	if strings.Join(started, " ") == strings.Join(scheduled, " ") {
		t.Errorf("the job's starts are its scheduled times: %v", started)
	}
}

// A state written before these arguments existed (no overlap, misfire, resume_at, note, jitter,
// exclude_dates) reads with each of them null, with no schema upgrade: a configuration that sets
// none of them then plans no change.
func TestWhenArgumentsAreNullInOlderStates(t *testing.T) {
	ctx := context.Background()
	server, err := providerserver.NewProtocol6WithError(New("test")())()
	if err != nil {
		t.Fatal(err)
	}
	schemas, err := server.GetProviderSchema(ctx, &tfprotov6.GetProviderSchemaRequest{})
	if err != nil {
		t.Fatal(err)
	}
	old := `{"id":"/subscriptions/default/resourceGroups/default/providers/Microsoft.Scheduler/jobCollections/ops/jobs/nightly",` +
		`"job_collection_id":"/subscriptions/default/resourceGroups/default/providers/Microsoft.Scheduler/jobCollections/ops","name":"nightly",` +
		`"start_time":"2040-01-01T00:00:00Z","state":"Enabled","recurrence_description":"at 00:00 every day, from 2040-01-01 00:00, UTC",` +
		`"action":{"type":"Http","request":{"uri":"http://example.com/","method":"GET","body":null,"headers":null,"authentication":null},` +
		`"queue_message":null,"service_bus_queue_message":null,"service_bus_topic_message":null,"retry_policy":null,"error_action":null},` +
		`"recurrence":{"frequency":"Day","interval":null,"count":null,"end_time":null,"time_zone":null,"schedule":null},"status":null}`
	resp, err := server.UpgradeResourceState(ctx, &tfprotov6.UpgradeResourceStateRequest{
		TypeName: "scheduler_job", Version: 0, RawState: &tfprotov6.RawState{JSON: []byte(old)}})
	if err != nil || len(resp.Diagnostics) > 0 {
		t.Fatalf("%v %v", err, resp.Diagnostics)
	}
	v, err := resp.UpgradedState.Unmarshal(schemas.ResourceSchemas["scheduler_job"].ValueType())
	if err != nil {
		t.Fatal(err)
	}
	var attrs, rec map[string]tftypes.Value
	if err := v.As(&attrs); err != nil {
		t.Fatal(err)
	}
	if err := attrs["recurrence"].As(&rec); err != nil {
		t.Fatal(err)
	}
	for _, name := range whenArguments {
		if !attrs[name].IsNull() {
			t.Errorf("%s: %v, want null", name, attrs[name])
		}
	}
	for _, name := range []string{"jitter", "exclude_dates"} {
		if !rec[name].IsNull() {
			t.Errorf("recurrence.%s: %v, want null", name, rec[name])
		}
	}
	var freq string
	if err := rec["frequency"].As(&freq); err != nil || freq != "Day" {
		t.Errorf("recurrence.frequency %q (%v)", freq, err)
	}
}
