package storetest

import (
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"
)

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

// testJobPutExpectations: a create only fails with ErrConflict when the job exists, and a
// write that expects its collection's ID and version fails with ErrConflict when the collection
// is another or changed; neither writes anything. Concurrent writes (committed together) each
// get their own answer.
func testJobPutExpectations(t *testing.T, d store.Driver) {
	ctx := t.Context()
	c := putCollection(t, d, "c", "Enabled")
	at := store.CollectionVersion{ID: c.ID, Version: c.Version}
	j, created, err := d.JobPut(ctx, store.JobPutParams{Job: newJob("c", "j", "Enabled", t0), Now: t0, CreateOnly: true, ExpectCollection: at})
	if err != nil || !created {
		t.Fatalf("create only at the collection's version: created=%v err=%v", created, err)
	}
	_, _, err = d.JobPut(ctx, store.JobPutParams{Job: newJob("c", "J", "Disabled", t0), Now: t0, CreateOnly: true, ExpectCollection: at})
	wantErr(t, "create only of an existing job", err, store.ErrConflict)
	equal(t, "unchanged after the refused create", *getJob(t, d, j.ID), *j)
	for _, wrong := range []store.CollectionVersion{{ID: c.ID, Version: c.Version + 1}, {ID: c.ID + 1000, Version: c.Version}} {
		_, _, err = d.JobPut(ctx, store.JobPutParams{Job: newJob("c", "k", "Enabled", t0), Now: t0, CreateOnly: true, ExpectCollection: wrong})
		wantErr(t, fmt.Sprintf("create expecting collection %+v", wrong), err, store.ErrConflict)
		_, _, err = d.JobPut(ctx, store.JobPutParams{Job: newJob("c", "j", "Disabled", t0), Now: t0, ExpectVersion: 1, ExpectCollection: wrong})
		wantErr(t, fmt.Sprintf("replace expecting collection %+v", wrong), err, store.ErrConflict)
	}
	_, err = d.JobGet(ctx, store.JobGetParams{Key: store.JobKey{CollectionKey: collectionKey("c"), Name: "k"}})
	wantErr(t, "the refused create wrote nothing", err, store.ErrNotFound)
	equal(t, "the refused replace wrote nothing", *getJob(t, d, j.ID), *j)
	j2, created, err := d.JobPut(ctx, store.JobPutParams{Job: newJob("c", "j", "Disabled", t0), Now: t0, ExpectVersion: 1, ExpectCollection: at})
	if err != nil || created || j2.Version != 2 {
		t.Fatalf("replace at the collection's version: %+v created=%v err=%v", j2, created, err)
	}

	// Together: creates at the right version succeed, the others fail, each alone.
	var wg sync.WaitGroup
	errs := make([]error, 16)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			exp := at
			if i%2 == 1 {
				exp.Version++
			}
			_, _, errs[i] = d.JobPut(ctx, store.JobPutParams{Job: newJob("c", fmt.Sprintf("g%02d", i), "Enabled", t0), Now: t0, CreateOnly: true, ExpectCollection: exp})
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if i%2 == 0 && err != nil {
			t.Errorf("create %d at the collection's version: %v", i, err)
		}
		if i%2 == 1 && !errors.Is(err, store.ErrConflict) {
			t.Errorf("create %d at another version: %v, want ErrConflict", i, err)
		}
	}
	n, err := d.JobCount(ctx, store.JobCountParams{Collection: collectionKey("c")})
	if err != nil {
		t.Fatal(err)
	}
	equal(t, "jobs", n, 9)
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

// testJobGetWithCollection: the collection and the job as CollectionGet and JobGet read them, in
// one lookup; no job (nil) in a collection without it; ErrNotFound without the collection.
func testJobGetWithCollection(t *testing.T, d store.Driver) {
	ctx := t.Context()
	_, _, err := d.JobGetWithCollection(ctx, store.JobGetParams{Key: store.JobKey{CollectionKey: collectionKey("absent"), Name: "j"}})
	wantErr(t, "absent collection", err, store.ErrNotFound)

	c := putCollection(t, d, "c", "Suspended")
	putCollection(t, d, "other", "Enabled")
	putJob(t, d, "other", "J", "Enabled", t0) // another collection's job of the same name
	gotC, gotJ, err := d.JobGetWithCollection(ctx, store.JobGetParams{Key: store.JobKey{CollectionKey: collectionKey("C"), Name: "j"}})
	if err != nil {
		t.Fatal(err)
	}
	equal(t, "collection without the job", *gotC, *c)
	if gotJ != nil {
		t.Fatalf("job in a collection without it: %+v, want nil", *gotJ)
	}

	in := newJob("c", "J", "Disabled", t0.Add(time.Minute))
	in.Status.ExecutionCount, in.Status.FailureCount, in.Status.FaultedCount, in.Status.ConsecutiveFaults = 4, 3, 2, 1
	in.Status.LastExecutionTime = t0.Add(-time.Minute)
	in.Properties.ResumeAt = "2030-01-01T00:00:00Z"
	if _, _, err := d.JobPut(ctx, store.JobPutParams{Job: in, Now: t0}); err != nil {
		t.Fatal(err)
	}
	want, err := d.JobGet(ctx, store.JobGetParams{Key: in.Key})
	if err != nil {
		t.Fatal(err)
	}
	gotC, gotJ, err = d.JobGetWithCollection(ctx, store.JobGetParams{Key: store.JobKey{CollectionKey: collectionKey("c"), Name: "j"}})
	if err != nil {
		t.Fatal(err)
	}
	equal(t, "collection", *gotC, *c)
	if gotJ == nil {
		t.Fatal("job: nil")
	}
	equal(t, "job", *gotJ, *want)
}

func testJobGetMany(t *testing.T, d store.Driver) {
	putCollection(t, d, "c", "Suspended")
	putCollection(t, d, "c2", "Enabled")
	a := putJob(t, d, "c", "a", "Enabled", t0)
	b := putJob(t, d, "c2", "b", "Disabled", time.Time{})
	got, err := d.JobGetMany(t.Context(), store.JobGetManyParams{IDs: []int64{b.ID, a.ID + b.ID + 1000, a.ID, b.ID}})
	if err != nil {
		t.Fatal(err)
	}
	byID := map[int64]store.Job{}
	for _, j := range got {
		byID[j.ID] = *j
	}
	equal(t, "jobs found", byID, map[int64]store.Job{a.ID: *getJob(t, d, a.ID), b.ID: *getJob(t, d, b.ID)})
	equal(t, "collection state", byID[a.ID].CollectionState, "Suspended")
	none, err := d.JobGetMany(t.Context(), store.JobGetManyParams{})
	if err != nil {
		t.Fatal(err)
	}
	equal(t, "no ids", len(none), 0)
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

	// The properties come as stored, not decoded; the rest as any read gives it.
	listed, err := d.JobListSchedulable(ctx, store.JobListSchedulableParams{Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	got := *listed[0]
	var props wire.JobProperties
	if err := json.Unmarshal([]byte(got.PropertiesJSON), &props); err != nil {
		t.Fatalf("PropertiesJSON %q: %v", got.PropertiesJSON, err)
	}
	equal(t, "listed properties undecoded", got.Properties, wire.JobProperties{})
	got.Properties, got.PropertiesJSON = props, ""
	equal(t, "listed job, its properties decoded", &got, getJob(t, d, want[0]))
}
