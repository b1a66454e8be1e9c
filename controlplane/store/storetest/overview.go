package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
)

// stateCounts renders JobStateCount's rows as "collection:state=n", collections named by ID.
func stateCounts(t *testing.T, d store.Driver, sub string, names map[int64]string) []string {
	t.Helper()
	rows, err := d.JobStateCount(t.Context(), store.JobStateCountParams{Subscription: sub})
	if err != nil {
		t.Fatal(err)
	}
	out := []string{}
	for _, r := range rows {
		out = append(out, fmt.Sprintf("%s:%s=%d", names[r.CollectionID], r.State, r.N))
	}
	return out
}

func testJobStateCount(t *testing.T, d store.Driver) {
	ctx := t.Context()
	equal(t, "JobStateCount of an empty store", stateCounts(t, d, "", nil), []string{})
	a := putCollection(t, d, "a", store.CollectionStateEnabled)
	b := putCollection(t, d, "b", "Disabled")
	other := newCollection("o", store.CollectionStateEnabled)
	other.Key.Subscription = "other-sub"
	o, _, err := d.CollectionPut(ctx, store.CollectionPutParams{Collection: other, Now: t0})
	if err != nil {
		t.Fatal(err)
	}
	names := map[int64]string{a.ID: "a", b.ID: "b", o.ID: "o"}
	for _, j := range []struct{ coll, name, state string }{
		{"a", "j1", store.JobStateEnabled}, {"b", "j2", store.JobStateDisabled}, {"a", "j3", store.JobStateEnabled},
		{"b", "j4", store.JobStateFaulted}, {"a", "j5", store.JobStateCompleted},
	} {
		putJob(t, d, j.coll, j.name, j.state, time.Time{})
	}
	oj := newJob("o", "oj", store.JobStateFaulted, time.Time{})
	oj.Key.CollectionKey = o.Key
	if _, _, err := d.JobPut(ctx, store.JobPutParams{Job: oj, Now: t0}); err != nil {
		t.Fatal(err)
	}
	first, second := "a", "b"
	if b.ID < a.ID {
		first, second = "b", "a"
	}
	want := map[string][]string{
		"a": {"a:Completed=1", "a:Enabled=2"},
		"b": {"b:Disabled=1", "b:Faulted=1"},
	}
	mine := append(append([]string{}, want[first]...), want[second]...)
	equal(t, "JobStateCount of the subscription", stateCounts(t, d, collectionKey("a").Subscription, names), mine)
	equal(t, "JobStateCount of the subscription in another case", stateCounts(t, d, upper(collectionKey("a").Subscription), names), mine)
	equal(t, "JobStateCount of the other subscription", stateCounts(t, d, "OTHER-sub", names), []string{"o:Faulted=1"})
	if all := stateCounts(t, d, "", names); len(all) != 5 {
		t.Errorf("JobStateCount of every subscription: %v, want 5 rows", all)
	}
	if err := d.JobDelete(ctx, store.JobDeleteParams{Key: store.JobKey{CollectionKey: collectionKey("b"), Name: "j4"}}); err != nil {
		t.Fatal(err)
	}
	if got := stateCounts(t, d, collectionKey("b").Subscription, names); len(got) != 3 {
		t.Errorf("JobStateCount after a delete: %v, want 3 rows", got)
	}
}

func upper(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'a' <= c && c <= 'z' {
			b[i] = c - 'a' + 'A'
		}
	}
	return string(b)
}

func testJobListNext(t *testing.T, d store.Driver) {
	ctx := t.Context()
	putCollection(t, d, "a", store.CollectionStateEnabled)
	putCollection(t, d, "off", "Disabled")
	other := newCollection("o", store.CollectionStateEnabled)
	other.Key.Subscription = "other-sub"
	if _, _, err := d.CollectionPut(ctx, store.CollectionPutParams{Collection: other, Now: t0}); err != nil {
		t.Fatal(err)
	}
	at := func(m int) time.Time { return t0.Add(time.Duration(m) * time.Minute) }
	putJob(t, d, "a", "later", store.JobStateEnabled, at(30))
	putJob(t, d, "a", "soon", store.JobStateEnabled, at(5))
	putJob(t, d, "a", "disabled", store.JobStateDisabled, time.Time{})
	putJob(t, d, "a", "nothing-left", store.JobStateEnabled, time.Time{})
	putJob(t, d, "off", "in-disabled-collection", store.JobStateEnabled, at(1))
	putJob(t, d, "a", "soonest", store.JobStateEnabled, at(2))
	putJob(t, d, "a", "tie", store.JobStateEnabled, at(5))
	oj := newJob("o", "other", store.JobStateEnabled, at(0))
	oj.Key.CollectionKey = other.Key
	if _, _, err := d.JobPut(ctx, store.JobPutParams{Job: oj, Now: t0}); err != nil {
		t.Fatal(err)
	}
	list := func(sub string, limit int) []string {
		t.Helper()
		js, err := d.JobListNext(ctx, store.JobListNextParams{Subscription: sub, Limit: limit})
		if err != nil {
			t.Fatal(err)
		}
		return jobNames(js)
	}
	sub := collectionKey("a").Subscription
	equal(t, "JobListNext of the subscription", list(sub, 0), []string{"soonest", "soon", "tie", "later"})
	equal(t, "JobListNext of the subscription, 2", list(upper(sub), 2), []string{"soonest", "soon"})
	equal(t, "JobListNext of everyone", list("", 0), []string{"other", "soonest", "soon", "tie", "later"})
	js, err := d.JobListNext(ctx, store.JobListNextParams{Subscription: sub, Limit: 1})
	if err != nil || len(js) != 1 || js[0].Status.NextExecutionTime.Sub(at(2)).Abs() >= time.Microsecond || js[0].CollectionState != store.CollectionStateEnabled {
		t.Errorf("JobListNext's job: %+v %v, want soonest, due at %s (PostgreSQL keeps microseconds), collection Enabled", js, err, at(2))
	}
}

