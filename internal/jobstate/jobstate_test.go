package jobstate_test

import (
	"strings"
	"testing"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/internal/jobstate"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/recurrence"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/retry"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"
)

func intp(i int) *int { return &i }

func ts(t *testing.T, s string) time.Time {
	t.Helper()
	if s == "" {
		return time.Time{}
	}
	v, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func format(ts []time.Time) string {
	s := make([]string, len(ts))
	for i, t := range ts {
		s[i] = t.UTC().Format(time.RFC3339Nano)
	}
	return strings.Join(s, " ")
}

func compile(t *testing.T, start string, rec *wire.JobRecurrence, created time.Time) *recurrence.Rule {
	t.Helper()
	r, err := recurrence.Compile(start, rec, created)
	if err != nil {
		t.Fatalf("Compile(%q, %+v): %v", start, rec, err)
	}
	return r
}

func TestStates(t *testing.T) {
	cases := append([]jobstate.StateCase{
		// A collection whose state is not set (never stored: the API fills it) lets its jobs run
		// on request, not on schedule.
		{State: jobstate.Enabled, Collection: "", Scheduled: true, ManualRunAllowed: true},
	}, jobstate.StateTable...)
	for _, c := range cases {
		var next time.Time
		if c.Scheduled {
			next = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		}
		if got := jobstate.Final(c.State); got != c.Final {
			t.Errorf("Final(%s) = %v", c.State, got)
		}
		if got := jobstate.Claimable(c.State, c.Collection); got != c.Claimable {
			t.Errorf("Claimable(%s, %q) = %v", c.State, c.Collection, got)
		}
		if got := jobstate.Schedulable(c.State, c.Collection, next); got != c.Schedulable {
			t.Errorf("Schedulable(%s, %q, %v) = %v", c.State, c.Collection, next, got)
		}
		if got := jobstate.ManualRunAllowed(c.State, c.Collection); got != c.ManualRunAllowed {
			t.Errorf("ManualRunAllowed(%s, %q) = %v", c.State, c.Collection, got)
		}
	}
}

// TestFirstRun pins the seeds' startTime table (SPEC 4.3), with count and endTime, and what an
// update or an enable does to a job that has executed.
func TestFirstRun(t *testing.T) {
	now := ts(t, "2015-04-08T13:00:00Z")
	created := ts(t, "2015-04-01T09:30:00Z") // anchor of the jobs without startTime, written before
	day2 := func() *wire.JobRecurrence { return &wire.JobRecurrence{Frequency: "Day", Interval: intp(2)} }
	cases := []struct {
		name       string
		start      string
		rec        *wire.JobRecurrence
		state      string
		coll       string
		executed   int
		want       string
		wantState  string
		createdNow bool // the job is created at now (anchor now) rather than at created
	}{
		// The table: rows (startTime), columns (recurrence).
		{name: "no startTime, no recurrence: once, immediately", want: "2015-04-08T13:00:00Z", createdNow: true},
		{name: "no startTime, recurrence: immediately at creation", rec: day2(), want: "2015-04-08T13:00:00Z", createdNow: true},
		{name: "startTime past, no recurrence: once, immediately", start: "2015-04-07T14:00:00Z", want: "2015-04-08T13:00:00Z"},
		{name: "startTime past, recurrence: the candidates at or after now (seed example)", start: "2015-04-07T14:00:00Z", rec: day2(), want: "2015-04-09T14:00:00Z"},
		{name: "seed example, startTime 04-05", start: "2015-04-05T14:00", rec: day2(), want: "2015-04-09T14:00:00Z"},
		{name: "seed example, startTime 04-01", start: "2015-04-01T14:00:00+00:00", rec: day2(), want: "2015-04-09T14:00:00Z"},
		{name: "startTime future, no recurrence: once, at startTime", start: "2015-04-10T08:00:00Z", want: "2015-04-10T08:00:00Z"},
		{name: "startTime now, no recurrence: at startTime", start: "2015-04-08T13:00:00Z", want: "2015-04-08T13:00:00Z"},
		{name: "startTime future, recurrence: from startTime", start: "2015-04-10T08:00:00Z", rec: day2(), want: "2015-04-10T08:00:00Z"},
		{name: "startTime future, not a candidate: the first candidate after it",
			start: "2015-04-10T08:00:00Z", rec: &wire.JobRecurrence{Frequency: "Day", Interval: intp(1), Schedule: &wire.JobRecurrenceSchedule{Hours: []int{6}}},
			want: "2015-04-11T06:00:00Z"},
		// count and endTime.
		{name: "count spent: Completed", start: "2015-04-07T14:00:00Z", rec: &wire.JobRecurrence{Frequency: "Day", Interval: intp(2), Count: intp(3)},
			executed: 3, wantState: jobstate.Completed},
		{name: "count not spent", start: "2015-04-07T14:00:00Z", rec: &wire.JobRecurrence{Frequency: "Day", Interval: intp(2), Count: intp(3)},
			executed: 2, want: "2015-04-09T14:00:00Z"},
		{name: "endTime passed: Completed", start: "2015-04-01T14:00:00Z", rec: &wire.JobRecurrence{Frequency: "Day", Interval: intp(1), EndTime: "2015-04-05T00:00:00Z"},
			wantState: jobstate.Completed},
		{name: "endTime inclusive", start: "2015-04-01T14:00:00Z", rec: &wire.JobRecurrence{Frequency: "Day", Interval: intp(1), EndTime: "2015-04-08T14:00:00Z"},
			want: "2015-04-08T14:00:00Z"},
		// An update or enable of a job that executed never repeats the immediate run.
		{name: "executed, no startTime, recurrence: the next candidate, not now", rec: day2(), executed: 1, want: "2015-04-09T09:30:00Z"},
		{name: "executed, no startTime, no recurrence: Completed", executed: 1, wantState: jobstate.Completed},
		{name: "executed, startTime past, no recurrence: Completed", start: "2015-04-07T14:00:00Z", executed: 1, wantState: jobstate.Completed},
		{name: "executed, startTime future, no recurrence: at startTime", start: "2015-04-10T08:00:00Z", executed: 1, want: "2015-04-10T08:00:00Z"},
		{name: "executed, startTime past, recurrence: unchanged", start: "2015-04-07T14:00:00Z", rec: day2(), executed: 5, want: "2015-04-09T14:00:00Z"},
		// States that do not fire.
		{name: "Disabled: no next, state kept", state: jobstate.Disabled, rec: day2(), wantState: jobstate.Disabled},
		{name: "collection Disabled: no next, state kept", coll: "Disabled", rec: day2(), wantState: jobstate.Enabled},
		{name: "collection state unset: no next", coll: "-", rec: day2(), wantState: jobstate.Enabled},
		{name: "Disabled with count spent stays Disabled", state: jobstate.Disabled, rec: &wire.JobRecurrence{Frequency: "Day", Count: intp(1)},
			executed: 1, wantState: jobstate.Disabled},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			at := created
			if c.createdNow {
				at = now
			}
			rule := compile(t, c.start, c.rec, at)
			state, coll := c.state, c.coll
			if state == "" {
				state = jobstate.Enabled
			}
			switch coll {
			case "":
				coll = jobstate.CollectionEnabled
			case "-":
				coll = ""
			}
			wantState := c.wantState
			if wantState == "" {
				wantState = state
			}
			next, got := jobstate.FirstRun(rule, state, coll, c.executed, now)
			if !next.Equal(ts(t, c.want)) || got != wantState {
				t.Errorf("FirstRun = %v %s, want %s %s", next, got, c.want, wantState)
			}
		})
	}
}

