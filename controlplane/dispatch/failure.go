package dispatch

import (
	"context"
	"strconv"
	"strings"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/action"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
)

// failureOf is what an execution's error action is told of the main action's failure (SPEC 8):
// from the execution's main-action history entries, how many there are and the newest one's
// status code and first line. nil when they cannot be read (the error action then runs without
// them, as in Azure).
func (ex *Executor) failureOf(ctx context.Context, job *store.Job, tag string) *action.Failure {
	hs, err := ex.store.HistoryList(ctx, store.HistoryListParams{Job: job.Key, Limit: 200})
	if err != nil {
		ex.log.Warn("reading the failed attempts for the error action", "job_id", job.ID, "execution_tag", tag, "error", err.Error())
		return nil
	}
	var f *action.Failure
	for _, h := range hs { // newest first
		if h.ExecutionTag != tag || h.ActionName != store.ActionMain {
			continue
		}
		if f == nil {
			f = &action.Failure{Reason: attemptReason(h.Message)}
			f.Status = statusOf(f.Reason)
		}
		f.Attempts++
	}
	return f
}

// attemptReason is the line of a history message that says what happened: the first, after the
// note on coalesced occurrences when there is one.
func attemptReason(msg string) string {
	first, rest, _ := strings.Cut(msg, "\n")
	if strings.Contains(first, " missed occurrence(s) before ") {
		first, _, _ = strings.Cut(rest, "\n")
	}
	return first
}

// statusOf reads the status code of a response's status line ("HTTP/1.1 503 Service
// Unavailable"); 0 when the line is not one.
func statusOf(line string) int {
	f := strings.Fields(line)
	if len(f) < 2 || !strings.HasPrefix(f[0], "HTTP/") {
		return 0
	}
	n, err := strconv.Atoi(f[1])
	if err != nil || n < 100 || n > 999 {
		return 0
	}
	return n
}
