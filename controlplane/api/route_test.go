package api

import (
	"testing"
	"unsafe"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
)

func TestParseRoute(t *testing.T) {
	key := func(sub, rg, coll, job string) store.JobKey {
		return store.JobKey{CollectionKey: store.CollectionKey{Subscription: sub, ResourceGroup: rg, Name: coll}, Name: job}
	}
	for _, tc := range []struct {
		path string
		ok   bool
		kind kind
		key  store.JobKey
		bad  string
	}{
		{"/subscriptions/s/providers/Microsoft.Scheduler/jobCollections", true, kindCollectionsSub, key("s", "", "", ""), ""},
		{"/SUBSCRIPTIONS/s/RESOURCEGROUPS/rg/PROVIDERS/microsoft.scheduler/JOBCOLLECTIONS", true, kindCollectionsRG, key("s", "rg", "", ""), ""},
		{"/subscriptions/s/resourceGroups/rg/providers/Microsoft.Scheduler/jobCollections/c/", true, kindCollection, key("s", "rg", "c", ""), ""},
		{"/subscriptions/s/resourceGroups/rg/providers/Microsoft.Scheduler/jobCollections/c/Enable", true, kindCollectionEnable, key("s", "rg", "c", ""), ""},
		{"/subscriptions/s/resourceGroups/rg/providers/Microsoft.Scheduler/jobCollections/c/disable", true, kindCollectionDisable, key("s", "rg", "c", ""), ""},
		{"/subscriptions/s/resourceGroups/rg/providers/Microsoft.Scheduler/jobCollections/c/jobs", true, kindJobs, key("s", "rg", "c", ""), ""},
		{"/subscriptions/s/resourceGroups/rg/providers/Microsoft.Scheduler/jobCollections/c/jobs/nightly-cleanup", true, kindJob, key("s", "rg", "c", "nightly-cleanup"), ""},
		{"/subscriptions/s/resourceGroups/rg/providers/Microsoft.Scheduler/jobCollections/c/jobs/nightly%20cleanup", true, kindJob, key("s", "rg", "c", "nightly cleanup"),
			`the job name "nightly cleanup" contains the character ' ' at byte 7; only ASCII letters, digits, '-', '_' and '.' are allowed`},
		{"/subscriptions/s/resourceGroups/rg/providers/Microsoft.Scheduler/jobCollections/c/jobs/j/run", true, kindJobRun, key("s", "rg", "c", "j"), ""},
		{"/subscriptions/s/resourceGroups/rg/providers/Microsoft.Scheduler/jobCollections/c/jobs/j/HISTORY", true, kindJobHistory, key("s", "rg", "c", "j"), ""},
		{"/subscriptions/s/resourceGroups/rg/providers/Microsoft.Scheduler/jobCollections/c/jobs/a%2Fb", true, kindJob, key("s", "rg", "c", "a/b"),
			`the job name "a/b" contains the character '/' at byte 1; only ASCII letters, digits, '-', '_' and '.' are allowed`},
		{"/subscriptions/s/resourceGroups/rg/providers/Microsoft.Scheduler/jobCollections/c/jobs/%2E%2E", true, kindJob, key("s", "rg", "c", ".."),
			`the job name ".." is a dot segment, which URLs resolve away; not allowed`},
		{"/%C5%BFubscriptions/s/providers/Microsoft.Scheduler/jobCollections", false, kindNone, store.JobKey{}, ""},
		{"/subscriptions/s/providers/Microſoft.Scheduler/jobCollections", false, kindNone, store.JobKey{}, ""},
		{"/subscriptions/s/resourceGroups/rg/providers/Microsoft.Scheduler/jobCollections/%20c", true, kindCollection, key("s", "rg", " c", ""),
			`the job collection name " c" contains the character ' ' at byte 0; only ASCII letters, digits, '-', '_' and '.' are allowed`},
		{"/subscriptions//resourceGroups/rg/providers/Microsoft.Scheduler/jobCollections/c", false, kindNone, store.JobKey{}, ""},
		{"/subscriptions/s/resourceGroups/rg/providers/Microsoft.Web/jobCollections/c", false, kindNone, store.JobKey{}, ""},
		{"/subscriptions/s/resourceGroups/rg/providers/Microsoft.Scheduler/jobCollections/c/jobs/j/other", false, kindNone, store.JobKey{}, ""},
		{"/subscriptions/s", false, kindNone, store.JobKey{}, ""},
		{"/healthz", false, kindNone, store.JobKey{}, ""},
	} {
		r, ok := parseRoute(tc.path)
		if ok != tc.ok || r.kind != tc.kind || r.key != tc.key || r.bad != tc.bad {
			t.Errorf("%s: %+v %v, want kind %d key %+v bad %q ok %v", tc.path, r, ok, tc.kind, tc.key, tc.bad, tc.ok)
		}
	}
}

// TestRouteNamesOwnTheirBytes: the names parsed from a path do not share its bytes. The path is
// cut from the request line net/http read as one string, and the names outlive the request (the
// dispatcher's schedule keeps a job's name for as long as the job lives): sharing, every job
// kept its whole request line, 140 MB over a million PUTs.
func TestRouteNamesOwnTheirBytes(t *testing.T) {
	line := "PUT /subscriptions/sub-1/resourceGroups/rg-1/providers/Microsoft.Scheduler/jobCollections/c-1/jobs/job-1 HTTP/1.1"
	path := line[len("PUT ") : len(line)-len(" HTTP/1.1")]
	r, ok := parseRoute(path)
	want := store.JobKey{CollectionKey: store.CollectionKey{Subscription: "sub-1", ResourceGroup: "rg-1", Name: "c-1"}, Name: "job-1"}
	if !ok || r.kind != kindJob || r.key != want {
		t.Fatalf("parseRoute: %+v %v, want a job route with key %+v", r, ok, want)
	}
	start := uintptr(unsafe.Pointer(unsafe.StringData(line)))
	for _, name := range []string{r.key.Subscription, r.key.ResourceGroup, r.key.CollectionKey.Name, r.key.Name} {
		if p := uintptr(unsafe.Pointer(unsafe.StringData(name))); p >= start && p < start+uintptr(len(line)) {
			t.Errorf("the name %q shares the request line's bytes (at offset %d)", name, p-start)
		}
	}
}
