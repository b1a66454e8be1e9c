package client

import (
	"fmt"
	"strings"

	"github.com/schedulerhq/terraform-provider-scheduler/internal/arm"
)

// CollectionID names a job collection; its String form is the ARM id
// /subscriptions/{s}/resourceGroups/{rg}/providers/Microsoft.Scheduler/jobCollections/{name}.
type CollectionID struct {
	Subscription  string
	ResourceGroup string
	Name          string
}

// JobID names a job: its collection and its name.
type JobID struct {
	CollectionID
	Name string
}

// String returns the ARM id of the collection.
func (id CollectionID) String() string {
	return arm.CollectionID(id.Subscription, id.ResourceGroup, id.Name)
}

// String returns the ARM id of the job.
func (id JobID) String() string {
	return arm.JobID(id.Subscription, id.ResourceGroup, id.CollectionID.Name, id.Name)
}

// path is the URL path of the collection, each name escaped.
func (id CollectionID) path() string {
	return "/subscriptions/" + escape(id.Subscription) + "/resourceGroups/" + escape(id.ResourceGroup) +
		"/providers/Microsoft.Scheduler/jobCollections/" + escape(id.Name)
}

func (id JobID) path() string {
	return id.CollectionID.path() + "/jobs/" + escape(id.Name)
}

// ParseCollectionID parses a job collection's ARM id. Segment names (subscriptions,
// resourceGroups, providers, jobCollections) match ASCII-case-insensitively, as ARM's do; the
// names must be in the daemon's grammar (internal/arm).
func ParseCollectionID(s string) (CollectionID, error) {
	seg, err := segments(s, 8)
	if err != nil {
		return CollectionID{}, fmt.Errorf("job collection id %q: %w (want %s)", s, err, collectionShape)
	}
	return collectionFrom(s, seg)
}

// ParseJobID parses a job's ARM id.
func ParseJobID(s string) (JobID, error) {
	seg, err := segments(s, 10)
	if err != nil {
		return JobID{}, fmt.Errorf("job id %q: %w (want %s/jobs/{job})", s, err, collectionShape)
	}
	c, err := collectionFrom(s, seg[:8])
	if err != nil {
		return JobID{}, err
	}
	if !arm.Same(seg[8], "jobs") {
		return JobID{}, fmt.Errorf("job id %q: segment 9 is %q, want \"jobs\" (want %s/jobs/{job})", s, seg[8], collectionShape)
	}
	if err := arm.Check(arm.Job, seg[9]); err != nil {
		return JobID{}, fmt.Errorf("job id %q: %w", s, err)
	}
	return JobID{CollectionID: c, Name: seg[9]}, nil
}

const collectionShape = "/subscriptions/{subscription}/resourceGroups/{resourceGroup}/providers/Microsoft.Scheduler/jobCollections/{collection}"

func segments(s string, n int) ([]string, error) {
	if !strings.HasPrefix(s, "/") {
		return nil, fmt.Errorf("does not start with /")
	}
	seg := strings.Split(strings.TrimPrefix(s, "/"), "/")
	if len(seg) != n {
		return nil, fmt.Errorf("has %d segments, want %d", len(seg), n)
	}
	for i, v := range seg {
		if v == "" {
			return nil, fmt.Errorf("segment %d is empty", i+1)
		}
	}
	return seg, nil
}

func collectionFrom(s string, seg []string) (CollectionID, error) {
	want := [...]struct {
		at   int
		name string
	}{{0, "subscriptions"}, {2, "resourceGroups"}, {4, "providers"}, {5, "Microsoft.Scheduler"}, {6, "jobCollections"}}
	for _, w := range want {
		if !arm.Same(seg[w.at], w.name) {
			return CollectionID{}, fmt.Errorf("id %q: segment %d is %q, want %q (want %s)", s, w.at+1, seg[w.at], w.name, collectionShape)
		}
	}
	for _, n := range []struct {
		kind arm.Kind
		v    string
	}{{arm.Subscription, seg[1]}, {arm.ResourceGroup, seg[3]}, {arm.Collection, seg[7]}} {
		if err := arm.Check(n.kind, n.v); err != nil {
			return CollectionID{}, fmt.Errorf("id %q: %w", s, err)
		}
	}
	return CollectionID{Subscription: seg[1], ResourceGroup: seg[3], Name: seg[7]}, nil
}
