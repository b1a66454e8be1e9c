package api

import (
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/dispatch"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store/faulty"
)

// TestACollectionDisabledAsTheRunIsClaimedRunsNothing: a collection disabled after the API read
// it for a run now, before the run is claimed (the real dispatcher, over HTTP), runs nothing: the
// store checks the job and its collection again in the claim's transaction, and the run is the
// 409 the API answers for a disabled collection. Before, it was claimed (200) and ran in the
// disabled collection.
func TestACollectionDisabledAsTheRunIsClaimedRunsNothing(t *testing.T) {
	hit := make(chan http.Header, 16)
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hit <- r.Header.Clone()
		w.WriteHeader(http.StatusOK)
	}))
	defer receiver.Close()
	var (
		fails *faulty.Driver
		disp  *dispatch.Dispatcher
	)
	h := newHarness(t, func(c *Config) {
		fails = faulty.Wrap(c.Store)
		c.Store = fails
		d, err := dispatch.New(dispatch.Config{Store: fails, Clock: c.Clock, Secrets: c.Secrets, Workers: 2})
		if err != nil {
			t.Fatal(err)
		}
		disp = d
		c.Dispatcher = d
	})
	defer runDispatcher(t, disp)()

	h.collection(collPath, `{"sku":{"name":"Standard"}}`)
	// Its first occurrence is years away: the scheduler claims nothing, the run now is the only
	// claim.
	h.must(http.StatusCreated, http.MethodPut, jobPath, `{"properties":{"startTime":"2030-01-01T00:00:00Z","action":{"type":"Http","request":{"uri":"`+
		receiver.URL+`","method":"POST"}},"recurrence":{"frequency":"Hour"}}}`)
	disabled := make(chan int, 1)
	fails.Before("ExecutionClaimMany", func() {
		disabled <- h.do(http.MethodPost, collPath+"/disable"+apiVersion, adminToken, nil).status
	})
	r := h.do(http.MethodPost, collPath+"/jobs/j1/run"+apiVersion, adminToken, nil)
	code, msg := "", ""
	if r.status != http.StatusOK {
		code, msg = r.errorBody(t)
	}
	xs, err := h.store.ExecutionListUnfinished(t.Context(), store.ExecutionListUnfinishedParams{})
	if err != nil {
		t.Fatal(err)
	}
	got := []any{<-disabled, r.status, code, msg, len(xs), h.storedJob("j1").Status.ExecutionCount, len(hit)}
	want := []any{http.StatusOK, http.StatusConflict, "Conflict", "job collection jc1 is Disabled: its jobs do not run, not even on request", 0, 0, 0}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("(disable, run status, code, message, stored, executionCount, requests) %v, want %v", got, want)
	}
}
