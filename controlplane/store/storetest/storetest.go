// Package storetest is the conformance suite every store.Driver must pass: Run exercises each
// method with exact assertions. A driver's package test calls it with a constructor that opens a
// fresh, empty store (a temp-dir file, a new database schema).
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

// Run runs the conformance suite; newDriver returns a fresh, empty store and arranges its Close.
func Run(t *testing.T, newDriver func(t *testing.T) store.Driver) {
	tests := []struct {
		name string
		fn   func(t *testing.T, d store.Driver)
	}{
		{"CollectionPutGetDelete", testCollectionPutGetDelete},
		{"NamesCompareAsNameKey", testNamesCompareAsNameKey},
		{"CollectionVersion", testCollectionVersion},
		{"CollectionList", testCollectionList},
		{"JobPutGetDelete", testJobPutGetDelete},
		{"JobVersion", testJobVersion},
		{"JobListAndCount", testJobListAndCount},
		{"JobQuota", testJobQuota},
		{"JobQuotaRace", testJobQuotaRace},
		{"CollectionDeleteCascades", testCollectionDeleteCascades},
		{"JobDeleteCascades", testJobDeleteCascades},
		{"JobGetByID", testJobGetByID},
		{"JobGetMany", testJobGetMany},
		{"JobListSchedulable", testJobListSchedulable},
		{"ExecutionClaimScheduled", testExecutionClaimScheduled},
		{"ExecutionClaimManual", testExecutionClaimManual},
		{"ExecutionClaimAhead", testExecutionClaimAhead},
		{"ExecutionClaimLoopBatch", testExecutionClaimLoopBatch},
		{"ManualRunInFlight", testManualRunInFlight},
		{"ExecutionListUnfinished", testExecutionListUnfinished},
		{"LargeBatches", testLargeBatches},
		{"AttemptRecordRetryAndErrorAction", testAttemptRecordRetryAndErrorAction},
		{"AttemptRecordFaulted", testAttemptRecordFaulted},
		{"AttemptRecordCompleted", testAttemptRecordCompleted},
		{"AttemptRecordGone", testAttemptRecordGone},
		{"AttemptRecordCancelled", testAttemptRecordCancelled},
		{"AttemptRecordSameJobTwiceInABatch", testAttemptRecordSameJobTwice},
		{"HistoryListOrderFilterPaging", testHistoryList},
		{"HistoryPurge", testHistoryPurge},
		{"JobPurgeFinal", testJobPurgeFinal},
		{"Meta", testMeta},
		{"JobListAll", testJobListAll},
		{"JobStateCount", testJobStateCount},
		{"JobListNext", testJobListNext},
		{"ClaimRace", testClaimRace},
		{"ManualRunRace", testManualRunRace},
		{"LeaderTermExpiry", testLeaderTermExpiry},
		{"StaleLeaderRefused", testStaleLeaderRefused},
		{"ExecutionTake", testExecutionTake},
		{"ExecutionTakeRace", testExecutionTakeRace},
		{"LeaseExpiresAndIsRescued", testLeaseExpiresAndIsRescued},
		{"LeaseRelease", testLeaseRelease},
		{"RescueFenced", testRescueFenced},
		{"RuleStates", testRuleStates},
		{"RuleRecord", testRuleRecord},
		{"ChangeFeed", testChangeFeed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.fn(t, newDriver(t))
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
