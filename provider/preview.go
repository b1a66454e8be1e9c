package provider

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"

	"github.com/schedulerhq/terraform-provider-scheduler/internal/arm"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/client"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/jobstate"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/recurrence"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"
)

// MaxPreview is the most occurrences a preview computes.
const MaxPreview = 1000

// previewParams is one occurrence preview: the job's start time and recurrence, the time the
// job is (re)scheduled at, how many executions it already had, and the job (its ARM id, "" when
// there is none) whose jitter offsets the preview applies.
type previewParams struct {
	StartTime  string
	Recurrence *wire.JobRecurrence
	Now        time.Time
	Done       int
	Count      int
	Job        *client.JobID
}

// preview computes the next executions as the daemon runs them, as RFC 3339 in the rule's zone
// (with the milliseconds of a jittered start): the rulebook's preview of a job written at now
// (jobstate.PreviewRuns, excluded dates skipped by the engine), each occurrence at its start
// (jobstate.StartAt) when the job is named. Without a job a jittered occurrence is shown at its
// scheduled time, the start of its window (its offset depends on the job's id).
// On an invalid rule the error is a wire.Problems with paths relative to the job's properties.
func preview(p previewParams) ([]string, error) {
	rule, err := recurrence.Compile(p.StartTime, p.Recurrence, p.Now)
	if err != nil {
		return nil, err
	}
	key := ""
	if j := p.Job; j != nil {
		key = arm.CanonicalJobID(j.Subscription, j.ResourceGroup, j.CollectionID.Name, j.Name)
	}
	runs := jobstate.PreviewRuns(rule, key, p.Now, p.Done, p.Count)
	out := make([]string, len(runs))
	for i, r := range runs {
		out[i] = r.Start.In(rule.Location()).Format(time.RFC3339Nano)
	}
	return out, nil
}

// jitterPreviewDoc says what a preview shows of a jittered rule and of excluded dates.
const jitterPreviewDoc = "Excluded dates (`recurrence.exclude_dates`) are left out, as the daemon leaves them out. With `recurrence.jitter` " +
	"each occurrence starts up to the jitter later than scheduled, at an offset derived from the job's id and the occurrence"

// recurrenceDescriptionDoc documents the computed recurrence_description attributes.
const recurrenceDescriptionDoc = "The schedule in words, as the daemon's engine reads it: `at 09:00 and 17:00, Monday to Friday, Europe/Berlin`, " +
	"`at 05:15 on the last Friday of every month, UTC`, `every 15 minutes, 5 times, from 2026-12-01 08:00, UTC`. Times of day are wall clock " +
	"in the rule's zone, named at the end (`UTC` when `start_time` has no offset and there is no `time_zone`). A job without `start_time` " +
	"runs once when it is created, then on its rule (`once when the job is created, then ...`); the parts it takes from its creation " +
	"(time of day, week day, day of the month) read \"it was created\", so the words do not change from one plan to the next. " +
	"A one-shot whose `start_time` has passed is planned as `once, immediately (start_time is in the past)`."

// describe is the rule of a start time and recurrence in words ("" when it is invalid), saying
// what the engine's words leave implicit: the first run of a job without start_time, and UTC when
// no zone or offset is given. creating says the job is created now: a one-shot whose start_time
// has passed then runs at once.
func describe(startTime string, rec *wire.JobRecurrence, now time.Time, creating bool) string {
	rule, err := recurrence.Compile(startTime, rec, now)
	if err != nil {
		return ""
	}
	words := recurrence.Describe(rule)
	switch {
	case !rule.Recurring() && rule.HasStartTime() && creating && rule.Anchor().Before(now):
		return "once, immediately (start_time is in the past)"
	case rule.Recurring() && !rule.HasStartTime():
		words = "once when the job is created, then " + words
	}
	if rule.Location() == time.UTC && wallTimeRE.MatchString(words) {
		words += ", UTC"
	}
	return words
}

// wallTimeRE matches a time of day in the words ("09:00", "past the hour 09").
var wallTimeRE = regexp.MustCompile(`\b\d\d:\d\d\b|\bhours? \d\d\b`)

// parseNow reads the optional "now" argument (RFC 3339); empty means the clock's now.
func parseNow(s string, now func() time.Time) (time.Time, error) {
	if s == "" {
		return now(), nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("now: %q is not an RFC 3339 date-time such as 2026-01-31T09:00:00Z", s)
	}
	return t, nil
}

