package api

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/jobdef"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/jobstate"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"
)

// writeRetries is how many times a conditional write is retried after losing a race.
const writeRetries = 5

// collectionDefinition is the Azure body of a stored collection.
func collectionDefinition(c *store.Collection) wire.JobCollectionDefinition {
	p := c.Properties
	if p.Sku != nil {
		sku := *p.Sku
		p.Sku = &sku
	}
	return wire.JobCollectionDefinition{
		ID:         collectionID(c.Key),
		Type:       wire.TypeJobCollection,
		Name:       c.Key.Name,
		Location:   c.Location,
		Tags:       c.Tags,
		Properties: &p,
	}
}

func (s *Server) listCollections(w http.ResponseWriter, r *http.Request, rt route, _ *reqInfo) *apiError {
	p, e := parsePage(r, "", nil)
	if e != nil {
		return e
	}
	cs, err := s.store.CollectionList(r.Context(), store.CollectionListParams{
		Subscription: rt.key.Subscription, ResourceGroup: rt.key.ResourceGroup, Skip: p.skip, Limit: p.top + 1,
	})
	if err != nil {
		return s.storeError(r.Context(), "the job collections", err)
	}
	out := wire.JobCollectionListResult{Value: []wire.JobCollectionDefinition{}, NextLink: s.nextLink(r, p, len(cs))}
	for i, c := range cs {
		if i == p.top {
			break
		}
		out.Value = append(out.Value, collectionDefinition(c))
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (s *Server) getCollection(w http.ResponseWriter, r *http.Request, rt route, _ *reqInfo) *apiError {
	c, err := s.store.CollectionGet(r.Context(), store.CollectionGetParams{Key: rt.key.CollectionKey})
	if err != nil {
		return s.storeError(r.Context(), "job collection "+rt.key.CollectionKey.Name, err)
	}
	writeJSON(w, http.StatusOK, collectionDefinition(c))
	return nil
}

func (s *Server) putCollection(w http.ResponseWriter, r *http.Request, rt route, _ *reqInfo) *apiError {
	body, e := readBody(r)
	if e != nil {
		return e
	}
	var def wire.JobCollectionDefinition
	if err := wire.Decode(body, &def); err != nil {
		return decodeProblems(err)
	}
	return s.writeCollection(w, r, rt, false, func(*store.Collection) (wire.JobCollectionDefinition, *apiError) {
		return def, nil
	})
}

func (s *Server) patchCollection(w http.ResponseWriter, r *http.Request, rt route, _ *reqInfo) *apiError {
	body, e := readBody(r)
	if e != nil {
		return e
	}
	var def wire.JobCollectionDefinition
	if err := wire.Decode(body, &def); err != nil {
		return decodeProblems(err)
	}
	var patch map[string]any
	if err := json.Unmarshal(body, &patch); err != nil {
		return badRequest("%v", err)
	}
	return s.writeCollection(w, r, rt, true, func(old *store.Collection) (wire.JobCollectionDefinition, *apiError) {
		base := collectionDefinition(old)
		base.ID, base.Type, base.Name = "", "", ""
		var merged wire.JobCollectionDefinition
		if err := mergeInto(base, patch, &merged); err != nil {
			return merged, decodeProblems(err)
		}
		return merged, nil
	})
}

// writeCollection creates or replaces a collection with what build returns from the stored one
// (nil when there is none; patch requires one), retrying when it loses a race.
func (s *Server) writeCollection(w http.ResponseWriter, r *http.Request, rt route, patch bool,
	build func(old *store.Collection) (wire.JobCollectionDefinition, *apiError),
) *apiError {
	ctx := r.Context()
	key := rt.key.CollectionKey
	for range writeRetries {
		old, err := s.store.CollectionGet(ctx, store.CollectionGetParams{Key: key})
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return s.storeError(ctx, "job collection "+key.Name, err)
		}
		if err != nil {
			old = nil
			if patch {
				return notFound("job collection %s was not found", key.Name)
			}
		}
		def, e := build(old)
		if e != nil {
			return e
		}
		props := wire.JobCollectionProperties{}
		if def.Properties != nil {
			props = *def.Properties
		}
		jobdef.NormalizeCollection(&props)
		if ps := jobdef.ValidateCollection(&props); len(ps) > 0 {
			return invalid(ps, "properties.")
		}
		if props.Sku == nil || props.Sku.Name == "" {
			props.Sku = &wire.Sku{Name: jobdef.SkuStandard}
		}
		if props.State == "" {
			props.State = jobdef.StateEnabled
		}
		c := store.Collection{Key: key, Location: def.Location, Tags: def.Tags, Properties: props}
		params := store.CollectionPutParams{Collection: c, Now: s.clock.Now()}
		if old != nil {
			params.ExpectVersion = old.Version
			params.Collection.Key = old.Key // keep the spelling it was created with
			params.CancelBackfillOf = jobstate.BackfillOnCollectionChange(old.Properties.State, props.State)
		}
		stored, created, err := s.store.CollectionPut(ctx, params)
		if errors.Is(err, store.ErrConflict) {
			continue
		}
		if err != nil {
			return s.storeError(ctx, "job collection "+key.Name, err)
		}
		s.logCancelled(ctx, stored.Cancelled)
		if old != nil && old.Properties.State != stored.Properties.State {
			if err := s.rescheduleCollection(ctx, stored); err != nil {
				return s.storeError(ctx, "the jobs of job collection "+key.Name, err)
			}
		}
		status := http.StatusOK
		if created {
			status = http.StatusCreated
		}
		writeJSON(w, status, collectionDefinition(stored))
		return nil
	}
	return conflict("job collection %s is being changed concurrently; retry", key.Name)
}

func (s *Server) deleteCollection(w http.ResponseWriter, r *http.Request, rt route, _ *reqInfo) *apiError {
	ctx := r.Context()
	c, err := s.store.CollectionGet(ctx, store.CollectionGetParams{Key: rt.key.CollectionKey})
	if err != nil {
		return s.storeError(ctx, "job collection "+rt.key.CollectionKey.Name, err)
	}
	if err := s.store.CollectionDelete(ctx, store.CollectionDeleteParams{Key: c.Key}); err != nil {
		return s.storeError(ctx, "job collection "+rt.key.CollectionKey.Name, err)
	}
	s.disp.CollectionChanged(c.ID)
	writeEmpty(w)
	return nil
}

func (s *Server) enableCollection(w http.ResponseWriter, r *http.Request, rt route, _ *reqInfo) *apiError {
	return s.setCollectionState(w, r, rt, jobdef.StateEnabled)
}

func (s *Server) disableCollection(w http.ResponseWriter, r *http.Request, rt route, _ *reqInfo) *apiError {
	return s.setCollectionState(w, r, rt, jobdef.StateDisabled)
}

// setCollectionState enables or disables a collection: its jobs' next executions are recomputed
// from now (or cleared) and the dispatcher is told. Disabling it cancels its jobs' backfill
// executions not yet started (jobstate.BackfillOnCollectionChange) in the collection's write:
// were the daemon to stop before the jobs' writes, none of them would run.
func (s *Server) setCollectionState(w http.ResponseWriter, r *http.Request, rt route, state string) *apiError {
	ctx := r.Context()
	key := rt.key.CollectionKey
	for range writeRetries {
		c, err := s.store.CollectionGet(ctx, store.CollectionGetParams{Key: key})
		if err != nil {
			return s.storeError(ctx, "job collection "+key.Name, err)
		}
		if c.Properties.State == state {
			writeEmpty(w)
			return nil
		}
		// The write cancels the waiting executions of the jobs whose backfill the change stops,
		// in its own transaction.
		cancel := jobstate.BackfillOnCollectionChange(c.Properties.State, state)
		c.Properties.State = state
		stored, _, err := s.store.CollectionPut(ctx, store.CollectionPutParams{Collection: *c, ExpectVersion: c.Version, Now: s.clock.Now(),
			CancelBackfillOf: cancel})
		if errors.Is(err, store.ErrConflict) {
			continue
		}
		if err != nil {
			return s.storeError(ctx, "job collection "+key.Name, err)
		}
		s.logCancelled(ctx, stored.Cancelled)
		if err := s.rescheduleCollection(ctx, stored); err != nil {
			return s.storeError(ctx, "the jobs of job collection "+key.Name, err)
		}
		writeEmpty(w)
		return nil
	}
	return conflict("job collection %s is being changed concurrently; retry", key.Name)
}

// rescheduleCollection recomputes the next execution of every job of a collection whose state
// changed, then tells the dispatcher.
func (s *Server) rescheduleCollection(ctx context.Context, c *store.Collection) error {
	defer s.disp.CollectionChanged(c.ID)
	jobs, err := s.store.JobList(ctx, store.JobListParams{Collection: c.Key})
	if err != nil {
		return err
	}
	for _, j := range jobs {
		if err := s.rescheduleJob(ctx, j, c.Properties.State); err != nil {
			return err
		}
	}
	return nil
}
