package provider

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/action"
	"github.com/hashicorp/terraform-plugin-framework/action/schema"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/schedulerhq/terraform-provider-scheduler/internal/client"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/clock"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"
)

var _ action.ActionWithConfigure = (*jobRunAction)(nil)

// jobRunAction is `action "scheduler_job_run"` (Terraform 1.14+): it runs a job now, as
// POST .../jobs/{job}/run does, and with wait_for_completion waits for the execution's outcome.
type jobRunAction struct{ data *providerData }

func newJobRunAction() action.Action { return &jobRunAction{} }

type jobRunModel struct {
	JobID             types.String `tfsdk:"job_id"`
	WaitForCompletion types.Bool   `tfsdk:"wait_for_completion"`
	Timeout           types.String `tfsdk:"timeout"`
}

// defaultRunTimeout bounds the wait for an execution's outcome.
const defaultRunTimeout = 10 * time.Minute

func (a *jobRunAction) Metadata(_ context.Context, req action.MetadataRequest, resp *action.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_job_run"
}

func (a *jobRunAction) Schema(_ context.Context, _ action.SchemaRequest, resp *action.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "Runs a job now, once, as `POST .../jobs/{job}/run` does (Terraform 1.14 and later: " +
			"`action` blocks and `terraform apply -invoke`; OpenTofu has no actions). The run counts as an execution " +
			"of the job, with its retries and error action; the collection's `max_recurrence` applies to runs on request too. " +
			"With `wait_for_completion` the action waits for the execution's outcome and fails when it failed.",
		Attributes: map[string]schema.Attribute{
			"job_id": schema.StringAttribute{
				Required:            true,
				MarkdownDescription: "ARM id of the job (`scheduler_job.<name>.id`).",
				Validators:          []validator.String{armID{job: true}},
			},
			"wait_for_completion": schema.BoolAttribute{
				Optional:            true,
				MarkdownDescription: "Wait for the execution to finish (its retries and error action included) and report its outcome; default `false`.",
			},
			"timeout": schema.StringAttribute{
				Optional:            true,
				MarkdownDescription: "How long to wait with `wait_for_completion`, a Go duration (`90s`, `10m`); default `10m`.",
			},
		},
	}
}

func (a *jobRunAction) Configure(_ context.Context, req action.ConfigureRequest, resp *action.ConfigureResponse) {
	a.data = providerDataFrom(req.ProviderData, &resp.Diagnostics)
}

func (a *jobRunAction) Invoke(ctx context.Context, req action.InvokeRequest, resp *action.InvokeResponse) {
	var m jobRunModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	timeout := defaultRunTimeout
	if s := m.Timeout.ValueString(); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil || d <= 0 {
			resp.Diagnostics.AddAttributeError(path.Root("timeout"), "Invalid timeout",
				fmt.Sprintf("timeout: %q is not a positive duration such as 90s or 10m", s))
			return
		}
		timeout = d
	}
	id, err := client.ParseJobID(m.JobID.ValueString())
	if err != nil {
		resp.Diagnostics.AddAttributeError(path.Root("job_id"), "Set job_id to a job's id", err.Error())
		return
	}
	c := clientFor(a.data, &resp.Diagnostics)
	if c == nil {
		return
	}
	before, err := runMark(ctx, c, id)
	if err != nil {
		apiError(&resp.Diagnostics, "reading job "+id.String(), err)
		return
	}
	if err := c.JobRun(ctx, id); err != nil {
		apiError(&resp.Diagnostics, "running job "+id.String(), err)
		return
	}
	progress(resp, "Job "+id.Name+": run requested")
	if !m.WaitForCompletion.ValueBool() {
		return
	}
	clk := a.data.clock
	if clk == nil {
		clk = clock.Real{}
	}
	out, err := waitForOutcome(ctx, c, clk, id, before, timeout)
	if err != nil {
		resp.Diagnostics.AddError("Job "+id.Name+" did not finish its run", err.Error())
		return
	}
	progress(resp, fmt.Sprintf("Job %s: the run %s (history entry %s: %s %s)", id.Name, out.outcome, out.last.Name, out.last.Properties.ActionName, out.last.Properties.Status))
	if out.outcome != "completed" {
		resp.Diagnostics.AddError("Job "+id.Name+": the run "+out.outcome, out.detail+" Last message: "+out.last.Properties.Message)
	}
}

