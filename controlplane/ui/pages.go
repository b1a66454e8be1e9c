package ui

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/ascii"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/jobstate"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"
)

// pageNames are the dashboard's pages, each parsed with the layout (templates/<page>.html).
var pageNames = [...]string{"signin", "overview", "collection", "job", "health", "error"}

// pageSet parses each page's templates on the first request that renders it, not at start: a
// replica that nobody signs in to never holds the parsed trees (about 0.5 MB of heap, and the
// template packages' code pages). The templates are embedded, so a page that does not parse is
// a build defect (TestEveryPageParses), not a runtime condition.
type pageSet struct {
	funcs template.FuncMap
	mu    sync.Mutex
	pages map[string]*template.Template // parsed so far
}

// get returns the page's templates, parsing them on first use.
func (ps *pageSet) get(page string) (*template.Template, error) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if t := ps.pages[page]; t != nil {
		return t, nil
	}
	t, err := template.New(page).Funcs(ps.funcs).ParseFS(templateFS, "templates/layout.html", "templates/extensions.html", "templates/backfill.html", "templates/"+page+".html")
	if err != nil {
		return nil, fmt.Errorf("ui: template %s: %w", page, err)
	}
	if ps.pages == nil {
		ps.pages = map[string]*template.Template{}
	}
	ps.pages[page] = t
	return t, nil
}

// parsedCount is how many pages are parsed so far (tests).
func (ps *pageSet) parsedCount() int {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	return len(ps.pages)
}

// newPages returns the dashboard's pages, none parsed yet.
func (s *Server) newPages() *pageSet {
	funcs := template.FuncMap{
		"when": func(t time.Time) string {
			if t.IsZero() {
				return "—"
			}
			return t.Format("2006-01-02 15:04:05 MST")
		},
		"whenIn": func(t time.Time, loc *time.Location) string {
			if t.IsZero() {
				return "—"
			}
			return t.In(loc).Format("2006-01-02 15:04:05 MST")
		},
		"hhmm": func(t time.Time) string { return t.Format("15:04") },
		"iso":  func(t time.Time) string { return t.UTC().Format(time.RFC3339) },
		"ago":  s.relative,
		"collectionPath": func(k store.CollectionKey) string {
			return collectionPath(k)
		},
		"jobPath":  func(k store.JobKey) string { return jobPath(k) },
		"lower":    ascii.Lower,
		"add":      func(a, b int) int { return a + b },
		"duration": func(d time.Duration) string { return seconds(d.Seconds()) },
	}
	return &pageSet{funcs: funcs}
}

// relative is a time relative to now: "in 5 min", "3 h ago".
func (s *Server) relative(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	d := t.Sub(s.clock.Now())
	suffix, prefix := "", "in "
	if d < 0 {
		d, suffix, prefix = -d, " ago", ""
	}
	var v string
	switch {
	case d < time.Minute:
		v = strconv.Itoa(int(d/time.Second)) + " s"
	case d < time.Hour:
		v = strconv.Itoa(int(d/time.Minute)) + " min"
	case d < 48*time.Hour:
		v = strconv.Itoa(int(d/time.Hour)) + " h"
	default:
		v = strconv.Itoa(int(d/(24*time.Hour))) + " days"
	}
	return prefix + v + suffix
}

// jobRow is a job on its collection's page.
type jobRow struct {
	J        *store.Job
	Schedule string
	Loc      *time.Location
	Last     *execution // the newest execution (nil: none)
	Pause    pause
	Next     run // its next execution as it starts
}

type collectionData struct {
	C          *store.Collection
	Total      int
	State      string
	States     []string
	Per        int
	Page       int
	Rows       []jobRow
	PrevURL    string
	NextURL    string
	FilterURLs map[string]string
	PerURLs    map[int]string
}

// collectionPageSizes are the sizes offered (?per=).
var pageSizes = []int{25, 100, 1000}

func (s *Server) collection(w http.ResponseWriter, r *http.Request, req *request) {
	k, ok := keyOf(r, req.sess.principal)
	if !ok {
		s.storeFail(w, r, store.ErrNotFound)
		return
	}
	d, err := s.collectionData(r.Context(), k.CollectionKey, r.URL.Query())
	if err != nil {
		s.storeFail(w, r, err)
		return
	}
	s.render(w, http.StatusOK, "collection", s.newView(req, d.C.Key.Name, "", d))
}