func testHistoryFailed(t *testing.T, d store.Driver) {
	ctx := t.Context()
	putCollection(t, d, "a", store.CollectionStateEnabled)
	other := newCollection("o", store.CollectionStateEnabled)
	other.Key.Subscription = "other-sub"
	if _, _, err := d.CollectionPut(ctx, store.CollectionPutParams{Collection: other, Now: t0}); err != nil {
		t.Fatal(err)
	}
	j := putJob(t, d, "a", "j", store.JobStateEnabled, t0)
	oj := newJob("o", "oj", store.JobStateEnabled, t0)
	oj.Key.CollectionKey = other.Key
	ojob, _, err := d.JobPut(ctx, store.JobPutParams{Job: oj, Now: t0})
	if err != nil {
		t.Fatal(err)
	}
	e := claim(t, d, scheduledClaim(j, "tag-j", t0.Add(time.Minute))).Execution
	eo := claim(t, d, scheduledClaim(ojob, "tag-o", t0.Add(time.Minute))).Execution
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	put := func(e *store.Execution, jobID int64, action, status string, retry, end int, msg string) {
		t.Helper()
		h := entry(e, action, status, retry, msg)
		h.StartTime, h.EndTime = at(end-1), at(end)
		record(t, d, store.AttemptRecord{ExecutionID: e.ID, JobID: jobID, History: h, Next: at(end), Phase: action, Attempt: retry + 1})
	}
	put(e, j.ID, store.ActionMain, store.HistoryFailed, 0, 10, "old failure")
	put(e, j.ID, store.ActionMain, store.HistoryFailed, 1, 20, "main failed")
	put(e, j.ID, store.ActionError, store.HistoryFailed, 0, 30, "error action failed")
	put(eo, ojob.ID, store.ActionMain, store.HistoryFailed, 0, 40, "other's failure")
	put(eo, ojob.ID, store.ActionMain, store.HistoryCompleted, 1, 50, "other succeeded")
	list := func(p store.HistoryFailedParams) []string {
		t.Helper()
		fs, err := d.HistoryFailed(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		out := []string{}
		for _, f := range fs {
			out = append(out, f.Job.Subscription+"/"+f.Job.CollectionKey.Name+"/"+f.Job.Name+": "+f.Entry.Message+" ("+f.Entry.ExecutionTag+")")
		}
		return out
	}
	sub := collectionKey("a").Subscription
	mine := "/" + "a/j: "
	equal(t, "HistoryFailed of everyone", list(store.HistoryFailedParams{Since: at(0)}),
		[]string{"other-sub/o/oj: other's failure (tag-o)", sub + mine + "main failed (tag-j)", sub + mine + "old failure (tag-j)"})
	equal(t, "HistoryFailed of the subscription since 15 s", list(store.HistoryFailedParams{Subscription: upper(sub), Since: at(15)}),
		[]string{sub + mine + "main failed (tag-j)"})
	equal(t, "HistoryFailed of everyone, 1", list(store.HistoryFailedParams{Since: at(0), Limit: 1}), []string{"other-sub/o/oj: other's failure (tag-o)"})
	// The newest three attempts are the other's success and failure and the error action's.
	equal(t, "HistoryFailed among the newest three attempts", list(store.HistoryFailedParams{Since: at(0), Scan: 3}),
		[]string{"other-sub/o/oj: other's failure (tag-o)"})
	fs, err := d.HistoryFailed(ctx, store.HistoryFailedParams{Subscription: sub, Since: at(15)})
	if err != nil || len(fs) != 1 || fs[0].Entry.RetryCount != 1 || fs[0].Entry.JobID != j.ID || !fs[0].Entry.EndTime.Equal(at(20).Truncate(time.Microsecond)) && !fs[0].Entry.EndTime.Equal(at(20)) {
		t.Errorf("HistoryFailed's entry: %+v %v", fs, err)
	}
}
