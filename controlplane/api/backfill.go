package api

import (
	"fmt"
	"net/http"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/jobstate"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/recurrence"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"
)

// backfillJob answers POST .../jobs/{job}/backfill {from, to} (SPEC 8): the range is checked by
// the rulebook (jobstate.Backfill), each problem a 400 naming its field. Running the occurrences
// is not built yet: a valid backfill answers 501 and runs nothing, so that no client takes a
// 202 for work that will not happen.
func (s *Server) backfillJob(w http.ResponseWriter, r *http.Request, rt route, info *reqInfo) *apiError {
	body, e := readBody(r)
	if e != nil {
		return e
	}
	var req wire.JobBackfillRequest
	if err := wire.Decode(body, &req); err != nil {
		return decodeProblems(err)
	}
	ctx := r.Context()
	j, err := s.store.JobGet(ctx, store.JobGetParams{Key: rt.key})
	if err != nil {
		return s.storeError(ctx, "job "+rt.key.Name, err)
	}
	info.jobID = j.ID
	if jobstate.Final(j.State) {
		return conflict("job %s is %s: it cannot run again", rt.key.Name, j.State)
	}
	rule, err := recurrence.Compile(j.Properties.StartTime, j.Properties.Recurrence, j.CreatedAt)
	if err != nil {
		return s.storeError(ctx, "job "+rt.key.Name, fmt.Errorf("compile the stored job's schedule: %w", err))
	}
	var ps wire.Problems
	from, errFrom := recurrence.ParseTime(req.From, rule.Location())
	to, errTo := recurrence.ParseTime(req.To, rule.Location())
	for _, f := range []struct {
		path, value string
		err         error
	}{{"from", req.From, errFrom}, {"to", req.To, errTo}} {
		switch {
		case f.value == "":
			ps = append(ps, wire.Problem{Path: f.path, Message: "is required (an ISO 8601 date-time)"})
		case f.err != nil:
			ps = append(ps, wire.Problem{Path: f.path, Message: f.err.Error()})
		}
	}
	if len(ps) == 0 {
		_, ps = jobstate.Backfill(rule, from, to, s.clock.Now())
	}
	if len(ps) > 0 {
		return invalid(ps, "")
	}
	return &apiError{http.StatusNotImplemented, "NotImplemented",
		"the backfill is valid, but running backfills is not built yet: nothing was run"}
}