// collectionData reads a page of a collection's jobs (query: state, page, per).
func (s *Server) collectionData(ctx context.Context, key store.CollectionKey, q url.Values) (*collectionData, error) {
	c, err := s.store.CollectionGet(ctx, store.CollectionGetParams{Key: key})
	if err != nil {
		return nil, err
	}
	d := &collectionData{C: c, State: canonicalState(q.Get("state")), States: jobStates, Per: 100, Page: 1}
	if n, err := strconv.Atoi(q.Get("per")); err == nil {
		for _, size := range pageSizes {
			if n == size {
				d.Per = n
			}
		}
	}
	if n, err := strconv.Atoi(q.Get("page")); err == nil && n >= 1 && n <= 1_000_000 {
		d.Page = n
	}
	if d.Total, err = s.store.JobCount(ctx, store.JobCountParams{Collection: c.Key}); err != nil {
		return nil, err
	}
	jobs, err := s.store.JobList(ctx, store.JobListParams{Collection: c.Key, State: d.State, Skip: (d.Page - 1) * d.Per, Limit: d.Per + 1})
	if err != nil {
		return nil, err
	}
	link := func(state string, page, per int) string {
		v := url.Values{}
		if state != "" {
			v.Set("state", state)
		}
		if page > 1 {
			v.Set("page", strconv.Itoa(page))
		}
		if per != 100 {
			v.Set("per", strconv.Itoa(per))
		}
		if len(v) == 0 {
			return collectionPath(c.Key)
		}
		return collectionPath(c.Key) + "?" + v.Encode()
	}
	if len(jobs) > d.Per {
		jobs = jobs[:d.Per]
		d.NextURL = link(d.State, d.Page+1, d.Per)
	}
	if d.Page > 1 {
		d.PrevURL = link(d.State, d.Page-1, d.Per)
	}
	d.FilterURLs = map[string]string{"": link("", 1, d.Per)}
	for _, st := range jobStates {
		d.FilterURLs[st] = link(st, 1, d.Per)
	}
	d.PerURLs = map[int]string{}
	for _, size := range pageSizes {
		d.PerURLs[size] = link(d.State, 1, size)
	}
	d.Rows = make([]jobRow, len(jobs))
	for i, j := range jobs {
		rule := compile(j)
		row := jobRow{J: j, Schedule: describe(rule), Loc: time.UTC}
		if rule != nil {
			row.Loc = rule.Location()
		}
		row.Pause = pauseOf(j, row.Loc)
		row.Next = startOf(j, rule, j.Status.NextExecutionTime)
		es, err := s.recentExecutions(ctx, j, 1)
		if err != nil {
			return nil, err
		}
		if len(es) > 0 {
			row.Last = &es[0]
		}
		d.Rows[i] = row
	}
	return d, nil
}

// historyPageSize is the history entries per page of a job.
const historyPageSize = 20

type jobData struct {
	J          *store.Job
	Schedule   string
	Zone       string
	Loc        *time.Location
	Definition string
	Next       []run
	Calendar   calendar
	CalPrev    string
	CalNext    string
	History    []historyRow
	Policies   policies
	Pause      pause
	NextRun    run         // the stored next execution as it starts
	Waiting    *waiting    // the occurrence the BufferOne overlap policy keeps waiting (nil: none)
	Executions []execution // the newest, newest first
	RunsChart  chart       // their durations and outcomes
	Status     string
	Statuses   []string
	StatusURLs map[string]string
	Page       int
	PrevURL    string
	NextURL    string
	Path       string
	CanEnable  bool
	CanDisable bool
	CanRun     bool
}

