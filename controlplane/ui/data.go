package ui

import (
	"container/heap"
	"context"
	"fmt"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/api"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/jobstate"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/recurrence"
)

// Limits of what one page reads, so that a page's cost stays bounded whatever the store holds.
const (
	maxCollections      = 1000   // collections listed on the overview
	maxOverviewJobs     = 10000  // jobs read by the overview
	maxHistoryScan      = 100000 // history entries the overview reads for its 24 hours
	historyPageScan     = 500    // history entries read per query
	nextRunsOverview    = 50
	nextRunsJob         = 10
	maxCalendarRuns     = 20000 // occurrences enumerated to fill one month
	collectionPageSizes = "25,100,1000"
)

// visibleCollections lists the collections p may see: all for an admin, its subscription's for
// a subscription token.
func (s *Server) visibleCollections(ctx context.Context, p api.Principal) ([]*store.Collection, error) {
	params := store.CollectionListParams{Limit: maxCollections}
	if !p.Admin {
		params.Subscription = p.Subscription
	}
	cs, err := s.store.CollectionList(ctx, params)
	if err != nil {
		return nil, fmt.Errorf("listing collections: %w", err)
	}
	return cs, nil
}

// compile returns a job's rule as the engine computes it (nil when it does not compile).
func compile(j *store.Job) *recurrence.Rule {
	rule, err := recurrence.Compile(j.Properties.StartTime, j.Properties.Recurrence, j.CreatedAt)
	if err != nil {
		return nil
	}
	return rule
}

// runIter walks a job's coming runs as the dispatcher will start them (jobstate.Runs).
type runIter struct {
	job  *store.Job
	rule *recurrence.Rule
	*jobstate.Runs
}

func newRunIter(j *store.Job, rule *recurrence.Rule) *runIter {
	if rule == nil {
		return nil
	}
	runs := jobstate.NewRuns(rule, j.State, j.CollectionState, j.Status.NextExecutionTime, j.Status.ExecutionCount)
	if runs == nil {
		return nil
	}
	return &runIter{job: j, rule: rule, Runs: runs}
}

// nextRuns returns up to n coming runs of a job.
func nextRuns(j *store.Job, rule *recurrence.Rule, n int) []time.Time {
	if rule == nil {
		return nil
	}
	return jobstate.Upcoming(rule, j.State, j.CollectionState, j.Status.NextExecutionTime, j.Status.ExecutionCount, n)
}

// upcoming is one coming run of a job, for the overview.
type upcoming struct {
	At   time.Time
	Job  *store.Job
	Zone string
}

// peek is the next run (an iterator with none left is taken off the heap at once).
func (it *runIter) peek() time.Time {
	at, _ := it.Peek()
	return at
}

type runHeap []*runIter

