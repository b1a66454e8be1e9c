package storetest

import (
	"testing"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
)

// testMeta: a setting absent is ErrNotFound; put creates, a second put replaces.
func testMeta(t *testing.T, d store.Driver) {
	ctx := t.Context()
	_, err := d.MetaGet(ctx, store.MetaGetParams{Name: store.MetaSecretKeyCheck})
	wantErr(t, "MetaGet of an absent setting", err, store.ErrNotFound)
	for _, v := range []string{"one", "two"} {
		if err := d.MetaPut(ctx, store.MetaPutParams{Name: store.MetaSecretKeyCheck, Value: v}); err != nil {
			t.Fatal(err)
		}
		got, err := d.MetaGet(ctx, store.MetaGetParams{Name: store.MetaSecretKeyCheck})
		if err != nil {
			t.Fatal(err)
		}
		equal(t, "MetaGet", got, v)
	}
	if err := d.MetaPut(ctx, store.MetaPutParams{Name: store.MetaReadyProbe, Value: "x"}); err != nil {
		t.Fatal(err)
	}
	got, err := d.MetaGet(ctx, store.MetaGetParams{Name: store.MetaSecretKeyCheck})
	if err != nil {
		t.Fatal(err)
	}
	equal(t, "MetaGet after another setting's put", got, "two")
	// IfAbsent keeps an existing value and creates an absent one.
	if err := d.MetaPut(ctx, store.MetaPutParams{Name: store.MetaSecretKeyCheck, Value: "three", IfAbsent: true}); err != nil {
		t.Fatal(err)
	}
	if got, err = d.MetaGet(ctx, store.MetaGetParams{Name: store.MetaSecretKeyCheck}); err != nil {
		t.Fatal(err)
	}
	equal(t, "MetaGet after an IfAbsent put over a value", got, "two")
	if err := d.MetaPut(ctx, store.MetaPutParams{Name: "fresh", Value: "four", IfAbsent: true}); err != nil {
		t.Fatal(err)
	}
	if got, err = d.MetaGet(ctx, store.MetaGetParams{Name: "fresh"}); err != nil {
		t.Fatal(err)
	}
	equal(t, "MetaGet after an IfAbsent put", got, "four")
}

// testJobListAll: every job of every collection, whatever its state or its collection's, by ID,
// paged by AfterID and Limit.
func testJobListAll(t *testing.T, d store.Driver) {
	ctx := t.Context()
	putCollection(t, d, "a", store.CollectionStateEnabled)
	putCollection(t, d, "b", "Disabled")
	var want []int64
	for _, j := range []struct{ coll, name, state string }{
		{"a", "j1", store.JobStateEnabled}, {"b", "j2", store.JobStateDisabled}, {"a", "j3", store.JobStateCompleted},
		{"b", "j4", store.JobStateFaulted}, {"a", "j5", store.JobStateDisabled},
	} {
		want = append(want, putJob(t, d, j.coll, j.name, j.state, time.Time{}).ID)
	}
	all, err := d.JobListAll(ctx, store.JobListAllParams{})
	if err != nil {
		t.Fatal(err)
	}
	equal(t, "JobListAll", jobNames(all), []string{"j1", "j2", "j3", "j4", "j5"})
	var got []int64
	after := int64(0)
	for {
		page, err := d.JobListAll(ctx, store.JobListAllParams{AfterID: after, Limit: 2})
		if err != nil {
			t.Fatal(err)
		}
		if len(page) > 2 {
			t.Fatalf("page of %d with Limit 2", len(page))
		}
		if len(page) == 0 {
			break
		}
		for _, j := range page {
			got = append(got, j.ID)
		}
		after = page[len(page)-1].ID
	}
	equal(t, "JobListAll paged IDs", got, want)

	// Containing: only the jobs whose properties text holds it, whatever field holds it.
	marked := newJob("b", "j6", store.JobStateDisabled, time.Time{})
	marked.Properties.Action.Request.Body = "a sealed:v1:xyz value"
	if _, _, err := d.JobPut(ctx, store.JobPutParams{Job: marked, Now: t0}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		containing string
		want       []string
	}{
		{"sealed:v1:", []string{"j6"}},
		{"sealed:v2:", []string{}},
		{"example.test", []string{"j1", "j2", "j3", "j4", "j5", "j6"}},
	} {
		listed, err := d.JobListAll(ctx, store.JobListAllParams{Containing: c.containing})
		if err != nil {
			t.Fatal(err)
		}
		equal(t, "JobListAll containing "+c.containing, jobNames(listed), c.want)
	}
}