func TestClaim(t *testing.T) {
	minute := &wire.JobRecurrence{Frequency: "Minute", Interval: intp(1)}
	start := "2026-01-01T00:00:00Z"
	cases := []struct {
		name      string
		rec       *wire.JobRecurrence
		start     string
		due, now  string
		executed  int
		misfire   time.Duration
		scheduled string
		missed    int
		next      string
	}{
		{name: "on time", rec: minute, start: start, due: "2026-01-01T00:05:00Z", now: "2026-01-01T00:05:00Z", misfire: time.Minute,
			scheduled: "2026-01-01T00:05:00Z", next: "2026-01-01T00:06:00Z"},
		{name: "claimed ahead", rec: minute, start: start, due: "2026-01-01T00:05:00Z", now: "2026-01-01T00:04:59.5Z", misfire: time.Minute,
			scheduled: "2026-01-01T00:05:00Z", next: "2026-01-01T00:06:00Z"},
		{name: "late within the threshold: each runs", rec: minute, start: start, due: "2026-01-01T00:05:00Z", now: "2026-01-01T00:06:00Z", misfire: time.Minute,
			scheduled: "2026-01-01T00:05:00Z", next: "2026-01-01T00:06:00Z"},
		{name: "misfire: coalesced into the latest due", rec: minute, start: start, due: "2026-01-01T00:05:00Z", now: "2026-01-01T00:10:30Z", misfire: time.Minute,
			scheduled: "2026-01-01T00:10:00Z", missed: 5, next: "2026-01-01T00:11:00Z"},
		{name: "misfire exactly at the threshold: not coalesced", rec: minute, start: start, due: "2026-01-01T00:05:00Z", now: "2026-01-01T00:06:00Z", misfire: 60 * time.Second,
			scheduled: "2026-01-01T00:05:00Z", next: "2026-01-01T00:06:00Z"},
		{name: "count: the last execution has no next", rec: &wire.JobRecurrence{Frequency: "Minute", Interval: intp(1), Count: intp(3)}, start: start,
			due: "2026-01-01T00:02:00Z", now: "2026-01-01T00:02:00Z", executed: 2, misfire: time.Minute, scheduled: "2026-01-01T00:02:00Z"},
		{name: "count: coalesced ones do not count", rec: &wire.JobRecurrence{Frequency: "Minute", Interval: intp(1), Count: intp(3)}, start: start,
			due: "2026-01-01T00:00:00Z", now: "2026-01-01T00:30:00Z", executed: 0, misfire: time.Minute,
			scheduled: "2026-01-01T00:30:00Z", missed: 30, next: "2026-01-01T00:31:00Z"},
		{name: "endTime: the last candidate has no next", rec: &wire.JobRecurrence{Frequency: "Minute", Interval: intp(1), EndTime: "2026-01-01T00:03:00Z"}, start: start,
			due: "2026-01-01T00:03:00Z", now: "2026-01-01T00:03:00Z", misfire: time.Minute, scheduled: "2026-01-01T00:03:00Z"},
		{name: "misfire stops at endTime", rec: &wire.JobRecurrence{Frequency: "Minute", Interval: intp(1), EndTime: "2026-01-01T00:03:00Z"}, start: start,
			due: "2026-01-01T00:01:00Z", now: "2026-01-01T01:00:00Z", misfire: time.Minute, scheduled: "2026-01-01T00:03:00Z", missed: 2},
		{name: "one-shot", start: "2026-01-01T00:00:00Z", due: "2026-01-01T00:00:00Z", now: "2026-01-01T02:00:00Z", misfire: time.Minute,
			scheduled: "2026-01-01T00:00:00Z"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rule := compile(t, c.start, c.rec, ts(t, c.start))
			got := jobstate.Claim(rule, ts(t, c.due), c.executed, ts(t, c.now), c.misfire)
			if !got.Scheduled.Equal(ts(t, c.scheduled)) || got.Missed != c.missed || !got.Next.Equal(ts(t, c.next)) {
				t.Errorf("Claim = %v missed %d next %v, want %s missed %d next %s", got.Scheduled, got.Missed, got.Next, c.scheduled, c.missed, c.next)
			}
		})
	}
}

