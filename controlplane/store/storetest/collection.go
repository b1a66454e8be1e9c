package storetest

import (
	"errors"
	"sort"
	"testing"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
)

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
	equal(t, "every subscription", names(store.CollectionListParams{}),
		[]string{"RG-a/beta", "rg-a/Gamma", "rg-b/Alpha", "rg-b/zeta", "rg-a/other"})
	equal(t, "every subscription, skip 3 limit 2", names(store.CollectionListParams{Skip: 3, Limit: 2}),
		[]string{"rg-b/zeta", "rg-a/other"})
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
