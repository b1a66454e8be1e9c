package api

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// whenJob is goodJob with the given properties JSON added (a leading comma included).
func whenJob(extra string) string {
	return strings.Replace(goodJob, `"properties":{`, `"properties":{`+extra+`,`, 1)
}

func TestWhenExtensionsBadInput(t *testing.T) {
	h, before, versions := inputFixture(t)
	// t0 is 2026-11-18T12:00:30Z.
	for _, tc := range []struct{ name, body, want string }{
		{"unknown overlap", whenJob(`"overlap":"Queue"`),
			`properties.overlap: "Queue" is not one of Allow, Skip, BufferOne`},
		{"unknown misfire policy", whenJob(`"misfire":{"policy":"CatchUp"}`),
			`properties.misfire.policy: "CatchUp" is not one of RunOnce, Skip, RunAll`},
		{"misfire threshold not a duration", whenJob(`"misfire":{"policy":"Skip","threshold":"10 minutes"}`),
			`properties.misfire.threshold: "10 minutes" is not an ISO 8601 duration such as PT60S`},
		{"misfire threshold too long", whenJob(`"misfire":{"threshold":"P8D"}`),
			`properties.misfire.threshold: P8D is outside PT1S..P7D`},
		{"note too long", whenJob(`"state":"Disabled","note":"` + strings.Repeat("é", 513) + `"`),
			`properties.note: is 513 characters long; at most 512 are allowed`},
		{"resumeAt not a date-time", whenJob(`"state":"Disabled","resumeAt":"tomorrow"`),
			`properties.resumeAt: "tomorrow" is not an ISO 8601 date-time`},
		{"resumeAt in the past", whenJob(`"state":"Disabled","resumeAt":"2026-11-18T12:00:00Z"`),
			`properties.resumeAt: 2026-11-18T12:00:00Z is not in the future (now is 2026-11-18T12:00:30Z)`},
		{"resumeAt on an Enabled job", whenJob(`"resumeAt":"2026-11-19T00:00:00Z"`),
			`properties.resumeAt: is allowed only on a Disabled job (this one is written Enabled)`},
		{"jitter above the period", strings.Replace(goodJob, `"monthDays":[1,15]}`, `"monthDays":[1,15],"hours":[9,10]},"jitter":"PT1H"`, 1),
			`properties.recurrence.jitter: 1h0m0s is not less than the rule's shortest period between two executions, 1h0m0s`},
		{"excluded date repeated", strings.Replace(goodJob, `"frequency":"Month"`, `"frequency":"Month","excludeDates":["2026-12-15","2026-12-15"]`, 1),
			`properties.recurrence.excludeDates[1]: "2026-12-15" is a duplicate of excludeDates[0]`},
		{"excluded date not a date", strings.Replace(goodJob, `"frequency":"Month"`, `"frequency":"Month","excludeDates":["Christmas"]`, 1),
			`properties.recurrence.excludeDates[0]: "Christmas" is not a date YYYY-MM-DD such as 2026-12-25`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, method := range []string{http.MethodPut, http.MethodPatch} {
				r := h.do(method, collPath+"/jobs/j1"+apiVersion, adminToken, tc.body)
				_, msg := r.errorBody(t)
				if r.status != http.StatusBadRequest || !strings.Contains(msg, tc.want) {
					t.Errorf("%s: %d %s\nwant 400 with %s", method, r.status, r.body, tc.want)
				}
				unchanged(t, h, before, versions)
			}
		})
	}
}

func TestWhenExtensionsReadBackOnlyWhereSet(t *testing.T) {
	h := newHarness(t)
	h.collection(collPath, `{"sku":{"name":"Standard"}}`)
	path := collPath + "/jobs/j1" + apiVersion
	plain := string(h.must(http.StatusCreated, http.MethodPut, path, goodJob).body)
	for _, name := range []string{"overlap", "misfire", "resumeAt", "note", "jitter", "excludeDates"} {
		if strings.Contains(plain, `"`+name+`"`) {
			t.Errorf("a job without extensions reads back %s: %s", name, plain)
		}
	}
	body := strings.Replace(whenJob(`"state":"disabled","overlap":"bufferone","misfire":{"policy":"runall","threshold":"PT5M"},"resumeAt":"2026-11-20T08:00:00Z","note":"database migration"`),
		`"frequency":"Month"`, `"frequency":"Month","jitter":"PT5M","excludeDates":["2026-12-15"]`, 1)
	h.must(http.StatusOK, http.MethodPut, path, body)
	got := h.must(http.StatusOK, http.MethodGet, path, nil).json(t)
	props := get(got, "properties")
	for _, c := range []struct {
		path []any
		want string
	}{
		{[]any{"state"}, "Disabled"},
		{[]any{"overlap"}, "BufferOne"},
		{[]any{"misfire", "policy"}, "RunAll"},
		{[]any{"misfire", "threshold"}, "PT5M"},
		{[]any{"resumeAt"}, "2026-11-20T08:00:00Z"},
		{[]any{"note"}, "database migration"},
		{[]any{"recurrence", "jitter"}, "PT5M"},
		{[]any{"recurrence", "excludeDates", 0}, "2026-12-15"},
	} {
		if v := str(get(props, c.path...)); v != c.want {
			t.Errorf("%v = %q, want %q", c.path, v, c.want)
		}
	}
	// Enabling the job ends its pause: resumeAt goes, the note stays.
	got = h.must(http.StatusOK, http.MethodPatch, path, `{"properties":{"state":"Enabled"}}`).json(t)
	if v := get(got, "properties", "resumeAt"); v != nil {
		t.Errorf("resumeAt after enabling: %v", v)
	}
	if v := str(get(got, "properties", "note")); v != "database migration" {
		t.Errorf("note after enabling: %q", v)
	}
	// Disabled again with the same note; an unrelated patch keeps the stored resumeAt even when
	// the clock has passed it (only a new resumeAt must be in the future).
	h.must(http.StatusOK, http.MethodPatch, path, `{"properties":{"state":"Disabled","resumeAt":"2026-11-18T13:00:00Z"}}`)
	h.clock.Advance(2 * 60 * 60 * 1e9)
	got = h.must(http.StatusOK, http.MethodPatch, path, `{"properties":{"note":"still migrating"}}`).json(t)
	if v := str(get(got, "properties", "resumeAt")); v != "2026-11-18T13:00:00Z" {
		t.Errorf("resumeAt after a patch of the note: %q", v)
	}
}

