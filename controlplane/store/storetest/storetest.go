// Package storetest is the conformance suite every store.Driver must pass: Run exercises each
// method with exact assertions, nested by area. A driver's package test calls it with its opener,
// a constructor of a fresh, empty store (a temp-dir file, a new database schema: see testdb); the
// suite itself knows no driver.
package storetest

import (
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"
)

// T0 is the suite's "now"; every time it stores is derived from it.
var t0 = time.Date(2026, 3, 1, 12, 0, 0, 123456789, time.UTC)

// testCase is one case of the suite: fn runs on a fresh, empty store of its own.
type testCase struct {
	name string
	fn   func(t *testing.T, d store.Driver)
	// serial keeps the case out of the parallel ones: it drives many connections at once.
	serial bool
}

// areas are the parts of the store's contract, each with the cases that pin it. A new case goes
// into the area of what it pins.
var areas = []struct {
	name  string
	cases []testCase
}{
	{"Collection", []testCase{
		{name: "PutGetDelete", fn: testCollectionPutGetDelete},
		{name: "NamesCompareAsNameKey", fn: testNamesCompareAsNameKey},
		{name: "Version", fn: testCollectionVersion},
		{name: "List", fn: testCollectionList},
		{name: "DeleteCascades", fn: testCollectionDeleteCascades},
	}},
	{"Job", []testCase{
		{name: "PutGetDelete", fn: testJobPutGetDelete},
		{name: "Version", fn: testJobVersion},
		{name: "PutExpectations", fn: testJobPutExpectations},
		{name: "ListAndCount", fn: testJobListAndCount},
		{name: "Quota", fn: testJobQuota},
		{name: "QuotaRace", fn: testJobQuotaRace, serial: true},
		{name: "DeleteCascades", fn: testJobDeleteCascades},
		{name: "DeleteCollectionDisabledRace", fn: testJobDeleteCollectionDisabledRace, serial: true},
		{name: "GetByID", fn: testJobGetByID},
		{name: "GetWithCollection", fn: testJobGetWithCollection},
		{name: "GetMany", fn: testJobGetMany},
		{name: "ListSchedulable", fn: testJobListSchedulable},
		{name: "ListAll", fn: testJobListAll},
		{name: "ListPaused", fn: testJobListPaused},
		{name: "ListNext", fn: testJobListNext},
		{name: "StateCount", fn: testJobStateCount},
		{name: "HistoryFailed", fn: testHistoryFailed},
	}},
	{"Claim", []testCase{
		{name: "Scheduled", fn: testExecutionClaimScheduled},
		{name: "Manual", fn: testExecutionClaimManual},
		{name: "Ahead", fn: testExecutionClaimAhead},
		{name: "LoopBatch", fn: testExecutionClaimLoopBatch},
		{name: "ListUnfinished", fn: testExecutionListUnfinished},
		{name: "LargeBatches", fn: testLargeBatches},
		{name: "Race", fn: testClaimRace, serial: true},
		{name: "Skip", fn: testClaimSkip},
		{name: "MixedBatch", fn: testClaimMixedBatch},
	}},
	{"ManualRun", []testCase{
		{name: "InFlight", fn: testManualRunInFlight},
		{name: "Race", fn: testManualRunRace, serial: true},
		{name: "Refused", fn: testManualRunRefused},
		{name: "CollectionDisabledRace", fn: testManualRunCollectionDisabledRace, serial: true},
	}},
	{"Backfill", []testCase{
		{name: "OneAfterTheOther", fn: testExecutionBackfill},
		{name: "Race", fn: testExecutionBackfillRace, serial: true},
		{name: "Refused", fn: testExecutionBackfillRefused},
		{name: "CollectionDisabledRace", fn: testBackfillCollectionDisabledRace, serial: true},
	}},
	{"Record", []testCase{
		{name: "RetryAndErrorAction", fn: testAttemptRecordRetryAndErrorAction},
		{name: "Faulted", fn: testAttemptRecordFaulted},
		{name: "Completed", fn: testAttemptRecordCompleted},
		{name: "Gone", fn: testAttemptRecordGone},
		{name: "Cancelled", fn: testAttemptRecordCancelled},
		{name: "SameJobTwiceInABatch", fn: testAttemptRecordSameJobTwice},
	}},
	{"History", []testCase{
		{name: "ListOrderFilterPaging", fn: testHistoryList},
	}},
	{"Purge", []testCase{
		{name: "History", fn: testHistoryPurge},
		{name: "HistoryAcrossJobs", fn: testHistoryPurgeAcrossJobs},
		{name: "FinalJobs", fn: testJobPurgeFinal},
		{name: "FinalJobsRace", fn: testJobPurgeFinalRace, serial: true},
	}},
	{"Meta", []testCase{
		{name: "GetPut", fn: testMeta},
	}},
	{"Leader", []testCase{
		{name: "TermExpiry", fn: testLeaderTermExpiry},
		{name: "StaleLeaderRefused", fn: testStaleLeaderRefused},
	}},
	{"Lease", []testCase{
		{name: "Take", fn: testExecutionTake},
		{name: "TakeRace", fn: testExecutionTakeRace, serial: true},
		{name: "ExpiresAndIsRescued", fn: testLeaseExpiresAndIsRescued},
		{name: "Release", fn: testLeaseRelease},
		{name: "RescueFenced", fn: testRescueFenced},
	}},
	{"Rule", []testCase{
		{name: "States", fn: testRuleStates},
		{name: "Record", fn: testRuleRecord},
		{name: "Overlap", fn: testRuleOverlap},
		{name: "OverlapRelease", fn: testRuleOverlapRelease},
		{name: "OverlapReleaseDisabled", fn: testRuleOverlapReleaseDisabled},
		{name: "OverlapChange", fn: testRuleOverlapChange},
		{name: "OverlapLastExecution", fn: testRuleOverlapLastExecution},
		{name: "OverlapRace", fn: testOverlapRace, serial: true},
		{name: "BackfillDisabled", fn: testRuleBackfillDisabled},
		{name: "BackfillCollectionDisabled", fn: testRuleBackfillCollectionDisabled},
	}},
	{"ChangeFeed", []testCase{
		{name: "Changes", fn: testChangeFeed},
	}},
}