func (s *Server) job(w http.ResponseWriter, r *http.Request, req *request) {
	ctx := r.Context()
	k, ok := keyOf(r, req.sess.principal)
	if !ok {
		s.storeFail(w, r, store.ErrNotFound)
		return
	}
	j, err := s.store.JobGet(ctx, store.JobGetParams{Key: k})
	if err != nil {
		s.storeFail(w, r, err)
		return
	}
	q := r.URL.Query()
	rule := compile(j)
	d := jobData{J: j, Schedule: describe(rule), Zone: "UTC", Path: jobPath(j.Key),
		Status: canonicalStatus(q.Get("status")), Statuses: historyStatuses, Page: pageNumber(r)}
	loc := time.UTC
	if rule != nil {
		loc = rule.Location()
		d.Zone = loc.String()
	}
	d.Loc = loc
	d.Pause = pauseOf(j, loc)
	d.NextRun = startOf(j, rule, j.Status.NextExecutionTime)
	d.CanRun = !jobstate.Final(j.State)
	d.CanEnable = j.State == store.JobStateDisabled
	d.CanDisable = j.State == store.JobStateEnabled
	link := func(status string, page int, month string) string {
		v := url.Values{}
		if status != "" {
			v.Set("status", status)
		}
		if page > 1 {
			v.Set("page", strconv.Itoa(page))
		}
		if month != "" {
			v.Set("month", month)
		}
		if len(v) == 0 {
			return d.Path
		}
		return d.Path + "?" + v.Encode()
	}
	hs, err := s.store.HistoryList(ctx, store.HistoryListParams{Job: j.Key, Status: d.Status,
		Skip: (d.Page - 1) * historyPageSize, Limit: historyPageSize + 1})
	if err != nil {
		s.storeFail(w, r, err)
		return
	}
	month := q.Get("month")
	if len(hs) > historyPageSize {
		hs = hs[:historyPageSize]
		d.NextURL = link(d.Status, d.Page+1, month)
	}
	if d.Page > 1 {
		d.PrevURL = link(d.Status, d.Page-1, month)
	}
	d.History = make([]historyRow, len(hs))
	for i, h := range hs {
		d.History[i] = historyRow{HistoryEntry: h, Trace: s.traceOf(j, h)}
	}
	d.StatusURLs = map[string]string{"": link("", 1, month)}
	for _, st := range historyStatuses {
		d.StatusURLs[st] = link(st, 1, month)
	}
	if r.Header.Get("X-Fragment") == "history" {
		s.renderTemplate(w, http.StatusOK, "job", "history", s.newView(req, j.Key.Name, "", d))
		return
	}
	now := s.clock.Now()
	start := now.In(loc)
	if m, err := time.ParseInLocation("2006-01", month, loc); err == nil {
		if !m.Before(time.Date(start.Year(), start.Month(), 1, 0, 0, 0, 0, loc)) && m.Before(start.AddDate(5, 1, 0)) {
			start = m
		}
	}
	d.Calendar = monthCalendar(j, rule, start, now)
	if d.Calendar.Prev != "" {
		d.CalPrev = link(d.Status, d.Page, d.Calendar.Prev)
	}
	if d.Calendar.Next != "" {
		d.CalNext = link(d.Status, d.Page, d.Calendar.Next)
	}
	d.Next = nextRuns(j, rule, nextRunsJob)
	d.Policies = jobPolicies(j, rule, s.misfire)
	if d.Waiting, err = s.waitingOf(ctx, j, loc); err != nil {
		s.storeFail(w, r, err)
		return
	}
	if d.Executions, err = s.recentExecutions(ctx, j, recentRuns); err != nil {
		s.storeFail(w, r, err)
		return
	}
	for i := range d.Executions {
		d.Executions[i].Trace = s.traceOfTag(j, d.Executions[i].Tag)
	}
	d.RunsChart = runsChart(d.Executions, loc)
	status, body, msg := s.callAPI(ctx, req.sess.principal, http.MethodGet, apiPath(j.Key), nil)
	if status != http.StatusOK {
		d.Definition = "(the API answered " + strconv.Itoa(status) + ": " + msg + ")"
	} else {
		var buf bytes.Buffer
		if err := json.Indent(&buf, body, "", "  "); err != nil {
			d.Definition = string(body)
		} else {
			d.Definition = buf.String()
		}
	}
	s.render(w, http.StatusOK, "job", s.newView(req, j.Key.Name, "", d))
}

// actionResult is the answer of a button to fetch().
type actionResult struct {
	OK      bool   `json:"ok"`
	Message string `json:"message"`
	State   string `json:"state,omitempty"`
	Next    string `json:"next,omitempty"`
}

// backfillDone says what a backfill the API accepted (its 202 body) does.
func backfillDone(job string, body []byte) string {
	var b wire.JobBackfillResponse
	if err := json.Unmarshal(body, &b); err != nil || b.Count == 0 {
		return "Started a backfill of " + job + "."
	}
	return fmt.Sprintf("Started a backfill of %s: %d occurrences from %s to %s, run one after the other, oldest first; the history shows each as it ends.",
		job, b.Count, b.First, b.Last)
}

