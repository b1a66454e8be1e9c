package api

import (
	"testing"

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
