package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/secret"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/jobdef"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/jobstate"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/recurrence"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"
)

func rfc3339UTC(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

// jobDefinition is the Azure body of a stored job: secrets redacted, state and status from the
// record, startTime and endTime in RFC 3339 in the rule's zone (what the Azure SDK parses) unless
// asWritten asks for them as the client wrote them. rule is the job's compiled rule when the
// caller has it (nil: compiled here when needed).
func jobDefinition(j *store.Job, asWritten bool, rule *recurrence.Rule) wire.JobDefinition {
	p := j.Properties.Clone()
	if !asWritten {
		if rule == nil {
			rule, _ = recurrence.Compile(p.StartTime, p.Recurrence, j.CreatedAt)
		}
		if rule != nil {
			jobdef.FormatTimes(&p, rule)
		}
	}
	secret.RedactJob(&p)
	p.State = j.State
	ex, fail, fault := j.Status.ExecutionCount, j.Status.FailureCount, j.Status.FaultedCount
	p.Status = &wire.JobStatus{
		ExecutionCount:    &ex,
		FailureCount:      &fail,
		FaultedCount:      &fault,
		LastExecutionTime: rfc3339UTC(j.Status.LastExecutionTime),
		NextExecutionTime: rfc3339UTC(j.Status.NextExecutionTime),
	}
	return wire.JobDefinition{
		ID:         jobID(j.Key),
		Type:       wire.TypeJob,
		Name:       j.Key.CollectionKey.Name + "/" + j.Key.Name,
		Properties: &p,
	}
}

// preferTimesAsWritten is the preference (RFC 7240) of a client that wants a job's startTime and
// endTime back as it wrote them ("2026-12-01", "2026-12-01T07:30") rather than in RFC 3339: the
// provider sends it, so that the state of an imported job holds the spelling of the configuration
// it was created from. The Azure SDK does not send it and always gets RFC 3339.
const preferTimesAsWritten = "times=as-written"

// timesAsWritten reports whether r prefers preferTimesAsWritten, and says so in the answer.
func timesAsWritten(w http.ResponseWriter, r *http.Request) bool {
	for _, v := range r.Header.Values("Prefer") {
		for _, pref := range strings.Split(v, ",") {
			if strings.EqualFold(strings.TrimSpace(pref), preferTimesAsWritten) {
				w.Header().Set("Preference-Applied", preferTimesAsWritten)
				return true
			}
		}
	}
	return false
}

func (s *Server) writeJob(w http.ResponseWriter, r *http.Request, status int, j *store.Job, rule *recurrence.Rule) *apiError {
	writeJSON(w, status, jobDefinition(j, timesAsWritten(w, r), rule))
	return nil
}

func (s *Server) getJob(w http.ResponseWriter, r *http.Request, rt route, info *reqInfo) *apiError {
	j, err := s.store.JobGet(r.Context(), store.JobGetParams{Key: rt.key})
	if err != nil {
		return s.storeError(r.Context(), "job "+rt.key.Name, err)
	}
	info.jobID = j.ID
	return s.writeJob(w, r, http.StatusOK, j, nil)
}

func (s *Server) listJobs(w http.ResponseWriter, r *http.Request, rt route, _ *reqInfo) *apiError {
	ctx := r.Context()
	p, e := parsePage(r, "state", jobdef.CanonicalJobState)
	if e != nil {
		return e
	}
	if _, err := s.store.CollectionGet(ctx, store.CollectionGetParams{Key: rt.key.CollectionKey}); err != nil {
		return s.storeError(ctx, "job collection "+rt.key.CollectionKey.Name, err)
	}
	jobs, err := s.store.JobList(ctx, store.JobListParams{Collection: rt.key.CollectionKey, State: p.filter, Skip: p.skip, Limit: p.top + 1})
	if err != nil {
		return s.storeError(ctx, "the jobs", err)
	}
	out := wire.JobListResult{Value: []wire.JobDefinition{}, NextLink: s.nextLink(r, p, len(jobs))}
	asWritten := timesAsWritten(w, r)
	for i, j := range jobs {
		if i == p.top {
			break
		}
		out.Value = append(out.Value, jobDefinition(j, asWritten, nil))
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (s *Server) putJob(w http.ResponseWriter, r *http.Request, rt route, info *reqInfo) *apiError {
	body, e := readBody(r)
	if e != nil {
		return e
	}
	var def wire.JobDefinition
	if err := wire.Decode(body, &def); err != nil {
		return decodeProblems(err)
	}
	if def.Properties == nil {
		return badRequest("properties: is required")
	}
	if e := refuseSealed(def.Properties); e != nil {
		return e
	}
	// saveJob changes the properties it gets: the first attempt takes the decoded ones, a retry
	// after a lost race decodes the body again.
	decoded := def.Properties
	return s.saveJob(w, r, rt, info, false, func(*store.Job) (*wire.JobProperties, *apiError) {
		if p := decoded; p != nil {
			decoded = nil
			return p, nil
		}
		var again wire.JobDefinition
		if err := wire.Decode(body, &again); err != nil {
			return nil, decodeProblems(err)
		}
		return again.Properties, nil
	})
}

func (s *Server) patchJob(w http.ResponseWriter, r *http.Request, rt route, info *reqInfo) *apiError {
	body, e := readBody(r)
	if e != nil {
		return e
	}
	var def wire.JobDefinition
	if err := wire.Decode(body, &def); err != nil {
		return decodeProblems(err)
	}
	if e := refuseSealed(def.Properties); e != nil {
		return e
	}
	patch, err := rawProperties(body)
	if err != nil {
		return badRequest("%v", err)
	}
	return s.saveJob(w, r, rt, info, true, func(old *store.Job) (*wire.JobProperties, *apiError) {
		base := old.Properties.Clone()
		if err := s.box.OpenJob(&base, old.Key); err != nil {
			s.log.Error("opening a stored job's secrets failed", "job_id", old.ID, "error", err.Error())
			return nil, &apiError{http.StatusInternalServerError, codeInternal, "the stored job's secrets cannot be opened with this daemon's secret key"}
		}
		base.State = old.State
		base.Status = nil
		dropReplacedAuthentication(&base, patch)
		var merged wire.JobProperties
		if err := mergeInto(base, patch, &merged); err != nil {
			return nil, decodeProblems(err)
		}
		// Enabling a paused job ends its pause: the stored resumeAt goes (its note stays).
		if _, set := member(patch, "resumeAt"); !set {
			if st, _ := jobdef.CanonicalJobState(merged.State); st == store.JobStateEnabled {
				jobstate.Resume(&merged)
			}
		}
		return &merged, nil
	})
}

// refuseSealed answers 400 naming the field when a client sends a secret that looks sealed
// ("sealed:..."): a sealed value is the daemon's own, and one read out of a database must never
// become another job's secret.
func refuseSealed(p *wire.JobProperties) *apiError {
	if f := secret.ClientSealed(p); f != "" {
		return badRequest("%s: a value starting with %q is not accepted: send the secret itself", f, secret.Prefix)
	}
	return nil
}

// dropReplacedAuthentication removes a stored authentication that a patch replaces with another
// type, so that the old type's secrets do not merge into the new one. An authentication of the
// same type merges: an omitted secret keeps the stored one.
func dropReplacedAuthentication(base *wire.JobProperties, patch map[string]any) {
	if base.Action == nil {
		return
	}
	check := func(stored **wire.HTTPRequest, path ...string) {
		if *stored == nil || (*stored).Authentication == nil {
			return
		}
		auth := object(patch, path...)
		if auth == nil {
			return
		}
		t, ok := member(auth, "type")
		ts, _ := t.(string)
		if ok && !strings.EqualFold(ts, (*stored).Authentication.Type) {
			(*stored).Authentication = nil
		}
	}
	check(&base.Action.Request, "action", "request", "authentication")
	if base.Action.ErrorAction != nil {
		check(&base.Action.ErrorAction.Request, "action", "errorAction", "request", "authentication")
	}
}

// saveJob creates or replaces a job with the properties build returns from the stored job (nil
// when there is none; a patch requires one): validated, checked against the collection's limits,
// scheduled from now, secrets sealed. It retries when it loses a race.
//
// A PUT in a collection this API knows (knownCollections, unless its last read found the job)
// is first tried blind: as a create in
// the collection as last read, without reading anything. The store refuses it when the job
// exists or the collection changed (JobPutParams.CreateOnly, ExpectCollection), and any answer
// other than the create's success is not given from a guess either: the PUT then reads the
// collection and the job and decides again, as it always did.
func (s *Server) saveJob(w http.ResponseWriter, r *http.Request, rt route, info *reqInfo, patch bool,
	build func(old *store.Job) (*wire.JobProperties, *apiError),
) *apiError {
	ctx := r.Context()
	for attempt := range writeRetries + 1 {
		var (
			coll *store.Collection
			old  *store.Job
		)
		blind := attempt == 0
		if blind {
			if coll = s.collections.blind(rt.key.CollectionKey); coll == nil || patch {
				continue
			}
		} else {
			var err error
			coll, old, err = s.store.JobGetWithCollection(ctx, store.JobGetParams{Key: rt.key})
			if err != nil {
				if errors.Is(err, store.ErrNotFound) {
					s.collections.forget(rt.key.CollectionKey)
				}
				return s.storeError(ctx, "job collection "+rt.key.CollectionKey.Name, err)
			}
			s.collections.read(rt.key.CollectionKey, coll, old != nil)
		}
		params, rule, limits, e := s.prepareJobWrite(rt, info, coll, old, patch, build)
		if e != nil {
			if blind {
				continue
			}
			return e
		}
		// A write over a stored job is its owner's change: it cancels an occurrence waiting
		// (buffered) for the job's unfinished execution, which only a BufferOne job can have.
		params.CancelWaiting = old != nil && jobstate.WaitingOnChange(jobdef.OverlapOf(&old.Properties))
		// Disabling the job cancels its backfill's executions not yet started.
		params.CancelBackfill = old != nil && jobstate.BackfillOnChange(old.State, coll.Properties.State, params.Job.State, coll.Properties.State)
		if blind {
			params.CreateOnly = true
			params.ExpectCollection = store.CollectionVersion{ID: coll.ID, Version: coll.Version}
		}
		stored, isNew, err := s.store.JobPut(ctx, params)
		switch {
		case blind && (errors.Is(err, store.ErrConflict) || errors.Is(err, store.ErrNotFound)):
			continue // the job exists or the collection is not the one known: read them
		case errors.Is(err, store.ErrConflict):
			continue
		case errors.Is(err, store.ErrQuota):
			return conflict("job collection %s already holds its maxJobCount of %d jobs", coll.Key.Name, limits.MaxJobCount)
		case err != nil:
			return s.storeError(ctx, "job "+rt.key.Name, err)
		}
		info.jobID = stored.ID
		s.logCancelled(ctx, stored.Cancelled)
		s.disp.JobWritten(stored)
		code := http.StatusOK
		if isNew {
			code = http.StatusCreated
		}
		return s.writeJob(w, r, code, stored, rule)
	}
	return conflict("job %s is being changed concurrently; retry", rt.key.Name)
}

// prepareJobWrite builds the write of a job (saveJob) in collection coll over old (nil: none):
// the properties build returns, validated, checked against the collection's limits, scheduled
// from now, secrets sealed.
func (s *Server) prepareJobWrite(rt route, info *reqInfo, coll *store.Collection, old *store.Job, patch bool,
	build func(old *store.Job) (*wire.JobProperties, *apiError),
) (store.JobPutParams, *recurrence.Rule, jobdef.Limits, *apiError) {
	var params store.JobPutParams
	limits := jobdef.CollectionLimits(&coll.Properties)
	if old == nil && patch {
		return params, nil, limits, notFound("job %s was not found", rt.key.Name)
	}
	if old != nil {
		info.jobID = old.ID
		if jobstate.Final(old.State) {
			return params, nil, limits, conflict("job %s is %s: a %s job cannot be changed, only deleted", rt.key.Name, old.State, old.State)
		}
	}
	props, e := build(old)
	if e != nil {
		return params, nil, limits, e
	}
	jobdef.Normalize(props)
	jobdef.ClearReadOnly(props)
	now := s.clock.Now()
	created := now
	if old != nil {
		created = old.CreatedAt
	}
	rule, ps := jobdef.Validate(props, created)
	if len(ps) == 0 {
		var stored string
		if old != nil {
			stored = old.Properties.ResumeAt
		}
		ps = jobdef.CheckResumeAt(props, stored, now)
	}
	if len(ps) > 0 {
		return params, nil, limits, invalid(ps, "properties.")
	}
	var status store.JobStatus
	if old != nil {
		status = old.Status
	}
	if v := jobdef.CheckLimits(props, rule, limits, now, status.ExecutionCount); v != nil {
		return params, nil, limits, conflict("%s", v.Message)
	}
	if err := jobdef.FillCertificates(props); err != nil {
		return params, nil, limits, badRequest("properties.action: %v", err)
	}
	// startTime and endTime are stored as written (the same rule either way): a client that
	// asks gets back its own spelling, so that an import plans clean (timesAsWritten).
	state := props.State
	if state == "" {
		state = store.JobStateEnabled
	}
	props.State = ""
	// An occurrence the dispatcher claimed ahead (up to half a second before it is due) is
	// scheduled again: the change cancels that claim unless its attempt has started, and then
	// the dispatcher does not run it a second time.
	status.NextExecutionTime, state = jobstate.FirstRun(rule, state, coll.Properties.State, status.ExecutionCount, now)
	if err := s.box.SealJob(props, rt.key); err != nil {
		return params, nil, limits, &apiError{http.StatusInternalServerError, codeInternal, "sealing the job's secrets failed"}
	}
	params = store.JobPutParams{
		Job: store.Job{Key: rt.key, Properties: *props, State: state, Status: status},
		Now: now,
	}
	if old != nil {
		params.ExpectVersion = old.Version
		params.Job.Key = old.Key
	} else {
		params.MaxJobs = limits.MaxJobCount
	}
	return params, rule, limits, nil
}

// logCancelled logs each waiting execution a job's or a collection's write cancelled
// (store.Job.Cancelled, store.Collection.Cancelled: the occurrence buffered by BufferOne, a
// backfill's not yet started), as the dispatcher logs a claimed occurrence a change cancels.
func (s *Server) logCancelled(ctx context.Context, cancelled []store.Execution) {
	for _, x := range cancelled {
		what := "waiting occurrence cancelled: its job changed"
		if x.Backfill {
			what = "backfill execution cancelled: its job or its collection was disabled"
		}
		s.log.InfoContext(ctx, what, "job_id", x.JobID, "execution_tag", x.Tag, "expected_execution_time", x.Scheduled)
	}
}

// rescheduleJob recomputes the next execution of a stored job after its collection's state
// changed to collectionState, retrying when it loses a race with the dispatcher. The backfill
// the change cancels is not its business: the collection's write cancelled it
// (store.CollectionPutParams.CancelBackfillOf).
func (s *Server) rescheduleJob(ctx context.Context, j *store.Job, collectionState string) error {
	for range writeRetries {
		if jobstate.Final(j.State) {
			return nil
		}
		rule, err := recurrence.Compile(j.Properties.StartTime, j.Properties.Recurrence, j.CreatedAt)
		if err != nil {
			return err
		}
		next, state := jobstate.FirstRun(rule, j.State, collectionState, j.Status.ExecutionCount, s.clock.Now())
		if next.Equal(j.Status.NextExecutionTime) && state == j.State {
			return nil
		}
		upd := *j
		upd.Status.NextExecutionTime = next
		upd.State = state
		_, _, err = s.store.JobPut(ctx, store.JobPutParams{Job: upd, ExpectVersion: j.Version, Now: s.clock.Now()})
		if !errors.Is(err, store.ErrConflict) {
			return err
		}
		if j, err = s.store.JobGet(ctx, store.JobGetParams{Key: j.Key}); err != nil {
			if errors.Is(err, store.ErrNotFound) {
				return nil
			}
			return err
		}
	}
	return store.ErrConflict
}

func (s *Server) deleteJob(w http.ResponseWriter, r *http.Request, rt route, info *reqInfo) *apiError {
	ctx := r.Context()
	j, err := s.store.JobGet(ctx, store.JobGetParams{Key: rt.key})
	if err != nil {
		return s.storeError(ctx, "job "+rt.key.Name, err)
	}
	info.jobID = j.ID
	if err := s.store.JobDelete(ctx, store.JobDeleteParams{Key: j.Key}); err != nil {
		return s.storeError(ctx, "job "+rt.key.Name, err)
	}
	s.disp.JobChanged(j.ID)
	writeEmpty(w)
	return nil
}

func (s *Server) runJob(w http.ResponseWriter, r *http.Request, rt route, info *reqInfo) *apiError {
	ctx := r.Context()
	coll, j, err := s.store.JobGetWithCollection(ctx, store.JobGetParams{Key: rt.key})
	if err == nil && j == nil {
		err = fmt.Errorf("job %s: %w", rt.key.Name, store.ErrNotFound)
	}
	if err != nil {
		return s.storeError(ctx, "job "+rt.key.Name, err)
	}
	info.jobID = j.ID
	if e := runRefused(rt.key.Name, coll.Key.Name, j.State, coll.Properties.State); e != nil {
		return e
	}
	// maxRecurrence applies to manual runs too: a job whose action runs itself cannot multiply.
	period := jobdef.CollectionLimits(&coll.Properties).MaxRecurrence
	var after func(time.Time) time.Time
	if period.Interval > 0 {
		after = period.After
	}
	last := j.Status.LastExecutionTime
	if allowed, early := jobstate.ManualRunTooEarly(last, s.clock.Now(), after); early {
		return conflict("job %s last ran at %s: the collection's maxRecurrence (%s) allows its next run from %s",
			rt.key.Name, rfc3339UTC(last), period, rfc3339UTC(allowed))
	}
	if err := s.disp.RunNow(ctx, j); err != nil {
		// The store checks it again as the states are when it claims the run: the collection
		// may have been disabled since it was read.
		var refused *store.RunRefusedError
		if errors.As(err, &refused) {
			if e := runRefused(rt.key.Name, coll.Key.Name, refused.State, refused.CollectionState); e != nil {
				return e
			}
		}
		var inFlight interface{ InFlightTag() string }
		if errors.As(err, &inFlight) {
			return conflict("job %s already has a manual run in flight (execution tag %s): a job runs on request once at a time",
				rt.key.Name, inFlight.InFlightTag())
		}
		return s.storeError(ctx, "job "+rt.key.Name, err)
	}
	writeEmpty(w)
	return nil
}

func (s *Server) listHistory(w http.ResponseWriter, r *http.Request, rt route, info *reqInfo) *apiError {
	ctx := r.Context()
	p, e := parsePage(r, "status", jobdef.CanonicalHistoryStatus)
	if e != nil {
		return e
	}
	j, err := s.store.JobGet(ctx, store.JobGetParams{Key: rt.key})
	if err != nil {
		return s.storeError(ctx, "job "+rt.key.Name, err)
	}
	info.jobID = j.ID
	hs, err := s.store.HistoryList(ctx, store.HistoryListParams{Job: j.Key, Status: p.filter, Skip: p.skip, Limit: p.top + 1})
	if err != nil {
		return s.storeError(ctx, "the job's history", err)
	}
	out := wire.JobHistoryListResult{Value: []wire.JobHistoryDefinition{}, NextLink: s.nextLink(r, p, len(hs))}
	for i, h := range hs {
		if i == p.top {
			break
		}
		id := strconv.FormatInt(h.ID, 10)
		out.Value = append(out.Value, wire.JobHistoryDefinition{
			ID:   jobID(j.Key) + "/history/" + id,
			Type: wire.TypeJobHistory,
			Name: j.Key.CollectionKey.Name + "/" + j.Key.Name + "/" + id,
			Properties: &wire.JobHistoryDefinitionProperties{
				StartTime:             rfc3339UTC(h.StartTime),
				EndTime:               rfc3339UTC(h.EndTime),
				ExpectedExecutionTime: rfc3339UTC(h.ExpectedExecutionTime),
				ActionName:            h.ActionName,
				Status:                h.Status,
				Message:               h.Message,
				RetryCount:            h.RetryCount,
				RepeatCount:           h.RepeatCount,
			},
		})
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}