// progress sends a progress message when the CLI listens for them.
func progress(resp *action.InvokeResponse, msg string) {
	if resp.SendProgress != nil {
		resp.SendProgress(action.InvokeProgressEvent{Message: msg})
	}
}

// mark is where a job was before a run: its failure counters and its newest history entry.
type mark struct {
	failures, faults int
	lastEntry        int64
}

func runMark(ctx context.Context, c *client.Client, id client.JobID) (mark, error) {
	j, err := c.JobGet(ctx, id)
	if err != nil {
		return mark{}, err
	}
	h, err := c.HistoryList(ctx, client.HistoryListParams{Job: id, Max: 1})
	if err != nil {
		return mark{}, err
	}
	m := mark{}
	m.failures, m.faults = failureCounts(j)
	if len(h) == 1 {
		m.lastEntry = entryNumber(h[0])
	}
	return m, nil
}

func failureCounts(j *wire.JobDefinition) (failures, faults int) {
	if j == nil || j.Properties == nil || j.Properties.Status == nil {
		return 0, 0
	}
	deref := func(n *int) int {
		if n == nil {
			return 0
		}
		return *n
	}
	return deref(j.Properties.Status.FailureCount), deref(j.Properties.Status.FaultedCount)
}

// entryNumber is the number ending a history entry's name ("collection/job/12").
func entryNumber(h wire.JobHistoryDefinition) int64 {
	n, _ := strconv.ParseInt(h.Name[strings.LastIndex(h.Name, "/")+1:], 10, 64)
	return n
}

// runOutcome is how a run ended, and its last history entry.
type runOutcome struct {
	outcome, detail string
	last            wire.JobHistoryDefinition
}

// waitForOutcome polls the job until the run has ended: its action completed (a new MainAction
// Completed entry), or it failed after its retries and the error action completed (the failure
// counter moved and a new ErrorAction Completed entry), or it faulted (the faulted counter
// moved: the error action failed too, or there was none). It gives up after timeout.
func waitForOutcome(ctx context.Context, c *client.Client, clk clock.Clock, id client.JobID, before mark, timeout time.Duration) (runOutcome, error) {
	deadline := clk.Now().Add(timeout)
	for {
		out, done, err := outcomeSince(ctx, c, id, before)
		if err != nil || done {
			return out, err
		}
		if !clk.Now().Before(deadline) {
			return out, fmt.Errorf("the run of job %s had not finished after %s (it goes on in the daemon)", id, timeout)
		}
		t := clk.NewTimer(250 * time.Millisecond)
		select {
		case <-ctx.Done():
			t.Stop()
			return out, fmt.Errorf("waiting for job %s: %w", id, ctx.Err())
		case <-t.C():
		}
	}
}

func outcomeSince(ctx context.Context, c *client.Client, id client.JobID, before mark) (runOutcome, bool, error) {
	j, err := c.JobGet(ctx, id)
	if err != nil {
		return runOutcome{}, false, fmt.Errorf("reading job %s: %w", id, err)
	}
	h, err := c.HistoryList(ctx, client.HistoryListParams{Job: id, Max: 100})
	if err != nil {
		return runOutcome{}, false, fmt.Errorf("reading the history of job %s: %w", id, err)
	}
	var fresh []wire.JobHistoryDefinition // newest first
	for _, e := range h {
		if entryNumber(e) > before.lastEntry && e.Properties != nil {
			fresh = append(fresh, e)
		}
	}
	if len(fresh) == 0 {
		return runOutcome{}, false, nil
	}
	failures, faults := failureCounts(j)
	has := func(action, status string) bool {
		for _, e := range fresh {
			if e.Properties.ActionName == action && e.Properties.Status == status {
				return true
			}
		}
		return false
	}
	switch {
	case faults > before.faults:
		return runOutcome{"faulted", "The action failed after its retries, and so did the error action (or there was none).", fresh[0]}, true, nil
	case failures > before.failures && has("ErrorAction", "Completed"):
		return runOutcome{"failed", "The action failed after its retries; the error action ran.", fresh[0]}, true, nil
	case has("MainAction", "Completed"):
		return runOutcome{"completed", "", fresh[0]}, true, nil
	}
	return runOutcome{}, false, nil
}