// maxParallel bounds the cases that run at once whatever -test.parallel is: each holds a store
// of its own (a PostgreSQL pool of up to 8 connections; the server allows 100 by default).
const maxParallel = 4

// Run runs the conformance suite, nested by area (TestX/Job/Quota). open returns a fresh, empty
// store and arranges its Close: every case gets its own, so the cases run in parallel, except
// those that drive many connections at once, which run alone first.
func Run(t *testing.T, open func(t *testing.T) store.Driver) {
	slots := make(chan struct{}, maxParallel)
	for _, a := range areas {
		t.Run(a.name, func(t *testing.T) {
			for _, c := range a.cases {
				t.Run(c.name, func(t *testing.T) {
					if !c.serial {
						t.Parallel()
						slots <- struct{}{}
						defer func() { <-slots }()
					}
					c.fn(t, open(t))
				})
			}
		})
	}
}

func intp(i int) *int { return &i }

func collectionKey(name string) store.CollectionKey {
	return store.CollectionKey{Subscription: "Sub-1", ResourceGroup: "RG-One", Name: name}
}

func newCollection(name, state string) store.Collection {
	return store.Collection{
		Key:      collectionKey(name),
		Location: "westeurope",
		Tags:     map[string]string{"team": "ops"},
		Properties: wire.JobCollectionProperties{
			Sku:   &wire.Sku{Name: "Standard"},
			State: state,
			Quota: &wire.JobCollectionQuota{MaxJobCount: intp(50)},
		},
	}
}

func putCollection(t *testing.T, d store.Driver, name, state string) *store.Collection {
	t.Helper()
	c, created, err := d.CollectionPut(t.Context(), store.CollectionPutParams{Collection: newCollection(name, state), Now: t0})
	if err != nil {
		t.Fatalf("CollectionPut(%s): %v", name, err)
	}
	if !created {
		t.Fatalf("CollectionPut(%s): created = false, want true", name)
	}
	return c
}

