package ui

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/telemetry"
)

// collectionRow is a collection on the overview.
type collectionRow struct {
	C      *store.Collection
	Jobs   int
	States map[string]int
}

// problemRow is a failed or faulted execution on the overview.
type problemRow struct {
	Job     store.JobKey
	Outcome string
	Label   string
	Message string // the main action's message ("" when its history no longer holds it)
	End     time.Time
	Loc     *time.Location // the job's zone
}

type overviewData struct {
	Collections    []collectionRow
	CollectionsCut bool
	States         []stateCount
	HasExecutions  bool
	Executions     outcomes
	Since          time.Time // the executions are counted since then (the daemon's start, when later than 24 h ago)
	ExecChart      chart
	Problems       []problemRow
	Lateness       latenessStats
	HasLateness    bool
	LateChart      chart
	LoadChart      chart
	HasMinutes     bool
	Next           []nextRun
}

type stateCount struct {
	State string
	N     int
}

// outcomes counts executions by outcome.
type outcomes struct {
	Completed, Failed, Faulted int
}

// problemsShown is how many recent failed and faulted executions the overview lists.
const problemsShown = 20

func (s *Server) overview(w http.ResponseWriter, r *http.Request, req *request) {
	ctx := r.Context()
	p := req.sess.principal
	cs, err := s.visibleCollections(ctx, p)
	if err != nil {
		s.storeFail(w, r, err)
		return
	}
	d := overviewData{CollectionsCut: len(cs) >= maxCollections}
	sub := p.Subscription
	if p.Admin {
		sub = ""
	}
	// Jobs by collection and state in one query, whatever the number of jobs.
	counts, err := s.store.JobStateCount(ctx, store.JobStateCountParams{Subscription: sub})
	if err != nil {
		s.storeFail(w, r, err)
		return
	}
	byColl := map[int64]map[string]int{}
	total := map[string]int{}
	for _, c := range counts {
		if byColl[c.CollectionID] == nil {
			byColl[c.CollectionID] = map[string]int{}
		}
		byColl[c.CollectionID][c.State] += c.N
		total[c.State] += c.N
	}
	for _, c := range cs {
		row := collectionRow{C: c, States: byColl[c.ID]}
		for _, n := range row.States {
			row.Jobs += n
		}
		d.Collections = append(d.Collections, row)
	}
	for _, st := range jobStates {
		d.States = append(d.States, stateCount{st, total[st]})
	}
	now := s.clock.Now()
	if s.tel != nil {
		d.HasExecutions = true
		d.Since = now.Add(-24 * time.Hour)
		if st := s.tel.Started(); st.After(d.Since) {
			d.Since = st
		}
		d.ExecChart, d.Executions = executionsChart(s.tel.ExecutionsPerMinute(sub, now, telemetry.Minutes))
	}
	if d.Problems, err = s.problems(ctx, sub, now.Add(-24*time.Hour)); err != nil {
		s.storeFail(w, r, err)
		return
	}
	if p.Admin {
		d.Lateness, d.HasLateness = s.late.lastHour(now)
		if ms := s.late.perMinute(now); len(ms) > 0 {
			d.HasMinutes = true
			d.LateChart, d.LoadChart = minuteCharts(ms)
		}
	}
	next, err := s.store.JobListNext(ctx, store.JobListNextParams{Subscription: sub, Limit: nextRunsOverview})
	if err != nil {
		s.storeFail(w, r, err)
		return
	}
	d.Next = nextPerJob(next, nextRunsOverview)
	s.render(w, http.StatusOK, "overview", s.newView(req, "Overview", "overview", d))
}

// Bounds of the overview's recent failures: executions looked into, and the newest attempts of
// the store the failed ones are found among.
const (
	problemsChecked = 60
	problemsScan    = 100000
)

// problems finds the newest failed and faulted executions in the store's history since since
// (of one subscription, or all when sub is ""): each execution whose main action failed is
// looked at as a whole, and listed when its outcome is failed (the error action ran) or
// faulted, with the main action's message.
func (s *Server) problems(ctx context.Context, sub string, since time.Time) ([]problemRow, error) {
	fs, err := s.store.HistoryFailed(ctx, store.HistoryFailedParams{Subscription: sub, Since: since,
		Limit: problemsChecked * 4, Scan: problemsScan})
	if err != nil {
		return nil, fmt.Errorf("reading failed attempts: %w", err)
	}
	out := []problemRow{}
	seen := map[string]bool{}
	jobs := map[int64]*store.Job{}
	for _, f := range fs {
		id := strconv.FormatInt(f.Entry.JobID, 10) + "/" + f.Entry.ExecutionTag + "/" + strconv.Itoa(f.Entry.RepeatCount)
		if seen[id] {
			continue
		}
		seen[id] = true
		if len(seen) > problemsChecked || len(out) == problemsShown {
			break
		}
		j, ok := jobs[f.Entry.JobID]
		if !ok {
			j, err = s.store.JobGet(ctx, store.JobGetParams{Key: f.Job})
			if err != nil && !errors.Is(err, store.ErrNotFound) {
				return nil, err
			}
			jobs[f.Entry.JobID] = j
		}
		if j == nil {
			continue // deleted since
		}
		e, ok, err := s.executionByTag(ctx, j, f.Entry.ExecutionTag, f.Entry.RepeatCount)
		if err != nil {
			return nil, err
		}
		if !ok || (e.Outcome != outcomeFailed && e.Outcome != outcomeFaulted) {
			continue // recovered by a retry, still going, or older than what is read of its history
		}
		row := problemRow{Job: j.Key, Outcome: e.Outcome, Label: e.Label, Message: e.Message, End: e.End, Loc: time.UTC}
		if rule := compile(j); rule != nil {
			row.Loc = rule.Location()
		}
		out = append(out, row)
	}
	return out, nil
}

