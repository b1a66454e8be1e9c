// Package storetest is the conformance suite every store.Driver must pass: Run exercises each
// method with exact assertions. A driver's package test calls it with a constructor that opens a
// fresh, empty store (a temp-dir file, a new database schema).
package storetest

import (
	"errors"
	"fmt"
	"reflect"
	"sort"
	"sync"
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
		{"JobListSchedulable", testJobListSchedulable},
		{"ExecutionClaimScheduled", testExecutionClaimScheduled},
		{"ExecutionClaimManual", testExecutionClaimManual},
		{"ExecutionClaimAhead", testExecutionClaimAhead},
		{"ExecutionListUnfinished", testExecutionListUnfinished},
		{"LargeBatches", testLargeBatches},
		{"AttemptRecordRetryAndErrorAction", testAttemptRecordRetryAndErrorAction},
		{"AttemptRecordFaulted", testAttemptRecordFaulted},
		{"AttemptRecordCompleted", testAttemptRecordCompleted},
		{"AttemptRecordGone", testAttemptRecordGone},
		{"AttemptRecordSameJobTwiceInABatch", testAttemptRecordSameJobTwice},
		{"HistoryListOrderFilterPaging", testHistoryList},
		{"HistoryPurge", testHistoryPurge},
		{"JobPurgeFinal", testJobPurgeFinal},
		{"Meta", testMeta},
		{"JobListAll", testJobListAll},
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
	if !reflect.DeepEqual(got, want) {
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

func testCollectionPutGetDelete(t *testing.T, d store.Driver) {
	ctx := t.Context()
	in := newCollection("Coll-A", "Enabled")
	c, created, err := d.CollectionPut(ctx, store.CollectionPutParams{Collection: in, Now: t0})
	if err != nil || !created {
		t.Fatalf("create: created=%v err=%v", created, err)
	}
	if c.ID <= 0 {
		t.Fatalf("ID = %d, want > 0", c.ID)
	}
	want := in
	want.ID, want.Version, want.CreatedAt, want.UpdatedAt = c.ID, 1, t0, t0
	equal(t, "created record", *c, want)

	// Keys compare case-insensitively; the record keeps its first spelling.
	got, err := d.CollectionGet(ctx, store.CollectionGetParams{Key: store.CollectionKey{Subscription: "SUB-1", ResourceGroup: "rg-one", Name: "coll-a"}})
	if err != nil {
		t.Fatalf("get: %v", err)
	}
	equal(t, "get", *got, want)

	// Replace through a differently spelled key.
	repl := newCollection("COLL-a", "Disabled")
	repl.Key.ResourceGroup = "rg-ONE"
	repl.Tags = map[string]string{"team": "dev", "x": "y"}
	repl.Properties.Sku.Name = "P20Premium"
	t1 := t0.Add(time.Hour)
	c2, created, err := d.CollectionPut(ctx, store.CollectionPutParams{Collection: repl, Now: t1})
	if err != nil || created {
		t.Fatalf("replace: created=%v err=%v", created, err)
	}
	want2 := repl
	want2.Key = in.Key
	want2.ID, want2.Version, want2.CreatedAt, want2.UpdatedAt = c.ID, 2, t0, t1
	equal(t, "replaced record", *c2, want2)

	_, err = d.CollectionGet(ctx, store.CollectionGetParams{Key: collectionKey("other")})
	wantErr(t, "get absent", err, store.ErrNotFound)
	_, err = d.CollectionGet(ctx, store.CollectionGetParams{Key: store.CollectionKey{Subscription: "sub-2", ResourceGroup: "RG-One", Name: "Coll-A"}})
	wantErr(t, "get in another subscription", err, store.ErrNotFound)

	if err := d.CollectionDelete(ctx, store.CollectionDeleteParams{Key: collectionKey("coll-A")}); err != nil {
		t.Fatalf("delete: %v", err)
	}
	_, err = d.CollectionGet(ctx, store.CollectionGetParams{Key: in.Key})
	wantErr(t, "get after delete", err, store.ErrNotFound)
	wantErr(t, "delete again", d.CollectionDelete(ctx, store.CollectionDeleteParams{Key: in.Key}), store.ErrNotFound)
}

// testNamesCompareAsNameKey: names are one name exactly when their store.NameKey (arm.Fold) are
// equal: ASCII letters in any case are, and names that strings.ToLower or strings.EqualFold would
// make equal but arm.Fold does not (U+017F and 's', U+212A and 'k', 'É' and 'é') are different
// names. (The API refuses every such name before it reaches a driver; a driver must not be the
// place where they meet.)
func testNamesCompareAsNameKey(t *testing.T, d store.Driver) {
	ctx := t.Context()
	put := func(sub, coll string) *store.Collection {
		t.Helper()
		c := newCollection(coll, "Enabled")
		c.Key.Subscription = sub
		got, created, err := d.CollectionPut(ctx, store.CollectionPutParams{Collection: c, Now: t0})
		if err != nil || !created {
			t.Fatalf("CollectionPut(%q, %q): created=%v err=%v, want a new collection", sub, coll, created, err)
		}
		return got
	}
	get := func(sub, coll string) (*store.Collection, error) {
		return d.CollectionGet(ctx, store.CollectionGetParams{Key: store.CollectionKey{Subscription: sub, ResourceGroup: "RG-One", Name: coll}})
	}
	a := put("sub1", "Coll")
	for _, other := range [][2]string{{"ſub1", "Coll"}, {"sub1", "\u212Aoll"}, {"sub1", "Çoll"}} {
		if _, err := get(other[0], other[1]); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("get %q/%q found sub1/Coll: %v", other[0], other[1], err)
		}
		if c := put(other[0], other[1]); c.ID == a.ID {
			t.Errorf("put %q/%q replaced sub1/Coll", other[0], other[1])
		}
	}
	put("sub1", "Éte")
	if _, err := get("sub1", "éte"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("get sub1/éte found sub1/Éte: %v", err)
	}
	for _, same := range [][2]string{{"SUB1", "coll"}, {"Sub1", "COLL"}} {
		c, err := get(same[0], same[1])
		if err != nil || c.ID != a.ID {
			t.Errorf("get %q/%q: %v, want sub1/Coll", same[0], same[1], err)
		}
	}
	cs, err := d.CollectionList(ctx, store.CollectionListParams{Subscription: "SUB1"})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range cs {
		names = append(names, c.Key.Name)
	}
	sort.Strings(names) // the order of non-ASCII names is the driver's collation's
	equal(t, "collections of SUB1", names, []string{"Coll", "Çoll", "Éte", "\u212Aoll"})
}

func testCollectionVersion(t *testing.T, d store.Driver) {
	ctx := t.Context()
	c := putCollection(t, d, "c", "Enabled")
	_, _, err := d.CollectionPut(ctx, store.CollectionPutParams{Collection: newCollection("c", "Disabled"), ExpectVersion: 7, Now: t0})
	wantErr(t, "put with a stale version", err, store.ErrConflict)
	got, err := d.CollectionGet(ctx, store.CollectionGetParams{Key: c.Key})
	if err != nil {
		t.Fatal(err)
	}
	equal(t, "unchanged after conflict", *got, *c)

	c2, created, err := d.CollectionPut(ctx, store.CollectionPutParams{Collection: newCollection("c", "Disabled"), ExpectVersion: 1, Now: t0})
	if err != nil || created {
		t.Fatalf("put with the current version: created=%v err=%v", created, err)
	}
	equal(t, "version", c2.Version, int64(2))
	equal(t, "state", c2.Properties.State, "Disabled")

	_, _, err = d.CollectionPut(ctx, store.CollectionPutParams{Collection: newCollection("absent", "Enabled"), ExpectVersion: 1, Now: t0})
	wantErr(t, "conditional put of an absent collection", err, store.ErrConflict)
	_, err = d.CollectionGet(ctx, store.CollectionGetParams{Key: collectionKey("absent")})
	wantErr(t, "absent stays absent", err, store.ErrNotFound)
}

func testCollectionList(t *testing.T, d store.Driver) {
	ctx := t.Context()
	for _, k := range []store.CollectionKey{
		{Subscription: "s1", ResourceGroup: "rg-b", Name: "zeta"},
		{Subscription: "s1", ResourceGroup: "RG-a", Name: "beta"},
		{Subscription: "s1", ResourceGroup: "rg-b", Name: "Alpha"},
		{Subscription: "s1", ResourceGroup: "rg-a", Name: "Gamma"},
		{Subscription: "s2", ResourceGroup: "rg-a", Name: "other"},
	} {
		c := newCollection(k.Name, "Enabled")
		c.Key = k
		if _, _, err := d.CollectionPut(ctx, store.CollectionPutParams{Collection: c, Now: t0}); err != nil {
			t.Fatal(err)
		}
	}
	names := func(p store.CollectionListParams) []string {
		t.Helper()
		cs, err := d.CollectionList(ctx, p)
		if err != nil {
			t.Fatalf("list %+v: %v", p, err)
		}
		out := make([]string, len(cs))
		for i, c := range cs {
			out[i] = c.Key.ResourceGroup + "/" + c.Key.Name
		}
		return out
	}
	equal(t, "whole subscription", names(store.CollectionListParams{Subscription: "S1"}),
		[]string{"RG-a/beta", "rg-a/Gamma", "rg-b/Alpha", "rg-b/zeta"})
	equal(t, "one resource group", names(store.CollectionListParams{Subscription: "s1", ResourceGroup: "RG-B"}),
		[]string{"rg-b/Alpha", "rg-b/zeta"})
	equal(t, "skip 1 limit 2", names(store.CollectionListParams{Subscription: "s1", Skip: 1, Limit: 2}),
		[]string{"rg-a/Gamma", "rg-b/Alpha"})
	equal(t, "skip past the end", names(store.CollectionListParams{Subscription: "s1", Skip: 4}), []string{})
	equal(t, "unknown subscription", names(store.CollectionListParams{Subscription: "s3"}), []string{})
}

func testJobPutGetDelete(t *testing.T, d store.Driver) {
	ctx := t.Context()
	_, _, err := d.JobPut(ctx, store.JobPutParams{Job: newJob("nope", "j", "Enabled", t0), Now: t0})
	wantErr(t, "job in an absent collection", err, store.ErrNotFound)

	c := putCollection(t, d, "c", "Enabled")
	in := newJob("c", "Job-One", "Enabled", t0.Add(time.Minute))
	in.Status.ExecutionCount, in.Status.FailureCount, in.Status.FaultedCount, in.Status.ConsecutiveFaults = 4, 3, 2, 1
	in.Status.LastExecutionTime = t0.Add(-time.Minute)
	j, created, err := d.JobPut(ctx, store.JobPutParams{Job: in, Now: t0})
	if err != nil || !created {
		t.Fatalf("create: created=%v err=%v", created, err)
	}
	want := in
	want.ID, want.CollectionID, want.Version, want.CreatedAt, want.UpdatedAt, want.CollectionState = j.ID, c.ID, 1, t0, t0, "Enabled"
	equal(t, "created job", *j, want)

	got, err := d.JobGet(ctx, store.JobGetParams{Key: store.JobKey{CollectionKey: store.CollectionKey{Subscription: "sub-1", ResourceGroup: "rg-one", Name: "C"}, Name: "JOB-one"}})
	if err != nil {
		t.Fatal(err)
	}
	equal(t, "get", *got, want)

	// Replace: definition, state and status as given; key spelling and creation time kept.
	repl := newJob("C", "job-ONE", "Disabled", time.Time{})
	repl.Properties.Action.Request.URI = "http://example.test/other"
	repl.Status.ExecutionCount = 9
	t1 := t0.Add(time.Hour)
	j2, created, err := d.JobPut(ctx, store.JobPutParams{Job: repl, Now: t1})
	if err != nil || created {
		t.Fatalf("replace: created=%v err=%v", created, err)
	}
	want2 := repl
	want2.Key = in.Key
	want2.ID, want2.CollectionID, want2.Version, want2.CreatedAt, want2.UpdatedAt, want2.CollectionState = j.ID, c.ID, 2, t0, t1, "Enabled"
	equal(t, "replaced job", *j2, want2)

	_, err = d.JobGet(ctx, store.JobGetParams{Key: store.JobKey{CollectionKey: collectionKey("c"), Name: "absent"}})
	wantErr(t, "get absent", err, store.ErrNotFound)

	if err := d.JobDelete(ctx, store.JobDeleteParams{Key: store.JobKey{CollectionKey: collectionKey("C"), Name: "JOB-ONE"}}); err != nil {
		t.Fatalf("delete: %v", err)
	}
	_, err = d.JobGet(ctx, store.JobGetParams{Key: in.Key})
	wantErr(t, "get after delete", err, store.ErrNotFound)
	wantErr(t, "delete again", d.JobDelete(ctx, store.JobDeleteParams{Key: in.Key}), store.ErrNotFound)
}

func testJobVersion(t *testing.T, d store.Driver) {
	ctx := t.Context()
	putCollection(t, d, "c", "Enabled")
	j := putJob(t, d, "c", "j", "Enabled", t0)
	_, _, err := d.JobPut(ctx, store.JobPutParams{Job: newJob("c", "j", "Disabled", time.Time{}), ExpectVersion: 2, Now: t0})
	wantErr(t, "stale version", err, store.ErrConflict)
	equal(t, "unchanged after conflict", *getJob(t, d, j.ID), *j)

	j2, _, err := d.JobPut(ctx, store.JobPutParams{Job: newJob("c", "j", "Disabled", time.Time{}), ExpectVersion: 1, Now: t0})
	if err != nil {
		t.Fatal(err)
	}
	equal(t, "version", j2.Version, int64(2))
	equal(t, "state", j2.State, "Disabled")

	_, _, err = d.JobPut(ctx, store.JobPutParams{Job: newJob("c", "absent", "Enabled", t0), ExpectVersion: 1, Now: t0})
	wantErr(t, "conditional put of an absent job", err, store.ErrConflict)
}

func testJobListAndCount(t *testing.T, d store.Driver) {
	ctx := t.Context()
	putCollection(t, d, "c", "Enabled")
	putCollection(t, d, "other", "Enabled")
	putJob(t, d, "c", "delta", "Completed", time.Time{})
	putJob(t, d, "c", "Alpha", "Enabled", t0)
	putJob(t, d, "c", "charlie", "Completed", time.Time{})
	putJob(t, d, "c", "Bravo", "Disabled", time.Time{})
	putJob(t, d, "other", "aaa", "Enabled", t0)

	list := func(p store.JobListParams) []string {
		t.Helper()
		p.Collection = collectionKey("C")
		jobs, err := d.JobList(ctx, p)
		if err != nil {
			t.Fatalf("list %+v: %v", p, err)
		}
		return jobNames(jobs)
	}
	equal(t, "all", list(store.JobListParams{}), []string{"Alpha", "Bravo", "charlie", "delta"})
	equal(t, "state filter", list(store.JobListParams{State: "completed"}), []string{"charlie", "delta"})
	equal(t, "skip 1 limit 2", list(store.JobListParams{Skip: 1, Limit: 2}), []string{"Bravo", "charlie"})
	equal(t, "filter and skip", list(store.JobListParams{State: "Completed", Skip: 1}), []string{"delta"})
	equal(t, "filter matching none", list(store.JobListParams{State: "Faulted"}), []string{})

	n, err := d.JobCount(ctx, store.JobCountParams{Collection: collectionKey("c")})
	if err != nil {
		t.Fatal(err)
	}
	equal(t, "count", n, 4)
	_, err = d.JobCount(ctx, store.JobCountParams{Collection: collectionKey("absent")})
	wantErr(t, "count of an absent collection", err, store.ErrNotFound)
	_, err = d.JobList(ctx, store.JobListParams{Collection: collectionKey("absent")})
	wantErr(t, "list of an absent collection", err, store.ErrNotFound)
}

func testJobQuota(t *testing.T, d store.Driver) {
	ctx := t.Context()
	putCollection(t, d, "c", "Enabled")
	for _, name := range []string{"a", "b"} {
		if _, _, err := d.JobPut(ctx, store.JobPutParams{Job: newJob("c", name, "Enabled", t0), MaxJobs: 2, Now: t0}); err != nil {
			t.Fatalf("put %s: %v", name, err)
		}
	}
	_, _, err := d.JobPut(ctx, store.JobPutParams{Job: newJob("c", "c", "Enabled", t0), MaxJobs: 2, Now: t0})
	wantErr(t, "third job", err, store.ErrQuota)
	// Replacing an existing job is not a create.
	if _, created, err := d.JobPut(ctx, store.JobPutParams{Job: newJob("c", "A", "Disabled", t0), MaxJobs: 2, Now: t0}); err != nil || created {
		t.Fatalf("replace at quota: created=%v err=%v", created, err)
	}
	n, err := d.JobCount(ctx, store.JobCountParams{Collection: collectionKey("c")})
	if err != nil {
		t.Fatal(err)
	}
	equal(t, "count", n, 2)
}

func testJobQuotaRace(t *testing.T, d store.Driver) {
	ctx := t.Context()
	putCollection(t, d, "c", "Enabled")
	const tries, limit = 20, 5
	errs := make([]error, tries)
	var wg sync.WaitGroup
	for i := range tries {
		wg.Go(func() {
			_, _, errs[i] = d.JobPut(ctx, store.JobPutParams{Job: newJob("c", fmt.Sprintf("job-%02d", i), "Enabled", t0), MaxJobs: limit, Now: t0})
		})
	}
	wg.Wait()
	ok, quota := 0, 0
	for i, err := range errs {
		switch {
		case err == nil:
			ok++
		case errors.Is(err, store.ErrQuota):
			quota++
		default:
			t.Fatalf("put %d: %v", i, err)
		}
	}
	equal(t, "successful creates", ok, limit)
	equal(t, "ErrQuota answers", quota, tries-limit)
	n, err := d.JobCount(ctx, store.JobCountParams{Collection: collectionKey("c")})
	if err != nil {
		t.Fatal(err)
	}
	equal(t, "count", n, limit)
}

// claim claims one occurrence of j and fails the test on any error.
func claim(t *testing.T, d store.Driver, c store.ExecutionClaim) store.ExecutionClaimResult {
	t.Helper()
	res, err := d.ExecutionClaimMany(t.Context(), store.ExecutionClaimManyParams{Claims: []store.ExecutionClaim{c}, Now: t0})
	if err != nil {
		t.Fatalf("claim: %v", err)
	}
	if len(res) != 1 || res[0].Err != nil {
		t.Fatalf("claim: %+v", res)
	}
	return res[0]
}

func scheduledClaim(j *store.Job, tag string, next time.Time) store.ExecutionClaim {
	return store.ExecutionClaim{
		Execution: store.Execution{
			JobID: j.ID, Tag: tag, Scheduled: j.Status.NextExecutionTime, Phase: store.ActionMain,
			DueAt: t0, ClaimedAt: t0,
		},
		ExpectVersion:     j.Version,
		NextExecutionTime: next,
	}
}

func record(t *testing.T, d store.Driver, r store.AttemptRecord) store.AttemptRecordResult {
	t.Helper()
	res, err := d.AttemptRecordMany(t.Context(), store.AttemptRecordManyParams{Records: []store.AttemptRecord{r}, Now: t0})
	if err != nil {
		t.Fatalf("record: %v", err)
	}
	if len(res) != 1 {
		t.Fatalf("record: %d results, want 1", len(res))
	}
	return res[0]
}

func unfinished(t *testing.T, d store.Driver) []*store.Execution {
	t.Helper()
	es, err := d.ExecutionListUnfinished(t.Context(), store.ExecutionListUnfinishedParams{})
	if err != nil {
		t.Fatal(err)
	}
	return es
}

func history(t *testing.T, d store.Driver, j *store.Job, p store.HistoryListParams) []*store.HistoryEntry {
	t.Helper()
	p.Job = j.Key
	hs, err := d.HistoryList(t.Context(), p)
	if err != nil {
		t.Fatal(err)
	}
	return hs
}

func entry(e *store.Execution, action, status string, retry int, msg string) store.HistoryEntry {
	return store.HistoryEntry{
		ExecutionTag: e.Tag, ActionName: action, Status: status, Message: msg, RetryCount: retry,
		RepeatCount: e.RepeatCount, ExpectedExecutionTime: e.Scheduled, StartTime: t0.Add(time.Second), EndTime: t0.Add(2 * time.Second),
	}
}

func testCollectionDeleteCascades(t *testing.T, d store.Driver) {
	ctx := t.Context()
	putCollection(t, d, "c", "Enabled")
	putCollection(t, d, "keep", "Enabled")
	j := putJob(t, d, "c", "j", "Enabled", t0)
	k := putJob(t, d, "keep", "k", "Enabled", t0)
	e := claim(t, d, scheduledClaim(j, "tag-j", t0.Add(time.Minute))).Execution
	record(t, d, store.AttemptRecord{ExecutionID: e.ID, JobID: j.ID, History: entry(e, store.ActionMain, store.HistoryFailed, 0, "500"),
		Next: t0.Add(time.Minute), Phase: store.ActionMain, Attempt: 1})
	ek := claim(t, d, scheduledClaim(k, "tag-k", t0.Add(time.Minute))).Execution

	if err := d.CollectionDelete(ctx, store.CollectionDeleteParams{Key: collectionKey("C")}); err != nil {
		t.Fatal(err)
	}
	_, err := d.JobGetByID(ctx, store.JobGetByIDParams{ID: j.ID})
	wantErr(t, "job of the deleted collection", err, store.ErrNotFound)
	_, err = d.HistoryList(ctx, store.HistoryListParams{Job: j.Key})
	wantErr(t, "history of the deleted job", err, store.ErrNotFound)
	es := unfinished(t, d)
	if len(es) != 1 || es[0].ID != ek.ID {
		t.Fatalf("executions after delete = %+v, want only %d", es, ek.ID)
	}
	// Re-creating the names starts from nothing.
	putCollection(t, d, "c", "Enabled")
	j2 := putJob(t, d, "c", "j", "Enabled", t0)
	equal(t, "history of the re-created job", history(t, d, j2, store.HistoryListParams{}), []*store.HistoryEntry{})
}

func testJobDeleteCascades(t *testing.T, d store.Driver) {
	ctx := t.Context()
	putCollection(t, d, "c", "Enabled")
	j := putJob(t, d, "c", "j", "Enabled", t0)
	e := claim(t, d, scheduledClaim(j, "tag", t0.Add(time.Minute))).Execution
	record(t, d, store.AttemptRecord{ExecutionID: e.ID, JobID: j.ID, History: entry(e, store.ActionMain, store.HistoryFailed, 0, "500"),
		Next: t0.Add(time.Minute), Phase: store.ActionMain, Attempt: 1})
	if err := d.JobDelete(ctx, store.JobDeleteParams{Key: j.Key}); err != nil {
		t.Fatal(err)
	}
	equal(t, "executions", unfinished(t, d), []*store.Execution{})
	j2 := putJob(t, d, "c", "j", "Enabled", t0)
	equal(t, "history of the re-created job", history(t, d, j2, store.HistoryListParams{}), []*store.HistoryEntry{})
}

func testJobGetByID(t *testing.T, d store.Driver) {
	putCollection(t, d, "c", "Suspended")
	j := putJob(t, d, "c", "j", "Enabled", t0)
	got := getJob(t, d, j.ID)
	equal(t, "by id", *got, *j)
	equal(t, "collection state", got.CollectionState, "Suspended")
	_, err := d.JobGetByID(t.Context(), store.JobGetByIDParams{ID: j.ID + 1000})
	wantErr(t, "absent id", err, store.ErrNotFound)
}

func testJobListSchedulable(t *testing.T, d store.Driver) {
	ctx := t.Context()
	c := putCollection(t, d, "c", "Enabled")
	putCollection(t, d, "off", "Disabled")
	putCollection(t, d, "susp", "Suspended")
	c2 := putCollection(t, d, "c2", "Enabled")
	var want []int64
	want = append(want, putJob(t, d, "c", "a", "Enabled", t0).ID)
	putJob(t, d, "c", "b", "Disabled", t0)
	putJob(t, d, "c", "nothing-next", "Enabled", time.Time{})
	putJob(t, d, "c", "done", "Completed", time.Time{})
	want = append(want, putJob(t, d, "c", "e", "Enabled", t0.Add(time.Hour)).ID)
	putJob(t, d, "off", "f", "Enabled", t0)
	putJob(t, d, "susp", "g", "Enabled", t0)
	want = append(want, putJob(t, d, "c2", "h", "Enabled", t0).ID)

	ids := func(p store.JobListSchedulableParams) []int64 {
		t.Helper()
		jobs, err := d.JobListSchedulable(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		out := []int64{}
		for _, j := range jobs {
			out = append(out, j.ID)
		}
		return out
	}
	equal(t, "all", ids(store.JobListSchedulableParams{}), want)
	equal(t, "first page", ids(store.JobListSchedulableParams{Limit: 2}), want[:2])
	equal(t, "second page", ids(store.JobListSchedulableParams{AfterID: want[1], Limit: 2}), want[2:])
	equal(t, "one collection", ids(store.JobListSchedulableParams{CollectionID: c.ID}), want[:2])
	equal(t, "other collection", ids(store.JobListSchedulableParams{CollectionID: c2.ID}), want[2:])
}

func testExecutionClaimScheduled(t *testing.T, d store.Driver) {
	ctx := t.Context()
	putCollection(t, d, "c", "Enabled")
	putCollection(t, d, "off", "Disabled")
	j := putJob(t, d, "c", "j", "Enabled", t0)
	stale := putJob(t, d, "c", "stale", "Enabled", t0)
	disabled := putJob(t, d, "c", "disabled", "Disabled", t0)
	inOff := putJob(t, d, "off", "j", "Enabled", t0)

	next := t0.Add(time.Minute)
	staleClaim := scheduledClaim(stale, "t2", next)
	staleClaim.ExpectVersion = stale.Version + 1
	gone := scheduledClaim(j, "t5", next)
	gone.Execution.JobID = j.ID + 1000
	res, err := d.ExecutionClaimMany(ctx, store.ExecutionClaimManyParams{Now: t0.Add(time.Second), Claims: []store.ExecutionClaim{
		scheduledClaim(j, "t1", next), staleClaim, scheduledClaim(disabled, "t3", next), scheduledClaim(inOff, "t4", next), gone,
	}})
	if err != nil {
		t.Fatal(err)
	}
	equal(t, "results", len(res), 5)
	if res[0].Err != nil {
		t.Fatalf("claim 0: %v", res[0].Err)
	}
	wantErr(t, "stale version", res[1].Err, store.ErrConflict)
	wantErr(t, "disabled job", res[2].Err, store.ErrConflict)
	wantErr(t, "job of a disabled collection", res[3].Err, store.ErrConflict)
	wantErr(t, "absent job", res[4].Err, store.ErrNotFound)
	for i := 1; i < 5; i++ {
		if res[i].Execution != nil {
			t.Fatalf("claim %d: execution %+v on error", i, res[i].Execution)
		}
	}
	e := res[0].Execution
	wantE := store.Execution{ID: e.ID, JobID: j.ID, Tag: "t1", Scheduled: t0, RepeatCount: 1, Phase: store.ActionMain, DueAt: t0, ClaimedAt: t0}
	equal(t, "execution", *e, wantE)
	equal(t, "version", res[0].Version, j.Version+1)

	got := getJob(t, d, j.ID)
	equal(t, "next", got.Status.NextExecutionTime, next)
	equal(t, "execution count", got.Status.ExecutionCount, 1)
	equal(t, "last execution", got.Status.LastExecutionTime, t0.Add(time.Second))
	equal(t, "version", got.Version, j.Version+1)
	equal(t, "stale job unchanged", *getJob(t, d, stale.ID), *stale)

	// The old version no longer claims; the new one does, and counts on.
	res2, err := d.ExecutionClaimMany(ctx, store.ExecutionClaimManyParams{Now: t0, Claims: []store.ExecutionClaim{scheduledClaim(j, "t6", next)}})
	if err != nil {
		t.Fatal(err)
	}
	wantErr(t, "claim with the pre-claim version", res2[0].Err, store.ErrConflict)
	r3 := claim(t, d, scheduledClaim(got, "t7", time.Time{}))
	equal(t, "repeat count", r3.Execution.RepeatCount, 2)
	got = getJob(t, d, j.ID)
	equal(t, "next after the last claim", got.Status.NextExecutionTime, time.Time{})
	equal(t, "execution count", got.Status.ExecutionCount, 2)
}

// An occurrence claimed before it is due: the job's last execution is when the attempt starts
// (its DueAt), not when it was claimed; in a batch of distinct jobs and alone.
func testExecutionClaimAhead(t *testing.T, d store.Driver) {
	ctx := t.Context()
	putCollection(t, d, "c", "Enabled")
	a := putJob(t, d, "c", "a", "Enabled", t0)
	b := putJob(t, d, "c", "b", "Enabled", t0)
	due := t0.Add(400 * time.Millisecond)
	ahead := func(j *store.Job, tag string) store.ExecutionClaim {
		c := scheduledClaim(j, tag, t0.Add(time.Minute))
		c.Execution.Scheduled, c.Execution.DueAt = due, due
		return c
	}
	claim := func(claims ...store.ExecutionClaim) {
		t.Helper()
		res, err := d.ExecutionClaimMany(ctx, store.ExecutionClaimManyParams{Now: t0, Claims: claims})
		if err != nil {
			t.Fatal(err)
		}
		for i, r := range res {
			if r.Err != nil {
				t.Fatalf("claim %d: %v", i, r.Err)
			}
		}
	}
	claim(ahead(a, "ta")) // a batch of distinct scheduled claims
	equal(t, "last execution of a, claimed ahead in a batch", getJob(t, d, a.ID).Status.LastExecutionTime, due)
	manual := store.ExecutionClaim{Execution: store.Execution{JobID: a.ID, Tag: "tm", Scheduled: t0, Manual: true, Phase: store.ActionMain, DueAt: t0, ClaimedAt: t0}}
	claim(ahead(b, "tb"), manual) // a mixed batch goes row by row
	equal(t, "last execution of b, claimed ahead alone", getJob(t, d, b.ID).Status.LastExecutionTime, due)
	equal(t, "last execution of a, run now", getJob(t, d, a.ID).Status.LastExecutionTime, t0)
}

func testExecutionClaimManual(t *testing.T, d store.Driver) {
	putCollection(t, d, "c", "Disabled")
	j := putJob(t, d, "c", "j", "Disabled", t0.Add(time.Hour))
	r := claim(t, d, store.ExecutionClaim{Execution: store.Execution{JobID: j.ID, Tag: "m", Scheduled: t0, Manual: true, DueAt: t0, ClaimedAt: t0}})
	equal(t, "execution", *r.Execution, store.Execution{ID: r.Execution.ID, JobID: j.ID, Tag: "m", Scheduled: t0, RepeatCount: 1,
		Manual: true, Phase: store.ActionMain, DueAt: t0, ClaimedAt: t0})
	got := getJob(t, d, j.ID)
	equal(t, "next unchanged", got.Status.NextExecutionTime, t0.Add(time.Hour))
	equal(t, "execution count", got.Status.ExecutionCount, 1)
	equal(t, "state", got.State, "Disabled")

	res, err := d.ExecutionClaimMany(t.Context(), store.ExecutionClaimManyParams{Now: t0, Claims: []store.ExecutionClaim{
		{Execution: store.Execution{JobID: j.ID + 99, Tag: "x", Manual: true}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	wantErr(t, "manual claim of an absent job", res[0].Err, store.ErrNotFound)
}

func testExecutionListUnfinished(t *testing.T, d store.Driver) {
	putCollection(t, d, "c", "Enabled")
	var want []*store.Execution
	for i := range 5 {
		j := putJob(t, d, "c", fmt.Sprintf("j%d", i), "Enabled", t0.Add(time.Duration(i)*time.Minute))
		c := scheduledClaim(j, fmt.Sprintf("tag-%d", i), time.Time{})
		c.Execution.Missed = i
		c.Execution.DueAt = t0.Add(time.Duration(i) * time.Second)
		want = append(want, claim(t, d, c).Execution)
	}
	equal(t, "all", unfinished(t, d), want)
	page, err := d.ExecutionListUnfinished(t.Context(), store.ExecutionListUnfinishedParams{AfterID: want[1].ID, Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	equal(t, "page", page, want[2:4])
}

func testAttemptRecordRetryAndErrorAction(t *testing.T, d store.Driver) {
	putCollection(t, d, "c", "Enabled")
	j := putJob(t, d, "c", "j", "Enabled", t0)
	cl := claim(t, d, scheduledClaim(j, "tag", t0.Add(time.Hour)))
	e := cl.Execution

	// A failed attempt with retries left: the execution goes on, the job is untouched.
	r := record(t, d, store.AttemptRecord{ExecutionID: e.ID, JobID: j.ID, History: entry(e, store.ActionMain, store.HistoryFailed, 0, "HTTP 500"),
		Next: t0.Add(30 * time.Second), Phase: store.ActionMain, Attempt: 1})
	equal(t, "result after a retry", r, store.AttemptRecordResult{})
	equal(t, "job version after a retry", getJob(t, d, j.ID).Version, cl.Version)
	wantE := *e
	wantE.Attempt, wantE.DueAt = 1, t0.Add(30*time.Second)
	equal(t, "execution after a retry", unfinished(t, d), []*store.Execution{&wantE})

	// Retries spent: failure counted, on to the error action.
	r = record(t, d, store.AttemptRecord{ExecutionID: e.ID, JobID: j.ID, History: entry(e, store.ActionMain, store.HistoryFailed, 1, "HTTP 500"),
		Next: t0.Add(31 * time.Second), Phase: store.ActionError, Attempt: 0, Failure: true})
	equal(t, "result after the main action failed", r, store.AttemptRecordResult{State: "Enabled", Version: cl.Version + 1, Previous: cl.Version})
	wantE.Phase, wantE.Attempt, wantE.DueAt = store.ActionError, 0, t0.Add(31*time.Second)
	equal(t, "execution in the error phase", unfinished(t, d), []*store.Execution{&wantE})

	// The error action succeeds: not faulted, consecutive faults reset.
	r = record(t, d, store.AttemptRecord{ExecutionID: e.ID, JobID: j.ID, History: entry(e, store.ActionError, store.HistoryCompleted, 0, "HTTP 200"),
		Finished: true, FaultedAfter: 3})
	// The failure was counted when the main action failed; no fault to reset: the job is untouched.
	equal(t, "result after the error action", r, store.AttemptRecordResult{})
	equal(t, "job version after the error action", getJob(t, d, j.ID).Version, cl.Version+1)
	equal(t, "executions", unfinished(t, d), []*store.Execution{})
	got := getJob(t, d, j.ID)
	equal(t, "status", got.Status, store.JobStatus{ExecutionCount: 1, FailureCount: 1, LastExecutionTime: t0, NextExecutionTime: t0.Add(time.Hour)})

	hs := history(t, d, j, store.HistoryListParams{})
	equal(t, "history length", len(hs), 3)
	for i, want := range []store.HistoryEntry{
		entry(e, store.ActionError, store.HistoryCompleted, 0, "HTTP 200"),
		entry(e, store.ActionMain, store.HistoryFailed, 1, "HTTP 500"),
		entry(e, store.ActionMain, store.HistoryFailed, 0, "HTTP 500"),
	} {
		want.ID, want.JobID, want.ExecutionID = hs[i].ID, j.ID, e.ID
		equal(t, fmt.Sprintf("history[%d]", i), *hs[i], want)
	}
}

func testAttemptRecordFaulted(t *testing.T, d store.Driver) {
	putCollection(t, d, "c", "Enabled")
	j := putJob(t, d, "c", "j", "Enabled", t0)
	fault := func(i int) store.AttemptRecordResult {
		t.Helper()
		cur := getJob(t, d, j.ID)
		e := claim(t, d, scheduledClaim(cur, fmt.Sprintf("tag-%d", i), t0.Add(time.Duration(i+1)*time.Minute))).Execution
		return record(t, d, store.AttemptRecord{ExecutionID: e.ID, JobID: j.ID, History: entry(e, store.ActionMain, store.HistoryFailed, 0, "HTTP 503"),
			Failure: true, Finished: true, Faulted: true, FaultedAfter: 3})
	}
	equal(t, "state after 1", fault(0).State, "Enabled")
	equal(t, "state after 2", fault(1).State, "Enabled")
	// A good occurrence resets the run of faults.
	cur := getJob(t, d, j.ID)
	e := claim(t, d, scheduledClaim(cur, "ok", t0.Add(10*time.Minute))).Execution
	record(t, d, store.AttemptRecord{ExecutionID: e.ID, JobID: j.ID, History: entry(e, store.ActionMain, store.HistoryCompleted, 0, "HTTP 200"),
		Finished: true, FaultedAfter: 3})
	equal(t, "consecutive after success", getJob(t, d, j.ID).Status.ConsecutiveFaults, 0)
	// Another good occurrence changes nothing in the job: not even its version.
	cur = getJob(t, d, j.ID)
	e = claim(t, d, scheduledClaim(cur, "ok2", t0.Add(11*time.Minute))).Execution
	claimed := getJob(t, d, j.ID)
	equal(t, "record of a good occurrence after a good one", record(t, d, store.AttemptRecord{ExecutionID: e.ID, JobID: j.ID,
		History: entry(e, store.ActionMain, store.HistoryCompleted, 0, "HTTP 200"), Finished: true, FaultedAfter: 3}), store.AttemptRecordResult{})
	equal(t, "job after a good occurrence after a good one", getJob(t, d, j.ID), claimed)
	equal(t, "state after 3 with a success between", fault(2).State, "Enabled")
	equal(t, "state after 4", fault(3).State, "Enabled")
	equal(t, "state after 5 (3 in a row)", fault(4).State, "Faulted")
	got := getJob(t, d, j.ID)
	equal(t, "state", got.State, "Faulted")
	equal(t, "status", got.Status, store.JobStatus{ExecutionCount: 7, FailureCount: 5, FaultedCount: 5, ConsecutiveFaults: 3, LastExecutionTime: t0})
}

func testAttemptRecordCompleted(t *testing.T, d store.Driver) {
	putCollection(t, d, "c", "Enabled")
	j := putJob(t, d, "c", "j", "Enabled", t0)
	// Two executions in flight, nothing scheduled after them.
	e1 := claim(t, d, scheduledClaim(j, "one", t0.Add(time.Minute))).Execution
	j = getJob(t, d, j.ID)
	e2 := claim(t, d, scheduledClaim(j, "two", time.Time{})).Execution
	r := record(t, d, store.AttemptRecord{ExecutionID: e1.ID, JobID: j.ID, History: entry(e1, store.ActionMain, store.HistoryCompleted, 0, "ok"), Finished: true})
	equal(t, "state while another execution runs", r.State, "Enabled")
	r = record(t, d, store.AttemptRecord{ExecutionID: e2.ID, JobID: j.ID, History: entry(e2, store.ActionMain, store.HistoryCompleted, 0, "ok"), Finished: true})
	equal(t, "state after the last one", r.State, "Completed")
	got := getJob(t, d, j.ID)
	equal(t, "stored state", got.State, "Completed")
	equal(t, "execution count", got.Status.ExecutionCount, 2)

	// A manual run of a Disabled job with nothing scheduled leaves it Disabled.
	dis := putJob(t, d, "c", "dis", "Disabled", time.Time{})
	e := claim(t, d, store.ExecutionClaim{Execution: store.Execution{JobID: dis.ID, Tag: "m", Scheduled: t0, Manual: true, DueAt: t0, ClaimedAt: t0}}).Execution
	r = record(t, d, store.AttemptRecord{ExecutionID: e.ID, JobID: dis.ID, History: entry(e, store.ActionMain, store.HistoryCompleted, 0, "ok"), Finished: true})
	equal(t, "disabled job after a manual run", r.State, "Disabled")
}

func testAttemptRecordGone(t *testing.T, d store.Driver) {
	ctx := t.Context()
	putCollection(t, d, "c", "Enabled")
	j := putJob(t, d, "c", "j", "Enabled", t0)
	k := putJob(t, d, "c", "k", "Enabled", t0)
	ej := claim(t, d, scheduledClaim(j, "j", time.Time{})).Execution
	ek := claim(t, d, scheduledClaim(k, "k", t0.Add(time.Minute))).Execution
	if err := d.JobDelete(ctx, store.JobDeleteParams{Key: j.Key}); err != nil {
		t.Fatal(err)
	}
	res, err := d.AttemptRecordMany(ctx, store.AttemptRecordManyParams{Now: t0, Records: []store.AttemptRecord{
		{ExecutionID: ej.ID, JobID: j.ID, History: entry(ej, store.ActionMain, store.HistoryCompleted, 0, "ok"), Finished: true},
		{ExecutionID: ek.ID, JobID: k.ID, History: entry(ek, store.ActionMain, store.HistoryCompleted, 0, "ok"), Finished: true},
	}})
	if err != nil {
		t.Fatal(err)
	}
	equal(t, "deleted job", res[0], store.AttemptRecordResult{Gone: true})
	equal(t, "other job in the same batch", res[1].Gone, false)
	equal(t, "other job's history", len(history(t, d, k, store.HistoryListParams{})), 1)
}

func testHistoryList(t *testing.T, d store.Driver) {
	putCollection(t, d, "c", "Enabled")
	j := putJob(t, d, "c", "j", "Enabled", t0)
	other := putJob(t, d, "c", "other", "Enabled", t0)
	e := claim(t, d, scheduledClaim(j, "tag", t0.Add(time.Minute))).Execution
	eo := claim(t, d, scheduledClaim(other, "o", t0.Add(time.Minute))).Execution
	statuses := []string{store.HistoryFailed, store.HistoryPostponed, store.HistoryFailed, store.HistoryCompleted, store.HistoryFailed}
	for i, st := range statuses {
		record(t, d, store.AttemptRecord{ExecutionID: e.ID, JobID: j.ID, History: entry(e, store.ActionMain, st, i, fmt.Sprintf("m%d", i)),
			Next: t0, Phase: store.ActionMain, Attempt: i + 1})
	}
	record(t, d, store.AttemptRecord{ExecutionID: eo.ID, JobID: other.ID, History: entry(eo, store.ActionMain, store.HistoryFailed, 0, "other"),
		Next: t0, Phase: store.ActionMain, Attempt: 1})
	msgs := func(p store.HistoryListParams) []string {
		t.Helper()
		out := []string{}
		for _, h := range history(t, d, j, p) {
			out = append(out, h.Message)
		}
		return out
	}
	equal(t, "newest first", msgs(store.HistoryListParams{}), []string{"m4", "m3", "m2", "m1", "m0"})
	equal(t, "status filter", msgs(store.HistoryListParams{Status: "failed"}), []string{"m4", "m2", "m0"})
	equal(t, "skip and limit", msgs(store.HistoryListParams{Skip: 1, Limit: 2}), []string{"m3", "m2"})
	equal(t, "filter with skip", msgs(store.HistoryListParams{Status: "FAILED", Skip: 2, Limit: 5}), []string{"m0"})
	_, err := d.HistoryList(t.Context(), store.HistoryListParams{Job: store.JobKey{CollectionKey: collectionKey("c"), Name: "absent"}})
	wantErr(t, "history of an absent job", err, store.ErrNotFound)

	// Overlapping executions: the second one starts while the first still retries. Each
	// execution's entries stay together, the newest execution first.
	k := putJob(t, d, "c", "k", "Enabled", t0)
	first := claim(t, d, scheduledClaim(k, "first", t0.Add(time.Minute))).Execution
	second := claim(t, d, scheduledClaim(getJob(t, d, k.ID), "second", t0.Add(2*time.Minute))).Execution
	record(t, d, store.AttemptRecord{ExecutionID: first.ID, JobID: k.ID, History: entry(first, store.ActionMain, store.HistoryFailed, 0, "first 0"),
		Next: t0, Phase: store.ActionMain, Attempt: 1})
	record(t, d, store.AttemptRecord{ExecutionID: second.ID, JobID: k.ID, History: entry(second, store.ActionMain, store.HistoryCompleted, 0, "second 0"),
		Finished: true})
	record(t, d, store.AttemptRecord{ExecutionID: first.ID, JobID: k.ID, History: entry(first, store.ActionMain, store.HistoryCompleted, 1, "first 1"),
		Finished: true})
	var got []string
	for _, h := range history(t, d, k, store.HistoryListParams{}) {
		got = append(got, h.Message)
	}
	equal(t, "overlapping executions", got, []string{"second 0", "first 1", "first 0"})
}

func testHistoryPurge(t *testing.T, d store.Driver) {
	ctx := t.Context()
	putCollection(t, d, "c", "Enabled")
	j := putJob(t, d, "c", "j", "Enabled", t0)
	k := putJob(t, d, "c", "k", "Enabled", t0)
	// j: 4 executions of 2 attempts each, ending a day apart; k: 1 execution.
	for i := range 4 {
		cur := getJob(t, d, j.ID)
		e := claim(t, d, scheduledClaim(cur, fmt.Sprintf("j%d", i), t0)).Execution
		for a := range 2 {
			h := entry(e, store.ActionMain, store.HistoryFailed, a, fmt.Sprintf("j%d.%d", i, a))
			h.EndTime = t0.Add(time.Duration(i) * 24 * time.Hour)
			record(t, d, store.AttemptRecord{ExecutionID: e.ID, JobID: j.ID, History: h, Next: t0, Phase: store.ActionMain, Attempt: a + 1})
		}
	}
	ek := claim(t, d, scheduledClaim(k, "k", t0)).Execution
	hk := entry(ek, store.ActionMain, store.HistoryCompleted, 0, "k")
	hk.EndTime = t0.Add(3 * 24 * time.Hour)
	record(t, d, store.AttemptRecord{ExecutionID: ek.ID, JobID: k.ID, History: hk, Next: t0, Phase: store.ActionMain, Attempt: 1})

	msgs := func(job *store.Job) []string {
		out := []string{}
		for _, h := range history(t, d, job, store.HistoryListParams{}) {
			out = append(out, h.Message)
		}
		sort.Strings(out)
		return out
	}
	// Older than a day after t0: execution j0 goes.
	n, err := d.HistoryPurge(ctx, store.HistoryPurgeParams{Before: t0.Add(24 * time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	equal(t, "deleted by age", n, int64(2))
	equal(t, "j after the age purge", msgs(j), []string{"j1.0", "j1.1", "j2.0", "j2.1", "j3.0", "j3.1"})
	// Keep the last 2 executions per job: j1 goes, k stays.
	n, err = d.HistoryPurge(ctx, store.HistoryPurgeParams{Before: t0, KeepPerJob: 2})
	if err != nil {
		t.Fatal(err)
	}
	equal(t, "deleted by count", n, int64(2))
	equal(t, "j after the count purge", msgs(j), []string{"j2.0", "j2.1", "j3.0", "j3.1"})
	equal(t, "k after the count purge", msgs(k), []string{"k"})
}

func testJobPurgeFinal(t *testing.T, d store.Driver) {
	ctx := t.Context()
	putCollection(t, d, "c", "Enabled")
	done := putJob(t, d, "c", "done", "Completed", time.Time{})     // final since t0
	faulted := putJob(t, d, "c", "faulted", "Faulted", time.Time{}) // final since t0
	live := putJob(t, d, "c", "live", "Enabled", t0)
	disabled := putJob(t, d, "c", "disabled", "Disabled", time.Time{})
	// Re-putting a final job keeps the time it became final.
	if _, _, err := d.JobPut(ctx, store.JobPutParams{Job: newJob("c", "done", "Completed", time.Time{}), Now: t0.Add(48 * time.Hour)}); err != nil {
		t.Fatal(err)
	}
	n, err := d.JobPurgeFinal(ctx, store.JobPurgeFinalParams{Before: t0})
	if err != nil {
		t.Fatal(err)
	}
	equal(t, "purged before they ended", n, int64(0))
	n, err = d.JobPurgeFinal(ctx, store.JobPurgeFinalParams{Before: t0.Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	equal(t, "purged after they ended", n, int64(2))
	for _, id := range []int64{done.ID, faulted.ID} {
		_, err := d.JobGetByID(ctx, store.JobGetByIDParams{ID: id})
		wantErr(t, "purged job", err, store.ErrNotFound)
	}
	for _, id := range []int64{live.ID, disabled.ID} {
		getJob(t, d, id)
	}

	// A job faulted by the dispatcher is final from that record's Now.
	j := putJob(t, d, "c", "j", "Enabled", t0)
	e := claim(t, d, scheduledClaim(j, "x", t0.Add(time.Minute))).Execution
	_, err = d.AttemptRecordMany(ctx, store.AttemptRecordManyParams{Now: t0.Add(10 * time.Hour), Records: []store.AttemptRecord{
		{ExecutionID: e.ID, JobID: j.ID, History: entry(e, store.ActionMain, store.HistoryFailed, 0, "x"), Failure: true, Finished: true, Faulted: true, FaultedAfter: 1},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if n, err = d.JobPurgeFinal(ctx, store.JobPurgeFinalParams{Before: t0.Add(10 * time.Hour)}); err != nil || n != 0 {
		t.Fatalf("purge at the fault time: n=%d err=%v, want 0", n, err)
	}
	if n, err = d.JobPurgeFinal(ctx, store.JobPurgeFinalParams{Before: t0.Add(11 * time.Hour)}); err != nil || n != 1 {
		t.Fatalf("purge after the fault time: n=%d err=%v, want 1", n, err)
	}

	// Many at once (more than a driver deletes per transaction).
	for i := range 120 {
		putJob(t, d, "c", fmt.Sprintf("done-%03d", i), "Completed", time.Time{})
	}
	if n, err = d.JobPurgeFinal(ctx, store.JobPurgeFinalParams{Before: t0.Add(time.Hour)}); err != nil || n != 120 {
		t.Fatalf("purge of 120 completed jobs: n=%d err=%v, want 120", n, err)
	}
	if c, err := d.JobCount(ctx, store.JobCountParams{Collection: collectionKey("c")}); err != nil || c != 2 {
		t.Fatalf("jobs left: %d, %v; want 2 (live and disabled)", c, err)
	}
}

// testLargeBatches claims and records batches larger than a driver's statement chunks.
func testLargeBatches(t *testing.T, d store.Driver) {
	ctx := t.Context()
	putCollection(t, d, "c", "Enabled")
	const n = 150
	jobs := make([]*store.Job, n)
	claims := make([]store.ExecutionClaim, n)
	for i := range n {
		jobs[i] = putJob(t, d, "c", fmt.Sprintf("j%03d", i), "Enabled", t0)
		claims[i] = scheduledClaim(jobs[i], fmt.Sprintf("tag-%03d", i), t0.Add(time.Minute))
	}
	res, err := d.ExecutionClaimMany(ctx, store.ExecutionClaimManyParams{Claims: claims, Now: t0})
	if err != nil {
		t.Fatal(err)
	}
	equal(t, "results", len(res), n)
	records := make([]store.AttemptRecord, n)
	var prev int64
	for i, r := range res {
		if r.Err != nil {
			t.Fatalf("claim %d: %v", i, r.Err)
		}
		x := r.Execution
		if x.ID <= prev || x.Tag != fmt.Sprintf("tag-%03d", i) || x.JobID != jobs[i].ID || x.RepeatCount != 1 {
			t.Fatalf("claim %d: %+v (previous ID %d)", i, x, prev)
		}
		prev = x.ID
		records[i] = store.AttemptRecord{ExecutionID: x.ID, JobID: x.JobID, Finished: true,
			History: entry(x, store.ActionMain, store.HistoryCompleted, 0, fmt.Sprintf("m%03d", i))}
	}
	listed := unfinished(t, d)
	equal(t, "unfinished", len(listed), n)
	for i, x := range listed {
		equal(t, fmt.Sprintf("listed %d", i), *x, *res[i].Execution)
	}
	out, err := d.AttemptRecordMany(ctx, store.AttemptRecordManyParams{Records: records, Now: t0})
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range out {
		// A good occurrence of a job with more to run and no faults changes nothing in it.
		equal(t, fmt.Sprintf("record %d", i), r, store.AttemptRecordResult{})
	}
	for _, i := range []int{0, n - 1} {
		equal(t, fmt.Sprintf("job %d version after its record", i), getJob(t, d, jobs[i].ID).Version, res[i].Version)
	}
	equal(t, "unfinished after the records", unfinished(t, d), []*store.Execution{})
	for _, i := range []int{0, 63, 64, 127, 128, n - 1} {
		hs := history(t, d, jobs[i], store.HistoryListParams{})
		if len(hs) != 1 || hs[0].Message != fmt.Sprintf("m%03d", i) || hs[0].ExecutionID != res[i].Execution.ID {
			t.Fatalf("history of job %d: %+v", i, hs)
		}
	}
}

// testAttemptRecordSameJobTwice records two executions of one job in one batch: they apply in
// order (a faulted occurrence, then a good one that resets the run of faults).
func testAttemptRecordSameJobTwice(t *testing.T, d store.Driver) {
	putCollection(t, d, "c", "Enabled")
	j := putJob(t, d, "c", "j", "Enabled", t0)
	e1 := claim(t, d, scheduledClaim(j, "one", t0.Add(time.Minute))).Execution
	e2 := claim(t, d, scheduledClaim(getJob(t, d, j.ID), "two", t0.Add(2*time.Minute))).Execution
	before := getJob(t, d, j.ID).Version
	res, err := d.AttemptRecordMany(t.Context(), store.AttemptRecordManyParams{Now: t0, Records: []store.AttemptRecord{
		{ExecutionID: e1.ID, JobID: j.ID, History: entry(e1, store.ActionMain, store.HistoryFailed, 0, "bad"),
			Failure: true, Finished: true, Faulted: true, FaultedAfter: 5},
		{ExecutionID: e2.ID, JobID: j.ID, History: entry(e2, store.ActionMain, store.HistoryCompleted, 0, "good"),
			Finished: true, FaultedAfter: 5},
	}})
	if err != nil {
		t.Fatal(err)
	}
	equal(t, "results", res, []store.AttemptRecordResult{
		{State: "Enabled", Version: before + 1, Previous: before},
		{State: "Enabled", Version: before + 2, Previous: before + 1},
	})
	got := getJob(t, d, j.ID)
	equal(t, "status", got.Status, store.JobStatus{ExecutionCount: 2, FailureCount: 1, FaultedCount: 1, ConsecutiveFaults: 0,
		LastExecutionTime: t0, NextExecutionTime: t0.Add(2 * time.Minute)})
	equal(t, "history", len(history(t, d, j, store.HistoryListParams{})), 2)
	equal(t, "executions", unfinished(t, d), []*store.Execution{})
}