// jobAction runs, enables, disables or backfills a job through the API, then answers fetch() with JSON or
// a form with a redirect to the job's page and the result as a flash message.
func (s *Server) jobAction(w http.ResponseWriter, r *http.Request, req *request) {
	r.Body = http.MaxBytesReader(w, r.Body, 8<<10)
	if err := checkCSRF(r, req.sess); err != nil {
		s.fail(w, r, http.StatusForbidden, err.Error())
		return
	}
	k, ok := keyOf(r, req.sess.principal)
	if !ok {
		s.storeFail(w, r, store.ErrNotFound)
		return
	}
	ctx := r.Context()
	p := req.sess.principal
	var (
		status int
		msg    string
		done   string
	)
	switch r.PathValue("action") {
	case "run":
		status, _, msg = s.callAPI(ctx, p, http.MethodPost, apiPath(k)+"/run", nil)
		done = "Started a run of " + k.Name + " now: its history shows it as soon as its first attempt ends."
	case "enable", "disable":
		state := store.JobStateEnabled
		if r.PathValue("action") == "disable" {
			state = store.JobStateDisabled
		}
		body := map[string]any{"properties": map[string]any{"state": state}}
		status, _, msg = s.callAPI(ctx, p, http.MethodPatch, apiPath(k), body)
		done = k.Name + " is " + state + "."
	case "backfill":
		var body []byte
		status, body, msg = s.callAPI(ctx, p, http.MethodPost, apiPath(k)+"/backfill",
			map[string]any{"from": r.PostFormValue("from"), "to": r.PostFormValue("to")})
		done = backfillDone(k.Name, body)
	default:
		s.fail(w, r, http.StatusNotFound, "There is no such action.")
		return
	}
	res := actionResult{OK: status < 300, Message: done}
	if !res.OK {
		res.Message = "The API refused: " + msg
	}
	if j, err := s.store.JobGet(ctx, store.JobGetParams{Key: k}); err == nil {
		res.State = j.State
		if !j.Status.NextExecutionTime.IsZero() {
			loc := time.UTC
			rule := compile(j)
			if rule != nil {
				loc = rule.Location()
			}
			res.Next = startOf(j, rule, j.Status.NextExecutionTime).Start.In(loc).Format("2006-01-02 15:04:05 MST")
			if res.OK && r.PathValue("action") == "enable" {
				res.Message += " Next run: " + res.Next + "."
			}
		}
	} else if !errors.Is(err, store.ErrNotFound) {
		s.log.ErrorContext(ctx, "dashboard store error", "error", err.Error())
	}
	if wantsJSON(r) {
		code := http.StatusOK
		if !res.OK {
			code = status
		}
		writeJSON(w, code, res)
		return
	}
	s.sessions.setFlash(req.id, res.Message)
	http.Redirect(w, r, jobPath(k), http.StatusSeeOther)
}

type healthData struct {
	Store        string
	StoreOK      bool
	StoreLatency string
	Driver       string
	Dispatcher   string
	DispatcherOK bool
	Backlog      float64
	HasBacklog   bool
	Lateness     latenessStats
	HasLateness  bool
	Replica      string
	Leading      bool
	SingleNode   bool
}

func (s *Server) health(w http.ResponseWriter, r *http.Request, req *request) {
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	d := healthData{StoreOK: true, Store: "answers", DispatcherOK: s.disp.Ready(), Dispatcher: "ready"}
	start := time.Now()
	_, err := s.store.CollectionGet(ctx, store.CollectionGetParams{Key: store.CollectionKey{Subscription: "-health-", ResourceGroup: "-", Name: "-"}})
	d.StoreLatency = seconds(time.Since(start).Seconds())
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		d.StoreOK, d.Store = false, "unreachable"
		s.log.ErrorContext(ctx, "dashboard health: store", "error", err.Error())
	}
	if !d.DispatcherOK {
		d.Dispatcher = "not ready (loading or stopping)"
	}
	if req.sess.principal.Admin {
		d.Driver = store.Describe(s.store)
		d.Backlog, d.HasBacklog = gaugeValue(s.gatherer, backlogMetric)
		d.Lateness, d.HasLateness = s.late.lastHour(s.clock.Now())
	}
	d.SingleNode = s.replica == nil
	if s.replica != nil {
		d.Replica, d.Leading = s.replica.ID(), s.replica.Leading()
	}
	s.render(w, http.StatusOK, "health", s.newView(req, "Health", "health", d))
}