// executionsChart is the chart of executions per minute by outcome, with their totals.
func executionsChart(ms []telemetry.PerMinute) (chart, outcomes) {
	c := chart{ID: "chart-executions", Title: "Executions per minute by outcome, last 24 hours (UTC)", Bars: true,
		TimeFmt: "15:04", Series: []chartSeries{
			{Name: "Succeeded", Class: outcomeSucceeded}, {Name: "Failed, error action ran", Class: outcomeFailed}, {Name: "Faulted", Class: outcomeFaulted},
		}}
	var o outcomes
	peak, peakAt := 0, time.Time{}
	for _, m := range ms {
		c.Times = append(c.Times, m.Start)
		c.Series[0].Values = append(c.Series[0].Values, float64(m.Completed))
		c.Series[1].Values = append(c.Series[1].Values, float64(m.Failed))
		c.Series[2].Values = append(c.Series[2].Values, float64(m.Faulted))
		o.Completed += m.Completed
		o.Failed += m.Failed
		o.Faulted += m.Faulted
		if n := m.Completed + m.Failed + m.Faulted; n > peak {
			peak, peakAt = n, m.Start
		}
	}
	c.Desc = plural(o.Completed, "execution") + " succeeded, " + plural(o.Failed, "") + " failed with the error action run, " +
		plural(o.Faulted, "") + " faulted"
	if peak > 0 {
		c.Desc += "; busiest minute " + peakAt.UTC().Format("15:04") + " UTC with " + plural(peak, "execution")
	}
	c.Desc += "."
	return c, o
}

// minuteCharts are the lateness percentiles and the load (backlog, attempts running) per minute.
func minuteCharts(ms []minuteStats) (chart, chart) {
	late := chart{ID: "chart-lateness", Title: "Lateness per minute, last hour (UTC): 50th, 90th and 99th percentiles",
		Format: durationLabel, Series: []chartSeries{{Name: "p50", Class: "p50"}, {Name: "p90", Class: "p90"}, {Name: "p99", Class: "p99"}}}
	load := chart{ID: "chart-load", Title: "Due backlog and attempts running, last hour (UTC)",
		Series: []chartSeries{{Name: "Due backlog", Class: "backlog"}, {Name: "Attempts running", Class: "running"}}}
	worst, maxBacklog, maxRunning := math.NaN(), 0.0, 0.0
	for _, m := range ms {
		late.Times = append(late.Times, m.At)
		load.Times = append(load.Times, m.At)
		late.Series[0].Values = append(late.Series[0].Values, m.P50)
		late.Series[1].Values = append(late.Series[1].Values, m.P90)
		late.Series[2].Values = append(late.Series[2].Values, m.P99)
		load.Series[0].Values = append(load.Series[0].Values, m.Backlog)
		load.Series[1].Values = append(load.Series[1].Values, m.Running)
		if !math.IsNaN(m.P99) && (math.IsNaN(worst) || m.P99 > worst) {
			worst = m.P99
		}
		if !math.IsNaN(m.Backlog) {
			maxBacklog = max(maxBacklog, m.Backlog)
		}
		if !math.IsNaN(m.Running) {
			maxRunning = max(maxRunning, m.Running)
		}
	}
	late.Desc = "No execution started in these minutes."
	if !math.IsNaN(worst) {
		late.Desc = "The worst minute's 99th percentile was " + seconds(worst) + "."
	}
	load.Desc = "At most " + plural(int(maxBacklog), "occurrence") + " waited for a worker, and at most " +
		plural(int(maxRunning), "attempt") + " ran at once, in the minutes sampled."
	return late, load
}

// plural is "1 execution", "3 executions" (noun "": just the number).
func plural(n int, noun string) string {
	s := strconv.Itoa(n)
	if noun == "" {
		return s
	}
	if n == 1 {
		return s + " " + noun
	}
	return s + " " + noun + "s"
}
