package ui

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/jobstate"
)

// Outcomes of an execution, as the dashboard names them (CSS classes outcome-*).
const (
	outcomeSucceeded = "succeeded" // the main action succeeded
	outcomeFailed    = "failed"    // the main action failed; the error action ran and succeeded
	outcomeFaulted   = "faulted"   // neither succeeded (or there is no error action)
	outcomeRunning   = "running"   // not over: an attempt will be retried, or the error action runs next
)

// outcomeLabels are the words shown for each outcome.
var outcomeLabels = map[string]string{
	outcomeSucceeded: "Succeeded",
	outcomeFailed:    "Failed, error action ran",
	outcomeFaulted:   "Faulted",
	outcomeRunning:   "In progress",
}

// execution is one execution of a job, as its history tells it.
type execution struct {
	Tag      string
	Repeat   int // the execution's repeatCount
	Outcome  string
	Label    string
	Message  string // the main action's newest message
	Attempts int
	Expected time.Time // the occurrence's scheduled time
	Start    time.Time // the first attempt's start
	End      time.Time // the newest attempt's end
	Trace    traceRef  // its trace (set by the job page)
}

// Duration is from the first attempt's start to the newest attempt's end.
func (e execution) Duration() time.Duration { return e.End.Sub(e.Start) }

// outcomeOf is what happened to an execution whose newest attempt is newest: the rulebook's
// outcome of that attempt under the job's retry policies (jobstate.Attempt.Outcome).
func outcomeOf(j *store.Job, newest *store.HistoryEntry) string {
	a := jobstate.Attempt{
		Success: newest.Status == store.HistoryCompleted, Phase: newest.ActionName, Retries: newest.RetryCount,
		Policy:         jobstate.RetryPolicy(&j.Properties, newest.ActionName),
		HasErrorAction: j.Properties.Action != nil && j.Properties.Action.ErrorAction != nil,
		End:            newest.EndTime,
	}
	switch a.Outcome().Result {
	case jobstate.Succeeded:
		return outcomeSucceeded
	case jobstate.Recovered:
		return outcomeFailed
	case jobstate.FaultedOccurrence:
		return outcomeFaulted
	default:
		return outcomeRunning
	}
}

// executionsOf groups a job's history entries (newest first, as HistoryList returns them) into
// executions, newest first. When complete is false the entries may stop inside the oldest
// execution, which is then left out. Skipped entries (occurrences that did not run) are no
// execution: the history lists them.
func executionsOf(j *store.Job, hs []*store.HistoryEntry, complete bool) []execution {
	ran := hs[:0:0]
	for _, h := range hs {
		if h.Status != store.HistorySkipped {
			ran = append(ran, h)
		}
	}
	hs = ran
	var out []execution
	for i := 0; i < len(hs); {
		k := i + 1
		for k < len(hs) && sameExecution(hs[i], hs[k]) {
			k++
		}
		if k == len(hs) && !complete && len(out) > 0 {
			break
		}
		group := hs[i:k]
		e := execution{Tag: group[0].ExecutionTag, Repeat: group[0].RepeatCount, Attempts: len(group),
			Expected: group[0].ExpectedExecutionTime, End: group[0].EndTime, Start: group[len(group)-1].StartTime}
		e.Outcome = outcomeOf(j, group[0])
		e.Label = outcomeLabels[e.Outcome]
		for _, h := range group {
			if h.ActionName == store.ActionMain {
				e.Message = h.Message
				break
			}
		}
		out = append(out, e)
		i = k
	}
	return out
}

func sameExecution(a, b *store.HistoryEntry) bool {
	if a.ExecutionTag != "" || b.ExecutionTag != "" {
		return a.ExecutionTag == b.ExecutionTag
	}
	return a.RepeatCount == b.RepeatCount
}

// maxExecutionEntries bounds the history entries read to tell a job's recent executions.
const maxExecutionEntries = 200