func (h runHeap) Len() int           { return len(h) }
func (h runHeap) Less(i, j int) bool { return h[i].peek().Before(h[j].peek()) }
func (h runHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *runHeap) Push(x any) {
	if it, ok := x.(*runIter); ok {
		*h = append(*h, it)
	}
}
func (h *runHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// mergeRuns returns the first n runs across jobs, in time order.
func mergeRuns(jobs []*store.Job, n int) []upcoming {
	h := runHeap{}
	for _, j := range jobs {
		rule := compile(j)
		if it := newRunIter(j, rule); it != nil {
			h = append(h, it)
		}
	}
	heap.Init(&h)
	out := make([]upcoming, 0, n)
	for len(out) < n && h.Len() > 0 {
		it := h[0]
		at, _ := it.Pop()
		out = append(out, upcoming{At: at, Job: it.job, Zone: it.rule.Location().String()})
		if _, ok := it.Peek(); !ok {
			heap.Pop(&h)
		} else {
			heap.Fix(&h, 0)
		}
	}
	return out
}

// outcomes counts executions by outcome.
type outcomes struct {
	Completed, Failed, Faulted int
	Truncated                  bool // the scan stopped at maxHistoryScan entries
}

// Total is every execution counted.
func (o outcomes) Total() int { return o.Completed + o.Failed + o.Faulted }

// executionsSince counts the executions of the jobs with an attempt that ended after since, by
// outcome: completed (the main action succeeded), failed (the main action failed and the error
// action succeeded) or faulted (neither succeeded; an execution still retrying counts here until
// it succeeds).
func (s *Server) executionsSince(ctx context.Context, jobs []*store.Job, since time.Time) (outcomes, error) {
	var o outcomes
	scanned := 0
	for _, j := range jobs {
		if j.Status.ExecutionCount == 0 {
			continue
		}
		type exec struct{ main, errAction bool }
		seen := map[int]*exec{}
		order := []int{}
		for skip := 0; ; skip += historyPageScan {
			hs, err := s.store.HistoryList(ctx, store.HistoryListParams{Job: j.Key, Skip: skip, Limit: historyPageScan})
			if err != nil {
				return o, fmt.Errorf("reading history: %w", err)
			}
			old := false
			for _, h := range hs {
				scanned++
				if h.EndTime.Before(since) {
					old = true
					continue
				}
				e, ok := seen[h.RepeatCount]
				if !ok {
					e = &exec{}
					seen[h.RepeatCount] = e
					order = append(order, h.RepeatCount)
				}
				if h.Status == store.HistoryCompleted {
					if h.ActionName == store.ActionError {
						e.errAction = true
					} else {
						e.main = true
					}
				}
			}
			if old || len(hs) < historyPageScan {
				break
			}
			if scanned >= maxHistoryScan {
				o.Truncated = true
				break
			}
		}
		for _, rc := range order {
			switch e := seen[rc]; {
			case e.main:
				o.Completed++
			case e.errAction:
				o.Failed++
			default:
				o.Faulted++
			}
		}
		if scanned >= maxHistoryScan {
			o.Truncated = true
			break
		}
	}
	return o, nil
}

// describe is a job's schedule in words (the engine's recurrence.Describe).
func describe(rule *recurrence.Rule) string {
	if rule == nil {
		return "(the schedule does not compile)"
	}
	return recurrence.Describe(rule)
}

// calendarDay is one day of a month calendar.
type calendarDay struct {
	Day   int // 0: a blank cell
	Today bool
	Runs  []time.Time // the first few
	More  int         // runs not listed
}

// calendar is a month of a job's coming runs in its zone, weeks starting on Monday.
type calendar struct {
	Month      time.Time // the first day, in the zone
	Zone       string
	Weeks      [][7]calendarDay
	Total      int
	Truncated  bool
	Prev, Next string // yyyy-mm of the neighbouring months ("" when out of range)
}

// monthCalendar builds the calendar of month (the first of a month in rule's zone).
func monthCalendar(j *store.Job, rule *recurrence.Rule, month, now time.Time) calendar {
	loc := time.UTC
	if rule != nil {
		loc = rule.Location()
	}
	month = time.Date(month.Year(), month.Month(), 1, 0, 0, 0, 0, loc)
	end := month.AddDate(0, 1, 0)
	cal := calendar{Month: month, Zone: loc.String()}
	today := now.In(loc)
	thisMonth := time.Date(today.Year(), today.Month(), 1, 0, 0, 0, 0, loc)
	if month.After(thisMonth) {
		cal.Prev = month.AddDate(0, -1, 0).Format("2006-01")
	}
	if month.Before(thisMonth.AddDate(5, 0, 0)) {
		cal.Next = end.Format("2006-01")
	}
	days := map[int]*calendarDay{}
	if it := newRunIter(j, rule); it != nil {
		// Without a count, jump to the month; with one, walk from the next run to know how many
		// runs are left by then.
		it.SkipTo(month)
		for steps := 0; ; steps++ {
			if steps >= maxCalendarRuns {
				cal.Truncated = true
				break
			}
			at, ok := it.Pop()
			if !ok || !at.Before(end) {
				break
			}
			if at.Before(month) {
				continue
			}
			at = at.In(loc)
			d := days[at.Day()]
			if d == nil {
				d = &calendarDay{}
				days[at.Day()] = d
			}
			if len(d.Runs) < 4 {
				d.Runs = append(d.Runs, at)
			} else {
				d.More++
			}
			cal.Total++
		}
	}
	lead := (int(month.Weekday()) + 6) % 7 // Monday first
	var week [7]calendarDay
	col := 0
	for i := 0; i < lead; i++ {
		col++
	}
	for day := 1; day <= end.AddDate(0, 0, -1).Day(); day++ {
		cd := calendarDay{Day: day}
		if d := days[day]; d != nil {
			cd.Runs, cd.More = d.Runs, d.More
		}
		cd.Today = month.Year() == today.Year() && month.Month() == today.Month() && day == today.Day()
		week[col] = cd
		col++
		if col == 7 {
			cal.Weeks = append(cal.Weeks, week)
			week, col = [7]calendarDay{}, 0
		}
	}
	if col > 0 {
		cal.Weeks = append(cal.Weeks, week)
	}
	return cal
}
