package ui

import (
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
	maxCollections      = 1000 // collections listed on the overview
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

// nextRuns returns up to n coming runs of a job, as they start (jitter).
func nextRuns(j *store.Job, rule *recurrence.Rule, n int) []run {
	if rule == nil {
		return nil
	}
	at := jobstate.Upcoming(rule, j.State, j.CollectionState, j.Status.NextExecutionTime, j.Status.ExecutionCount, n)
	out := make([]run, len(at))
	for i, t := range at {
		out[i] = startOf(j, rule, t)
	}
	return out
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
	Day      int // 0: a blank cell
	Today    bool
	Excluded bool  // a date of the rule's excludeDates: no run
	Runs     []run // the first few, as they start
	More     int   // runs not listed
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
		// runs are left by then. A run is on the day it starts: an occurrence scheduled up to
		// the jitter before the month may start in it.
		it.SkipTo(month.Add(-rule.Jitter()))
		for steps := 0; ; steps++ {
			if steps >= maxCalendarRuns {
				cal.Truncated = true
				break
			}
			at, ok := it.Pop()
			if !ok || !at.Before(end) {
				break
			}
			r := startOf(j, rule, at)
			if r.Start.Before(month) || !r.Start.Before(end) {
				continue
			}
			r.Start = r.Start.In(loc)
			d := days[r.Start.Day()]
			if d == nil {
				d = &calendarDay{}
				days[r.Start.Day()] = d
			}
			if len(d.Runs) < 4 {
				d.Runs = append(d.Runs, r)
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
		cd.Excluded = rule != nil && rule.Excluded(time.Date(month.Year(), month.Month(), day, 12, 0, 0, 0, loc))
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