func TestLastExecutionAt(t *testing.T) {
	now, due := ts(t, "2026-01-01T00:00:00Z"), ts(t, "2026-01-01T00:00:00.4Z")
	if got := jobstate.LastExecutionAt(now, due); !got.Equal(due) {
		t.Errorf("claimed ahead: %v, want the due time", got)
	}
	if got := jobstate.LastExecutionAt(due, now); !got.Equal(due) {
		t.Errorf("claimed late: %v, want now", got)
	}
}

func TestResumeAfter(t *testing.T) {
	rule := compile(t, "2026-01-01T00:00:00Z", &wire.JobRecurrence{Frequency: "Minute", Interval: intp(1), Count: intp(3)}, time.Time{})
	next := ts(t, "2026-01-01T00:01:00Z")
	cases := []struct {
		started string
		want    string
		ok      bool
	}{
		{"", "2026-01-01T00:01:00Z", true},
		{"2026-01-01T00:00:00Z", "2026-01-01T00:01:00Z", true},
		{"2026-01-01T00:01:00Z", "2026-01-01T00:02:00Z", true},
		{"2026-01-01T00:01:30Z", "2026-01-01T00:02:00Z", true},
		{"2026-01-01T10:00:00Z", "2026-01-01T10:01:00Z", true}, // count is the claim's business, not this walk's
	}
	for _, c := range cases {
		got, ok := jobstate.ResumeAfter(rule, next, ts(t, c.started))
		if ok != c.ok || !got.Equal(ts(t, c.want)) {
			t.Errorf("started %s: %v %v, want %s %v", c.started, got, ok, c.want, c.ok)
		}
	}
	ended := compile(t, "2026-01-01T00:00:00Z", &wire.JobRecurrence{Frequency: "Minute", Interval: intp(1), EndTime: "2026-01-01T00:02:00Z"}, time.Time{})
	if got, ok := jobstate.ResumeAfter(ended, next, ts(t, "2026-01-01T00:02:00Z")); ok {
		t.Errorf("past endTime: %v, want none", got)
	}
}

