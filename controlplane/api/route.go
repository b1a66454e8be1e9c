package api

import (
	"net/url"
	"strings"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/arm"
)

// kind is what an ARM path names.
type kind int

const (
	kindNone              kind = iota
	kindCollectionsSub         // /subscriptions/{s}/providers/Microsoft.Scheduler/jobCollections
	kindCollectionsRG          // /subscriptions/{s}/resourceGroups/{rg}/providers/Microsoft.Scheduler/jobCollections
	kindCollection             // .../jobCollections/{c}
	kindCollectionEnable       // .../jobCollections/{c}/enable
	kindCollectionDisable      // .../jobCollections/{c}/disable
	kindJobs                   // .../jobCollections/{c}/jobs
	kindJob                    // .../jobs/{j}
	kindJobRun                 // .../jobs/{j}/run
	kindJobHistory             // .../jobs/{j}/history
	kindJobBackfill            // .../jobs/{j}/backfill (extension)
)

// routeNames are the metric labels of the kinds.
var routeNames = map[kind]string{
	kindNone:              "other",
	kindCollectionsSub:    "collections",
	kindCollectionsRG:     "collections",
	kindCollection:        "collection",
	kindCollectionEnable:  "collection_enable",
	kindCollectionDisable: "collection_disable",
	kindJobs:              "jobs",
	kindJob:               "job",
	kindJobRun:            "job_run",
	kindJobHistory:        "job_history",
	kindJobBackfill:       "job_backfill",
}

// route is a parsed ARM path. Segment names (subscriptions, resourceGroups, providers,
// Microsoft.Scheduler, jobCollections, jobs) match ASCII-case-insensitively, as ARM's do.
type route struct {
	kind kind
	key  store.JobKey // the parts the path names
	// bad is set when the path has the ARM shape but a name in it is not in arm's grammar: it
	// names the segment and says why.
	bad string
}

// parseRoute parses an escaped URL path (r.URL.EscapedPath(): the path as the client sent it, so
// that an escaped '/' stays inside its segment); ok is false when it is not in the ARM tree. Each
// segment is unescaped on its own; a name that is not in arm's grammar (a dot segment, invalid
// UTF-8, '?', '%', '/', a control or non-ASCII character, too long) sets bad.
func parseRoute(escaped string) (route, bool) {
	raw := strings.Split(strings.Trim(escaped, "/"), "/")
	seg := make([]string, len(raw))
	for i, s := range raw {
		u, err := url.PathUnescape(s)
		if err != nil || u == "" {
			return route{}, false
		}
		seg[i] = u
	}
	is := func(s, name string) bool { return arm.Same(s, name) }
	if len(seg) < 4 || !is(seg[0], "subscriptions") {
		return route{}, false
	}
	var r route
	r.key.Subscription = seg[1]
	rest := seg[2:]
	if len(rest) == 3 && is(rest[0], "providers") && is(rest[1], arm.Provider) && is(rest[2], "jobCollections") {
		r.kind = kindCollectionsSub
		r.key = ownNames(r.key)
		r.bad = checkNames(r.key)
		return r, true
	}
	if !is(rest[0], "resourceGroups") || len(rest) < 5 || !is(rest[2], "providers") ||
		!is(rest[3], arm.Provider) || !is(rest[4], "jobCollections") {
		return route{}, false
	}
	r.key.ResourceGroup = rest[1]
	rest = rest[5:]
	switch {
	case len(rest) == 0:
		r.kind = kindCollectionsRG
	case len(rest) == 1:
		r.kind = kindCollection
	case len(rest) == 2 && is(rest[1], "enable"):
		r.kind = kindCollectionEnable
	case len(rest) == 2 && is(rest[1], "disable"):
		r.kind = kindCollectionDisable
	case len(rest) == 2 && is(rest[1], "jobs"):
		r.kind = kindJobs
	case len(rest) == 3 && is(rest[1], "jobs"):
		r.kind = kindJob
	case len(rest) == 4 && is(rest[1], "jobs") && is(rest[3], "run"):
		r.kind = kindJobRun
	case len(rest) == 4 && is(rest[1], "jobs") && is(rest[3], "history"):
		r.kind = kindJobHistory
	case len(rest) == 4 && is(rest[1], "jobs") && is(rest[3], "backfill"):
		r.kind = kindJobBackfill
	default:
		return route{}, false
	}
	if len(rest) >= 1 {
		r.key.CollectionKey.Name = rest[0]
	}
	if len(rest) >= 3 {
		r.key.Name = rest[2]
	}
	r.key = ownNames(r.key)
	r.bad = checkNames(r.key)
	return r, true
}

// ownNames gives each name of k bytes of its own. A name cut from the path shares the bytes of
// the whole request line (net/http reads it as one string), and the names outlive the request:
// the store's answer, the API's caches and the dispatcher's schedule keep them, so that every
// job PUT kept its request line (144 bytes in schedbench's shape; 140 MB for a million jobs)
// for as long as the job lived in the schedule.
func ownNames(k store.JobKey) store.JobKey {
	k.Subscription = strings.Clone(k.Subscription)
	k.ResourceGroup = strings.Clone(k.ResourceGroup)
	k.CollectionKey.Name = strings.Clone(k.CollectionKey.Name)
	k.Name = strings.Clone(k.Name)
	return k
}

// checkNames returns what is wrong with the names a path has ("" when nothing): the first name,
// outermost first, that is not in arm's grammar.
func checkNames(k store.JobKey) string {
	for _, n := range []struct {
		kind arm.Kind
		v    string
	}{
		{arm.Subscription, k.Subscription},
		{arm.ResourceGroup, k.ResourceGroup},
		{arm.Collection, k.CollectionKey.Name},
		{arm.Job, k.Name},
	} {
		if n.v == "" && n.kind != arm.Subscription {
			continue // a name the path does not have
		}
		if err := arm.Check(n.kind, n.v); err != nil {
			return err.Error()
		}
	}
	return ""
}

// collectionID is a collection's ARM id.
func collectionID(k store.CollectionKey) string { return k.ID() }

// jobID is a job's ARM id.
func jobID(k store.JobKey) string { return k.ID() }