func TestBackfillValidation(t *testing.T) {
	h, before, versions := inputFixture(t)
	// j1 runs on the 1st and 15th from 2026-12-01, after t0 (2026-11-18T12:00:30Z).
	path := collPath + "/jobs/j1/backfill" + apiVersion
	for _, tc := range []struct{ name, body, want string }{
		{"from missing", `{"to":"2026-11-01T00:00:00Z"}`, "from: is required (an ISO 8601 date-time)"},
		{"to not a date-time", `{"from":"2026-11-01T00:00:00Z","to":"soon"}`, `to: "soon" is not an ISO 8601 date-time`},
		{"backwards", `{"from":"2026-11-10T00:00:00Z","to":"2026-11-01T00:00:00Z"}`,
			"to: 2026-11-01T00:00:00Z is not after from 2026-11-10T00:00:00Z: the range is [from, to)"},
		{"in the future", `{"from":"2026-11-01T00:00:00Z","to":"2026-12-31T00:00:00Z"}`,
			"to: 2026-12-31T00:00:00Z is in the future (now is 2026-11-18T12:00:30Z): a backfill runs occurrences that are past"},
		{"no occurrence (before the start)", `{"from":"2026-11-01T00:00:00Z","to":"2026-11-18T00:00:00Z"}`,
			"from: [2026-11-01T00:00:00Z, 2026-11-18T00:00:00Z) holds no occurrence of the job's schedule"},
		{"unknown field", `{"from":"2026-11-01T00:00:00Z","to":"2026-11-18T00:00:00Z","until":"x"}`, "until: unknown field (allowed: from, to)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := h.do(http.MethodPost, path, adminToken, tc.body)
			_, msg := r.errorBody(t)
			if r.status != http.StatusBadRequest || !strings.Contains(msg, tc.want) {
				t.Errorf("%d %s\nwant 400 with %s", r.status, r.body, tc.want)
			}
			unchanged(t, h, before, versions)
		})
	}
	// More than 1,000: a job every minute since 2026-11-01.
	h.must(http.StatusCreated, http.MethodPut, collPath+"/jobs/m"+apiVersion,
		strings.Replace(strings.Replace(goodJob, `"frequency":"Month","schedule":{"monthDays":[1,15]}`, `"frequency":"Minute"`, 1), "2026-12-01T10:00:00Z", "2026-11-01T00:00:00Z", 1))
	r := h.do(http.MethodPost, collPath+"/jobs/m/backfill"+apiVersion, adminToken, `{"from":"2026-11-01T00:00:00Z","to":"2026-11-02T00:00:00Z"}`)
	if _, msg := r.errorBody(t); r.status != http.StatusBadRequest || !strings.Contains(msg, "to: [2026-11-01T00:00:00Z, 2026-11-02T00:00:00Z) holds more than 1000 occurrences") {
		t.Errorf("1,440 occurrences: %d %s", r.status, r.body)
	}
	if len(h.disp.backfills) != 0 {
		t.Errorf("backfills asked of the dispatcher after bad input: %v", h.disp.backfills)
	}
	// A valid range: 202 with the count, the dispatcher asked for its ten occurrences.
	r = h.do(http.MethodPost, collPath+"/jobs/m/backfill"+apiVersion, adminToken, `{"from":"2026-11-01T00:00:00Z","to":"2026-11-01T00:10:00Z"}`)
	if want := `{"count":10,"first":"2026-11-01T00:00:00Z","last":"2026-11-01T00:09:00Z"}`; r.status != http.StatusAccepted || string(r.body) != want {
		t.Errorf("a valid backfill: %d %s, want 202 %s", r.status, r.body, want)
	}
	if got := h.disp.backfills; len(got) != 1 || len(got[0].at) != 10 || !got[0].at[9].Equal(time.Date(2026, 11, 1, 0, 9, 0, 0, time.UTC)) {
		t.Errorf("backfills asked of the dispatcher: %v", got)
	}
}
