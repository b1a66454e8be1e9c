package api

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/jobstate"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/recurrence"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"
)

// backfillJob answers POST .../jobs/{job}/backfill {from, to} (SPEC 8): the range is checked by
// the rulebook (jobstate.Backfill), each problem a 400 naming its field; a final job, or one whose
// collection does not let it run (jobstate.ManualRunAllowed, as for a manual run, as read here
// and again by the store when it stores the backfill), is a 409, and so is a job whose previous
// backfill is unfinished. A valid backfill is stored by the dispatcher
// before the answer, 202 with the count (wire.JobBackfillResponse): its executions run one after
// the other, oldest first. Disabling the job or its collection afterwards cancels those not yet
// started (jobstate.BackfillOnChange, in the job's write or the collection's).
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
	var at []time.Time
	if len(ps) == 0 {
		at, ps = jobstate.Backfill(rule, from, to, s.clock.Now())
	}
	if len(ps) > 0 {
		return invalid(ps, "")
	}
	coll, err := s.store.CollectionGet(ctx, store.CollectionGetParams{Key: rt.key.CollectionKey})
	if err != nil {
		return s.storeError(ctx, "job collection "+rt.key.CollectionKey.Name, err)
	}
	if e := runRefused(rt.key.Name, coll.Key.Name, j.State, coll.Properties.State); e != nil {
		return e
	}
	if err := s.disp.Backfill(ctx, j.ID, at); err != nil {
		// The store checks it again as the states are when it stores the backfill: the
		// collection may have been disabled since it was read.
		var refused *store.RunRefusedError
		if errors.As(err, &refused) {
			if e := runRefused(rt.key.Name, coll.Key.Name, refused.State, refused.CollectionState); e != nil {
				return e
			}
		}
		var inFlight *store.BackfillInFlightError
		if errors.As(err, &inFlight) {
			return conflict("job %s has a backfill that is unfinished (execution tag %s): a job runs one backfill at a time",
				rt.key.Name, inFlight.Tag)
		}
		return s.storeError(ctx, "job "+rt.key.Name, err)
	}
	writeJSON(w, http.StatusAccepted, wire.JobBackfillResponse{Count: len(at), First: rfc3339UTC(at[0]), Last: rfc3339UTC(at[len(at)-1])})
	return nil
}

// runRefused is the 409 of a manual run or a backfill of job (in collection) when a job in
// state, in a collection in collectionState, may not run on request (jobstate.ManualRunAllowed);
// nil when it may. Both are checked as the API read the states and again by the store, in the
// transaction that claims the run or stores the backfill (store.RunRefusedError).
func runRefused(job, collection, state, collectionState string) *apiError {
	switch {
	case jobstate.Final(state):
		return conflict("job %s is %s: it cannot run again", job, state)
	case !jobstate.ManualRunAllowed(state, collectionState):
		return conflict("job collection %s is %s: its jobs do not run, not even on request", collection, collectionState)
	}
	return nil
}
