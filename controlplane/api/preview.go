package api

import (
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/internal/arm"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/jobstate"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/recurrence"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"
)

// maxPreview is the most occurrences one preview returns.
const maxPreview = 1000

// preview answers POST /preview/occurrences?count=N[&now=RFC3339] with the next N executions of
// the job in the body (a job definition {"properties":{...}}, as the API returns it, or its bare
// properties) as the rulebook computes them for a job created at now (jobstate.PreviewRuns:
// excluded dates left out), in the rule's zone, and the rule in words (recurrence.Describe):
// {"value":["2015-04-09T14:00:00Z", ...],"describe":"at 14:00 every 2 days, ..."}.
//
// A rule with a jitter adds "jitter" (as written). A definition that carries the job's "id" (a
// job as the API returns it) is a stored job's preview: each value is when the dispatcher starts
// the occurrence (jobstate.StartAt for the job, with milliseconds) and "scheduled" lists the
// scheduled times (the expected execution times the runs report). Without an id each value is
// the scheduled time, the start of a window of "jitter". Without jitter the answer is as before.
func (s *Server) preview(w http.ResponseWriter, r *http.Request) *apiError {
	if r.Method != http.MethodPost {
		return &apiError{http.StatusMethodNotAllowed, codeBadRequest, "use POST"}
	}
	q := r.URL.Query()
	count := 10
	if v := q.Get("count"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxPreview {
			return badRequest("count %q must be an integer from 1 to %d", v, maxPreview)
		}
		count = n
	}
	now := s.clock.Now()
	if v := q.Get("now"); v != "" {
		t, err := time.Parse(time.RFC3339, v)
		if err != nil {
			return badRequest("now %q is not an RFC 3339 date-time", v)
		}
		now = t
	}
	body, e := readBody(r)
	if e != nil {
		return e
	}
	props, id, e := previewBody(body)
	if e != nil {
		return e
	}
	key := ""
	if id != "" {
		n, err := arm.ParseJobID(id)
		if err != nil {
			return invalid(wire.Problems{{Path: "id", Message: err.Error()}}, "")
		}
		key = n.Canonical()
	}
	rule, err := recurrence.Compile(props.StartTime, props.Recurrence, now)
	if err != nil {
		var ps wire.Problems
		if errors.As(err, &ps) {
			return invalid(ps, "")
		}
		return badRequest("%v", err)
	}
	out := previewAnswer{Value: []string{}, Describe: recurrence.Describe(rule)}
	jittered := rule.Jitter() > 0
	if jittered {
		out.Jitter = props.Recurrence.Jitter
	}
	for _, r := range jobstate.PreviewRuns(rule, key, now, 0, count) {
		if !jittered || key == "" {
			out.Value = append(out.Value, r.Scheduled.In(rule.Location()).Format(time.RFC3339))
			continue
		}
		out.Value = append(out.Value, r.Start.In(rule.Location()).Format(time.RFC3339Nano))
		out.Scheduled = append(out.Scheduled, r.Scheduled.In(rule.Location()).Format(time.RFC3339))
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// previewAnswer is the answer of POST /preview/occurrences. Jitter and Scheduled are extensions,
// absent unless the rule has a jitter (Scheduled: and the body names the job).
type previewAnswer struct {
	Value     []string `json:"value"`
	Describe  string   `json:"describe"`
	Jitter    string   `json:"jitter,omitempty"`
	Scheduled []string `json:"scheduled,omitempty"`
}

// previewBody decodes a preview's body: a job definition (its id, "" when it has none) or bare
// properties.
func previewBody(body []byte) (props *wire.JobProperties, id string, e *apiError) {
	wrapped, err := rawProperties(body)
	if err != nil {
		return nil, "", decodeProblems(wire.Decode(body, &wire.JobDefinition{}))
	}
	if wrapped != nil {
		var def wire.JobDefinition
		if err := wire.Decode(body, &def); err != nil {
			return nil, "", decodeProblems(err)
		}
		return def.Properties, def.ID, nil
	}
	props = &wire.JobProperties{}
	if err := wire.Decode(body, props); err != nil {
		return nil, "", decodeProblems(err)
	}
	return props, "", nil
}