func newJob(collection, name, state string, next time.Time) store.Job {
	return store.Job{
		Key: store.JobKey{CollectionKey: collectionKey(collection), Name: name},
		Properties: wire.JobProperties{
			StartTime: "2026-03-01T12:00:00Z",
			Action: &wire.JobAction{
				Type: "Http",
				Request: &wire.HTTPRequest{
					URI: "http://example.test/hook", Method: "POST", Body: "hi",
					Headers: map[string]string{"Content-Type": "text/plain"},
				},
				RetryPolicy: &wire.RetryPolicy{RetryType: "Fixed", RetryInterval: "PT30S", RetryCount: intp(2)},
			},
			Recurrence: &wire.JobRecurrence{Frequency: "Minute", Interval: intp(1)},
			State:      state,
		},
		State:  state,
		Status: store.JobStatus{NextExecutionTime: next},
	}
}

func putJob(t *testing.T, d store.Driver, collection, name, state string, next time.Time) *store.Job {
	t.Helper()
	j, created, err := d.JobPut(t.Context(), store.JobPutParams{Job: newJob(collection, name, state, next), Now: t0})
	if err != nil {
		t.Fatalf("JobPut(%s): %v", name, err)
	}
	if !created {
		t.Fatalf("JobPut(%s): created = false, want true", name)
	}
	return j
}

func getJob(t *testing.T, d store.Driver, id int64) *store.Job {
	t.Helper()
	j, err := d.JobGetByID(t.Context(), store.JobGetByIDParams{ID: id})
	if err != nil {
		t.Fatalf("JobGetByID(%d): %v", id, err)
	}
	return j
}

func wantErr(t *testing.T, what string, err, want error) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Fatalf("%s: error = %v, want %v", what, err, want)
	}
}

func equal(t *testing.T, what string, got, want any) {
	t.Helper()
	if !reflect.DeepEqual(micro(reflect.ValueOf(got)), micro(reflect.ValueOf(want))) {
		t.Fatalf("%s:\n got  %+v\n want %+v", what, got, want)
	}
}

func jobNames(jobs []*store.Job) []string {
	out := make([]string, len(jobs))
	for i, j := range jobs {
		out[i] = j.Key.Name
	}
	return out
}

// Precision is the resolution every driver must keep times at: PostgreSQL keeps microseconds, so
// the suite compares times truncated to it (its t0 has nanoseconds, so a driver that rounds
// instead of truncating, or loses more, fails).
const Precision = time.Microsecond

var timeType = reflect.TypeOf(time.Time{})

// micro returns a copy of v (as an interface value) with every time.Time in it, however deep
// (structs, pointers, slices, maps), truncated to Precision, for comparison with DeepEqual.
func micro(v reflect.Value) any {
	if !v.IsValid() {
		return nil
	}
	return microValue(v).Interface()
}

func microValue(v reflect.Value) reflect.Value {
	switch {
	case v.Type() == timeType:
		t, _ := v.Interface().(time.Time)
		return reflect.ValueOf(t.Truncate(Precision))
	case v.Kind() == reflect.Pointer:
		if v.IsNil() {
			return v
		}
		p := reflect.New(v.Type().Elem())
		p.Elem().Set(microValue(v.Elem()))
		return p
	case v.Kind() == reflect.Struct:
		out := reflect.New(v.Type()).Elem()
		out.Set(v)
		for i := range v.NumField() {
			if out.Field(i).CanSet() {
				out.Field(i).Set(microValue(v.Field(i)))
			}
		}
		return out
	case v.Kind() == reflect.Slice:
		if v.IsNil() {
			return v
		}
		out := reflect.MakeSlice(v.Type(), v.Len(), v.Len())
		for i := range v.Len() {
			out.Index(i).Set(microValue(v.Index(i)))
		}
		return out
	case v.Kind() == reflect.Map:
		if v.IsNil() {
			return v
		}
		out := reflect.MakeMapWithSize(v.Type(), v.Len())
		for it := v.MapRange(); it.Next(); {
			out.SetMapIndex(it.Key(), microValue(it.Value()))
		}
		return out
	}
	return v
}
