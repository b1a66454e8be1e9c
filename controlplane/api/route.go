package api

import (
	"net/url"
	"strings"
	"unicode"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"
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
}

// route is a parsed ARM path. Segment names (subscriptions, resourceGroups, providers,
// Microsoft.Scheduler, jobCollections, jobs) match case-insensitively, as ARM's do.
type route struct {
	kind kind
	key  store.JobKey // the parts the path names
	// bad is set when the path has the ARM shape but a name in it is invalid.
	bad string
}

// parseRoute parses an escaped URL path; ok is false when it is not in the ARM tree.
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
	is := func(i int, name string) bool { return i < len(seg) && strings.EqualFold(seg[i], name) }
	if len(seg) < 4 || !is(0, "subscriptions") {
		return route{}, false
	}
	var r route
	r.key.Subscription = seg[1]
	rest := seg[2:]
	if len(rest) == 3 && strings.EqualFold(rest[0], "providers") && strings.EqualFold(rest[1], "Microsoft.Scheduler") &&
		strings.EqualFold(rest[2], "jobCollections") {
		r.kind = kindCollectionsSub
		r.bad = checkNames(r.key)
		return r, true
	}
	if !strings.EqualFold(rest[0], "resourceGroups") || len(rest) < 5 || !strings.EqualFold(rest[2], "providers") ||
		!strings.EqualFold(rest[3], "Microsoft.Scheduler") || !strings.EqualFold(rest[4], "jobCollections") {
		return route{}, false
	}
	r.key.ResourceGroup = rest[1]
	rest = rest[5:]
	switch {
	case len(rest) == 0:
		r.kind = kindCollectionsRG
	case len(rest) == 1:
		r.kind = kindCollection
	case len(rest) == 2 && strings.EqualFold(rest[1], "enable"):
		r.kind = kindCollectionEnable
	case len(rest) == 2 && strings.EqualFold(rest[1], "disable"):
		r.kind = kindCollectionDisable
	case len(rest) == 2 && strings.EqualFold(rest[1], "jobs"):
		r.kind = kindJobs
	case len(rest) == 3 && strings.EqualFold(rest[1], "jobs"):
		r.kind = kindJob
	case len(rest) == 4 && strings.EqualFold(rest[1], "jobs") && strings.EqualFold(rest[3], "run"):
		r.kind = kindJobRun
	case len(rest) == 4 && strings.EqualFold(rest[1], "jobs") && strings.EqualFold(rest[3], "history"):
		r.kind = kindJobHistory
	default:
		return route{}, false
	}
	if len(rest) >= 1 {
		r.key.CollectionKey.Name = rest[0]
	}
	if len(rest) >= 3 {
		r.key.Name = rest[2]
	}
	r.bad = checkNames(r.key)
	return r, true
}

// checkNames returns what is wrong with the names of a path ("" when nothing).
func checkNames(k store.JobKey) string {
	for _, n := range []struct{ what, v string }{
		{"subscription id", k.Subscription},
		{"resource group name", k.ResourceGroup},
		{"job collection name", k.CollectionKey.Name},
		{"job name", k.Name},
	} {
		if msg := checkName(n.v); msg != "" {
			return "the " + n.what + " " + msg
		}
	}
	return ""
}

// checkName allows up to 100 printable characters (spaces included) without a slash. An empty
// name is one the path does not have.
func checkName(s string) string {
	if s == "" {
		return ""
	}
	if len([]rune(s)) > 100 {
		return "is longer than 100 characters"
	}
	if strings.TrimSpace(s) != s {
		return "must not begin or end with a space"
	}
	for _, c := range s {
		if !unicode.IsPrint(c) || c == '/' || c == '\\' {
			return "contains a character that is not allowed (control characters, / and \\ are not)"
		}
	}
	return ""
}

// collectionID is a collection's ARM id.
func collectionID(k store.CollectionKey) string {
	return wire.CollectionResourceID(k.Subscription, k.ResourceGroup, k.Name)
}

// jobID is a job's ARM id.
func jobID(k store.JobKey) string { return wire.JobResourceID(collectionID(k.CollectionKey), k.Name) }