func TestStoredInstant(t *testing.T) {
	// A one-shot job whose startTime has seven fractional digits (as .NET writes them).
	rule := compile(t, "2026-01-01T00:01:00.1234567Z", nil, time.Time{})
	cases := []struct{ stored, want string }{
		{"2026-01-01T00:01:00.123456Z", "2026-01-01T00:01:00.1234567Z"},  // kept to the microsecond: the occurrence
		{"2026-01-01T00:01:00.1234567Z", "2026-01-01T00:01:00.1234567Z"}, // kept to the nanosecond: as is
		{"2026-01-01T00:01:00.5Z", "2026-01-01T00:01:00.5Z"},             // no occurrence within a microsecond
		{"2026-01-01T00:01:00.123457Z", "2026-01-01T00:01:00.123457Z"},   // after the occurrence: as is
		{"2026-01-01T00:01:00.123455Z", "2026-01-01T00:01:00.123455Z"},   // more than a microsecond early: as is
	}
	for _, c := range cases {
		if got := jobstate.StoredInstant(rule, ts(t, c.stored)); !got.Equal(ts(t, c.want)) {
			t.Errorf("StoredInstant(%s) = %v, want %s", c.stored, got.UTC().Format(time.RFC3339Nano), c.want)
		}
	}
}

func TestOutcome(t *testing.T) {
	end := ts(t, "2026-01-01T00:00:10Z")
	fixed := retry.Policy{Type: retry.Fixed, Interval: 30 * time.Second, Count: 2}
	none := retry.Policy{Type: retry.None}
	cases := []struct {
		name string
		a    jobstate.Attempt
		want jobstate.Outcome
	}{
		{"main succeeded", jobstate.Attempt{Success: true, Phase: jobstate.PhaseMain, Policy: fixed},
			jobstate.Outcome{Result: jobstate.Succeeded, Finished: true}},
		{"main succeeded on a retry", jobstate.Attempt{Success: true, Phase: jobstate.PhaseMain, Retries: 2, Policy: fixed, HasErrorAction: true},
			jobstate.Outcome{Result: jobstate.Succeeded, Finished: true}},
		{"main failed, retries left", jobstate.Attempt{Phase: jobstate.PhaseMain, Retries: 1, Policy: fixed, HasErrorAction: true},
			jobstate.Outcome{Result: jobstate.Retried, Next: end.Add(30 * time.Second), Phase: jobstate.PhaseMain, Retries: 2}},
		{"main failed, retries spent, error action", jobstate.Attempt{Phase: jobstate.PhaseMain, Retries: 2, Policy: fixed, HasErrorAction: true},
			jobstate.Outcome{Result: jobstate.ToErrorAction, Failure: true, Next: end, Phase: jobstate.PhaseError}},
		{"main failed, retries spent, no error action: faulted", jobstate.Attempt{Phase: jobstate.PhaseMain, Retries: 2, Policy: fixed},
			jobstate.Outcome{Result: jobstate.FaultedOccurrence, Failure: true, Finished: true, Faulted: true}},
		{"main failed, policy None: error action at once", jobstate.Attempt{Phase: jobstate.PhaseMain, Policy: none, HasErrorAction: true},
			jobstate.Outcome{Result: jobstate.ToErrorAction, Failure: true, Next: end, Phase: jobstate.PhaseError}},
		{"main failed, policy None, no error action", jobstate.Attempt{Phase: jobstate.PhaseMain, Policy: none},
			jobstate.Outcome{Result: jobstate.FaultedOccurrence, Failure: true, Finished: true, Faulted: true}},
		{"error action succeeded", jobstate.Attempt{Success: true, Phase: jobstate.PhaseError, Policy: fixed, HasErrorAction: true},
			jobstate.Outcome{Result: jobstate.Recovered, Finished: true}},
		{"error action failed, retries left", jobstate.Attempt{Phase: jobstate.PhaseError, Policy: fixed, HasErrorAction: true},
			jobstate.Outcome{Result: jobstate.Retried, Next: end.Add(30 * time.Second), Phase: jobstate.PhaseError, Retries: 1}},
		{"error action failed after its retries: faulted, no second failure", jobstate.Attempt{Phase: jobstate.PhaseError, Retries: 2, Policy: fixed, HasErrorAction: true},
			jobstate.Outcome{Result: jobstate.FaultedOccurrence, Finished: true, Faulted: true}},
	}
	for _, c := range cases {
		c.a.End = end
		if got := c.a.Outcome(); got != c.want {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
}

func TestRetryPolicy(t *testing.T) {
	main := &wire.RetryPolicy{RetryType: "Fixed", RetryInterval: "PT1M", RetryCount: intp(2)}
	errp := &wire.RetryPolicy{RetryType: "None"}
	cases := []struct {
		name  string
		p     *wire.JobProperties
		phase string
		want  retry.Policy
	}{
		{"no properties: default", nil, jobstate.PhaseMain, retry.Default()},
		{"no policy: default", &wire.JobProperties{Action: &wire.JobAction{}}, jobstate.PhaseMain, retry.Default()},
		{"main", &wire.JobProperties{Action: &wire.JobAction{RetryPolicy: main}}, jobstate.PhaseMain,
			retry.Policy{Type: retry.Fixed, Interval: time.Minute, Count: 2}},
		{"error action without its own: the main one", &wire.JobProperties{Action: &wire.JobAction{RetryPolicy: main, ErrorAction: &wire.JobErrorAction{}}},
			jobstate.PhaseError, retry.Policy{Type: retry.Fixed, Interval: time.Minute, Count: 2}},
		{"error action's own", &wire.JobProperties{Action: &wire.JobAction{RetryPolicy: main, ErrorAction: &wire.JobErrorAction{RetryPolicy: errp}}},
			jobstate.PhaseError, retry.Policy{Type: retry.None}},
		{"main ignores the error action's", &wire.JobProperties{Action: &wire.JobAction{RetryPolicy: main, ErrorAction: &wire.JobErrorAction{RetryPolicy: errp}}},
			jobstate.PhaseMain, retry.Policy{Type: retry.Fixed, Interval: time.Minute, Count: 2}},
		{"invalid: default", &wire.JobProperties{Action: &wire.JobAction{RetryPolicy: &wire.RetryPolicy{RetryType: "Sometimes"}}},
			jobstate.PhaseMain, retry.Default()},
	}
	for _, c := range cases {
		if got := jobstate.RetryPolicy(c.p, c.phase); got != c.want {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
}

func TestRecordTable(t *testing.T) {
	for _, c := range jobstate.RecordTable {
		if got := c.Record.Apply(c.Job); got != c.Want {
			t.Errorf("%s: %+v, want %+v", c.Name, got, c.Want)
		}
	}
}

func TestManualRun(t *testing.T) {
	last, now := ts(t, "2026-01-01T00:00:00Z"), ts(t, "2026-01-01T00:30:00Z")
	hour := func(t time.Time) time.Time { return t.Add(time.Hour) }
	if at, early := jobstate.ManualRunTooEarly(last, now, hour); !early || !at.Equal(ts(t, "2026-01-01T01:00:00Z")) {
		t.Errorf("within maxRecurrence: %v %v", at, early)
	}
	if at, early := jobstate.ManualRunTooEarly(last, ts(t, "2026-01-01T01:00:00Z"), hour); early || !at.Equal(ts(t, "2026-01-01T01:00:00Z")) {
		t.Errorf("at maxRecurrence: %v %v", at, early)
	}
	if _, early := jobstate.ManualRunTooEarly(time.Time{}, now, hour); early {
		t.Error("never ran: too early")
	}
	if _, early := jobstate.ManualRunTooEarly(last, now, nil); early {
		t.Error("no limit: too early")
	}
	for _, c := range []struct{ manual, inFlight, want bool }{{true, true, true}, {true, false, false}, {false, true, false}, {false, false, false}} {
		if got := jobstate.ManualRunBlocked(c.manual, c.inFlight); got != c.want {
			t.Errorf("ManualRunBlocked(%v, %v) = %v", c.manual, c.inFlight, got)
		}
	}
}

func TestUpcoming(t *testing.T) {
	rec := &wire.JobRecurrence{Frequency: "Hour", Interval: intp(1), Count: intp(5)}
	rule := compile(t, "2026-01-01T00:00:00Z", rec, time.Time{})
	next := ts(t, "2026-01-01T02:00:00Z")
	cases := []struct {
		name     string
		state    string
		coll     string
		next     time.Time
		executed int
		n        int
		want     string
		left     int
	}{
		{"count left", jobstate.Enabled, jobstate.CollectionEnabled, next, 2, 10,
			"2026-01-01T02:00:00Z 2026-01-01T03:00:00Z 2026-01-01T04:00:00Z", 3},
		{"n bounds", jobstate.Enabled, jobstate.CollectionEnabled, next, 2, 2, "2026-01-01T02:00:00Z 2026-01-01T03:00:00Z", 3},
		{"count over but scheduled: the scheduled one runs", jobstate.Enabled, jobstate.CollectionEnabled, next, 7, 10, "2026-01-01T02:00:00Z", 1},
		{"disabled", jobstate.Disabled, jobstate.CollectionEnabled, next, 0, 10, "", 0},
		{"collection suspended", jobstate.Enabled, "Suspended", next, 0, 10, "", 0},
		{"nothing scheduled", jobstate.Enabled, jobstate.CollectionEnabled, time.Time{}, 0, 10, "", 0},
	}
	for _, c := range cases {
		if got := jobstate.Upcoming(rule, c.state, c.coll, c.next, c.executed, c.n); format(got) != c.want {
			t.Errorf("%s: %s, want %s", c.name, format(got), c.want)
		}
		if got := jobstate.RunsLeft(rule, c.state, c.coll, c.next, c.executed); got != c.left {
			t.Errorf("%s: RunsLeft %d, want %d", c.name, got, c.left)
		}
	}
	unlimited := compile(t, "2026-01-01T00:00:00Z", &wire.JobRecurrence{Frequency: "Day", Interval: intp(1)}, time.Time{})
	r := jobstate.NewRuns(unlimited, jobstate.Enabled, jobstate.CollectionEnabled, next, 0)
	r.SkipTo(ts(t, "2026-03-01T00:00:00Z"))
	if at, _ := r.Pop(); !at.Equal(ts(t, "2026-03-01T00:00:00Z")) {
		t.Errorf("SkipTo: %v", at)
	}
	limited := jobstate.NewRuns(rule, jobstate.Enabled, jobstate.CollectionEnabled, next, 0)
	limited.SkipTo(ts(t, "2026-03-01T00:00:00Z"))
	if at, _ := limited.Peek(); !at.Equal(next) {
		t.Errorf("SkipTo with a count moved to %v", at)
	}
}

// TestPreview pins the preview of a job written at now: its FirstRun, then the runs after it. It
// is the engine's enumeration of SPEC 4.3 (recurrence.Rule.Occurrences) wherever that answers.
func TestPreview(t *testing.T) {
	now := ts(t, "2015-04-08T13:00:00Z")
	cases := []struct {
		name     string
		start    string
		rec      *wire.JobRecurrence
		executed int
		want     string
	}{
		{"seed example", "2015-04-07T14:00:00Z", &wire.JobRecurrence{Frequency: "Day", Interval: intp(2)}, 0,
			"2015-04-09T14:00:00Z 2015-04-11T14:00:00Z 2015-04-13T14:00:00Z 2015-04-15T14:00:00Z"},
		{"no startTime: now, then from the creation", "", &wire.JobRecurrence{Frequency: "Hour", Interval: intp(1), Count: intp(3)}, 0,
			"2015-04-08T13:00:00Z 2015-04-08T14:00:00Z 2015-04-08T15:00:00Z"},
		{"count with executions done", "2015-04-07T14:00:00Z", &wire.JobRecurrence{Frequency: "Day", Interval: intp(2), Count: intp(3)}, 1,
			"2015-04-09T14:00:00Z 2015-04-11T14:00:00Z"},
		{"one-shot, past", "2015-04-01T00:00:00Z", nil, 0, "2015-04-08T13:00:00Z"},
		{"one-shot, future", "2015-05-01T00:00:00Z", nil, 0, "2015-05-01T00:00:00Z"},
		{"one-shot, executed", "", nil, 1, ""},
		{"endTime", "2015-04-07T14:00:00Z", &wire.JobRecurrence{Frequency: "Day", Interval: intp(1), EndTime: "2015-04-10T14:00:00Z"}, 0,
			"2015-04-08T14:00:00Z 2015-04-09T14:00:00Z 2015-04-10T14:00:00Z"},
	}
	for _, c := range cases {
		rule := compile(t, c.start, c.rec, now)
		got := jobstate.Preview(rule, now, c.executed, 4)
		if format(got) != c.want {
			t.Errorf("%s: %s, want %s", c.name, format(got), c.want)
		}
		if occ := rule.Occurrences(now, c.executed, 4); format(occ) != format(got) {
			t.Errorf("%s: the engine enumerates %s", c.name, format(occ))
		}
	}
}
