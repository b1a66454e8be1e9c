package provider

import (
	"context"
	"errors"

	"github.com/hashicorp/terraform-plugin-framework/function"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/schedulerhq/terraform-provider-scheduler/internal/clock"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"
)

var _ function.Function = (*occurrencesFunction)(nil)

// occurrencesFunction is provider::scheduler::occurrences(start_time, recurrence, count, [now]).
type occurrencesFunction struct {
	clock clock.Clock
}

func (f *occurrencesFunction) Metadata(_ context.Context, _ function.MetadataRequest, resp *function.MetadataResponse) {
	resp.Name = "occurrences"
}

func (f *occurrencesFunction) Definition(_ context.Context, _ function.DefinitionRequest, resp *function.DefinitionResponse) {
	resp.Definition = function.Definition{
		Summary: "Next executions of a schedule, computed locally with the daemon's engine",
		MarkdownDescription: "Returns the next `count` executions (RFC 3339, in the rule's zone) of a job with this `start_time` " +
			"and `recurrence`, created at `now` (default: the current time), exactly as the daemon will run them. " +
			"No daemon is needed. `recurrence` is the content of `scheduler_job`'s `recurrence` block as an object value " +
			"(a function takes values, not blocks): `schedule` is an object and `monthly_occurrences` a list of objects " +
			"(`{ frequency = \"Month\", schedule = { hours = [9], monthly_occurrences = [{ day = \"Friday\", occurrence = -1 }] } }`), " +
			"or `{}` for a one-off job. " +
			"An invalid schedule is an error naming the attribute, with the daemon's message. " +
			jitterPreviewDoc + ", which a function does not know: a jittered occurrence is returned at its scheduled time, " +
			"the start of its window (the `scheduler_occurrences` data source with `job_id` shows the starts).",
		Parameters: []function.Parameter{
			function.StringParameter{
				Name:                "start_time",
				AllowNullValue:      true,
				MarkdownDescription: "ISO 8601 start time, or `\"\"` for none (the job runs once at `now`, then on its recurrence).",
			},
			function.DynamicParameter{
				Name:                "recurrence",
				AllowNullValue:      true,
				MarkdownDescription: "The recurrence object, or `{}` for none.",
			},
			function.Int64Parameter{
				Name:                "count",
				MarkdownDescription: "How many executions to return, 1 to 1000.",
			},
		},
		VariadicParameter: function.StringParameter{
			Name:                "now",
			MarkdownDescription: "Optional RFC 3339 time the job is created at; default the current time.",
		},
		Return: function.ListReturn{ElementType: types.StringType},
	}
}

func (f *occurrencesFunction) Run(ctx context.Context, req function.RunRequest, resp *function.RunResponse) {
	var (
		start types.String
		rec   types.Dynamic
		count int64
		now   []string
	)
	resp.Error = function.ConcatFuncErrors(resp.Error, req.Arguments.Get(ctx, &start, &rec, &count, &now))
	if resp.Error != nil {
		return
	}
	if count < 1 || count > MaxPreview {
		resp.Error = function.NewArgumentFuncError(2, "count: must be between 1 and 1000")
		return
	}
	if len(now) > 1 {
		resp.Error = function.NewArgumentFuncError(3, "now: give at most one time")
		return
	}
	nowArg := ""
	if len(now) == 1 {
		nowArg = now[0]
	}
	at, err := parseNow(nowArg, f.clock.Now)
	if err != nil {
		resp.Error = function.NewArgumentFuncError(3, err.Error())
		return
	}
	r, err := recurrenceFromDynamic(rec)
	if err != nil {
		resp.Error = function.NewArgumentFuncError(1, problemsText(err, nil))
		return
	}
	times, err := preview(previewParams{StartTime: start.ValueString(), Recurrence: r, Now: at, Count: int(count)})
	if err != nil {
		arg := int64(1)
		var ps wire.Problems
		if errors.As(err, &ps) && len(ps) > 0 && ps[0].Path == "startTime" {
			arg = 0
		}
		resp.Error = function.NewArgumentFuncError(arg, problemsText(err, nil))
		return
	}
	resp.Error = function.ConcatFuncErrors(resp.Error, resp.Result.Set(ctx, stringList(times)))
}