// snakePathText turns the engine's JSON path into the attribute spelling (for messages).
func snakePathText(jsonPath string, p *wire.JobProperties) string {
	ap := jobAttrPath(jsonPath, p)
	return ap.String()
}

// problemsText renders an engine error with attribute paths, one problem per line.
func problemsText(err error, p *wire.JobProperties) string {
	var ps wire.Problems
	if !errors.As(err, &ps) {
		return err.Error()
	}
	lines := make([]string, len(ps))
	for i, pr := range ps {
		if pr.Path == "" {
			lines[i] = hclNames(pr.Message)
			continue
		}
		lines[i] = snakePathText(pr.Path, p) + ": " + hclNames(pr.Message)
	}
	return strings.Join(lines, "\n")
}

// recurrenceFromDynamic reads a recurrence written as an HCL object (the scheduler_job
// attribute names, snake_case; camelCase is accepted too) into the wire type.
func recurrenceFromDynamic(v attr.Value) (*wire.JobRecurrence, error) {
	plain, err := plainValue(v)
	if err != nil {
		return nil, err
	}
	if plain == nil {
		return nil, nil
	}
	obj, ok := plain.(map[string]any)
	if !ok {
		return nil, errors.New("recurrence: expected an object such as { frequency = \"Day\", interval = 1 }")
	}
	if len(obj) == 0 {
		return nil, nil // {}: no recurrence (a literal null is not passed on by OpenTofu)
	}
	data, err := json.Marshal(plain)
	if err != nil {
		return nil, fmt.Errorf("recurrence: %w", err)
	}
	var rec wire.JobRecurrence
	if err := wire.Decode(data, &rec); err != nil {
		var ps wire.Problems
		if errors.As(err, &ps) {
			for i := range ps {
				ps[i].Path = strings.TrimSuffix("recurrence."+ps[i].Path, ".")
			}
			return nil, ps
		}
		return nil, err
	}
	return &rec, nil
}

// plainValue turns a framework value into plain Go values (maps with camelCase keys, slices,
// strings, json.Number, bools); null becomes nil and unknown is an error.
func plainValue(v attr.Value) (any, error) {
	if v == nil || v.IsNull() {
		return nil, nil
	}
	if v.IsUnknown() {
		return nil, errors.New("recurrence is not known yet")
	}
	switch x := v.(type) {
	case basetypes.DynamicValue:
		return plainValue(x.UnderlyingValue())
	case basetypes.ObjectValue:
		return plainMap(x.Attributes())
	case basetypes.MapValue:
		return plainMap(x.Elements())
	case basetypes.ListValue:
		return plainList(x.Elements())
	case basetypes.TupleValue:
		return plainList(x.Elements())
	case basetypes.SetValue:
		return plainList(x.Elements())
	case basetypes.StringValue:
		return x.ValueString(), nil
	case basetypes.BoolValue:
		return x.ValueBool(), nil
	case basetypes.Int64Value:
		return json.Number(fmt.Sprint(x.ValueInt64())), nil
	case basetypes.NumberValue:
		return json.Number(x.ValueBigFloat().Text('f', -1)), nil
	case basetypes.Float64Value:
		return json.Number(fmt.Sprint(x.ValueFloat64())), nil
	}
	return nil, fmt.Errorf("unsupported value %s", v)
}

func plainMap(m map[string]attr.Value) (any, error) {
	out := map[string]any{}
	for k, e := range m {
		p, err := plainValue(e)
		if err != nil {
			return nil, err
		}
		if p != nil {
			out[camel(k)] = p
		}
	}
	return out, nil
}

func plainList(l []attr.Value) (any, error) {
	out := make([]any, 0, len(l))
	for _, e := range l {
		p, err := plainValue(e)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

// camel turns an attribute name into a JSON property name: month_days → monthDays.
func camel(s string) string {
	parts := strings.Split(s, "_")
	for i := 1; i < len(parts); i++ {
		if parts[i] != "" {
			parts[i] = strings.ToUpper(parts[i][:1]) + parts[i][1:]
		}
	}
	return strings.Join(parts, "")
}

// stringList is a list value of strings.
func stringList(ss []string) types.List {
	elems := make([]attr.Value, len(ss))
	for i, s := range ss {
		elems[i] = types.StringValue(s)
	}
	return types.ListValueMust(types.StringType, elems)
}
