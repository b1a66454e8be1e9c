package api

import (
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/internal/jobstate"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/recurrence"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"
)

// maxPreview is the most occurrences one preview returns.
const maxPreview = 1000

// preview answers POST /preview/occurrences?count=N[&now=RFC3339] with the next N executions of
// the job in the body (a job definition {"properties":{...}} or its bare properties) as the
// engine computes them for a job created at now, in the rule's zone, and the rule in words
// (recurrence.Describe): {"value":["2015-04-09T14:00:00Z", ...],"describe":"at 14:00 every 2 days, ..."}.
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
	var props *wire.JobProperties
	wrapped, err := rawProperties(body)
	if err != nil {
		return decodeProblems(wire.Decode(body, &wire.JobDefinition{}))
	}
	if wrapped != nil {
		var def wire.JobDefinition
		if err := wire.Decode(body, &def); err != nil {
			return decodeProblems(err)
		}
		props = def.Properties
	} else {
		props = &wire.JobProperties{}
		if err := wire.Decode(body, props); err != nil {
			return decodeProblems(err)
		}
	}
	rule, err := recurrence.Compile(props.StartTime, props.Recurrence, now)
	if err != nil {
		var ps wire.Problems
		if errors.As(err, &ps) {
			return invalid(ps, "")
		}
		return badRequest("%v", err)
	}
	out := struct {
		Value    []string `json:"value"`
		Describe string   `json:"describe"`
	}{Value: []string{}, Describe: recurrence.Describe(rule)}
	for _, t := range jobstate.Preview(rule, now, 0, count) {
		out.Value = append(out.Value, t.In(rule.Location()).Format(time.RFC3339))
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}