// recentExecutions reads up to n of a job's newest executions. Skipped entries are no
// executions: when they fill the entries read (a job skipping occurrences while a long one runs),
// it reads further, up to maxExecutionEntries.
func (s *Server) recentExecutions(ctx context.Context, j *store.Job, n int) ([]execution, error) {
	if j.Status.ExecutionCount == 0 {
		return nil, nil
	}
	for limit := min(maxExecutionEntries, n*4); ; limit = min(maxExecutionEntries, limit*4) {
		hs, err := s.store.HistoryList(ctx, store.HistoryListParams{Job: j.Key, Limit: limit})
		if err != nil {
			return nil, fmt.Errorf("reading history: %w", err)
		}
		es := executionsOf(j, hs, len(hs) < limit)
		if len(es) >= n || len(hs) < limit || limit == maxExecutionEntries {
			if len(es) > n {
				es = es[:n]
			}
			return es, nil
		}
	}
}

// executionByTag returns the execution of a job with a tag (and repeatCount), from its newest
// history entries; ok is false when they do not hold it.
func (s *Server) executionByTag(ctx context.Context, j *store.Job, tag string, repeat int) (execution, bool, error) {
	hs, err := s.store.HistoryList(ctx, store.HistoryListParams{Job: j.Key, Limit: maxExecutionEntries})
	if err != nil {
		return execution{}, false, fmt.Errorf("reading history: %w", err)
	}
	for _, e := range executionsOf(j, hs, len(hs) < maxExecutionEntries) {
		if e.Tag == tag && e.Repeat == repeat {
			return e, true, nil
		}
	}
	return execution{}, false, nil
}

// nextRun is a job's next run, in its zone, for the overview.
type nextRun struct {
	At   time.Time // in the job's zone
	Job  *store.Job
	Zone string
}

// nextPerJob returns the next run of each job that will fire, soonest first, at most n (the
// rulebook's coming runs: jobstate.NewRuns).
func nextPerJob(jobs []*store.Job, n int) []nextRun {
	var out []nextRun
	for _, j := range jobs {
		rule := compile(j)
		runs := jobstate.NewRuns(rule, j.State, j.CollectionState, j.Status.NextExecutionTime, j.Status.ExecutionCount)
		if runs == nil {
			continue
		}
		at, ok := runs.Peek()
		if !ok {
			continue
		}
		out = append(out, nextRun{At: startOf(j, rule, at).Start.In(rule.Location()), Job: j, Zone: rule.Location().String()})
	}
	sort.SliceStable(out, func(a, b int) bool { return out[a].At.Before(out[b].At) })
	if len(out) > n {
		out = out[:n]
	}
	return out
}

// recentRuns is how many executions the job page shows and charts.
const recentRuns = 50

// runsChart is the chart of a job's recent executions: one bar each, oldest left, its height
// the execution's duration, its colour its outcome.
func runsChart(es []execution, loc *time.Location) chart {
	c := chart{ID: "chart-runs", Title: "Duration and outcome of the last " + plural(len(es), "execution") + ", oldest first",
		Bars: true, Slots: recentRuns, Format: durationLabel, Zone: loc, TimeFmt: "01-02 15:04"}
	order := []string{outcomeSucceeded, outcomeFailed, outcomeFaulted, outcomeRunning}
	for _, o := range order {
		c.Series = append(c.Series, chartSeries{Name: outcomeLabels[o], Class: o})
	}
	counts := map[string]int{}
	longest := 0.0
	for i := len(es) - 1; i >= 0; i-- {
		e := es[i]
		c.Times = append(c.Times, e.Start)
		d := max(e.Duration().Seconds(), 0)
		longest = max(longest, d)
		counts[e.Outcome]++
		for k, o := range order {
			v := 0.0
			if o == e.Outcome {
				v = d
			}
			c.Series[k].Values = append(c.Series[k].Values, v)
		}
	}
	// An execution that took no measurable time still shows as a sliver of its colour.
	for k := range c.Series {
		for i, v := range c.Series[k].Values {
			if v == 0 && order[k] == es[len(es)-1-i].Outcome {
				c.Series[k].Values[i] = max(longest, 0.001) / 50
			}
		}
	}
	c.Desc = plural(counts[outcomeSucceeded], "") + " succeeded, " + plural(counts[outcomeFailed], "") + " failed with the error action run, " +
		plural(counts[outcomeFaulted], "") + " faulted, " + plural(counts[outcomeRunning], "") + " in progress; the longest took " + seconds(longest) + "."
	return c
}
