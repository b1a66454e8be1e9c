package arm

import (
	"fmt"
	"strings"
)

// JobShape is the form of a job's ARM id, for messages.
const JobShape = "/subscriptions/{subscription}/resourceGroups/{resourceGroup}/providers/" + Provider +
	"/jobCollections/{collection}/jobs/{job}"

// JobName is the four names of a job, as an ARM id spells them.
type JobName struct {
	Subscription, ResourceGroup, Collection, Job string
}

// Canonical is the job's CanonicalJobID.
func (n JobName) Canonical() string {
	return CanonicalJobID(n.Subscription, n.ResourceGroup, n.Collection, n.Job)
}

// ParseJobID reads a job's ARM id, as the API returns it in a job's "id". Segment names
// (subscriptions, resourceGroups, providers, Microsoft.Scheduler, jobCollections, jobs) match
// ASCII-case-insensitively, as ARM's do, and each name must pass Check.
func ParseJobID(id string) (JobName, error) {
	seg := strings.Split(strings.TrimPrefix(id, "/"), "/")
	if !strings.HasPrefix(id, "/") || len(seg) != 10 {
		return JobName{}, fmt.Errorf("%q is not a job's id %s", id, JobShape)
	}
	for _, w := range [...]struct {
		at   int
		name string
	}{{0, "subscriptions"}, {2, "resourceGroups"}, {4, "providers"}, {5, Provider}, {6, "jobCollections"}, {8, "jobs"}} {
		if !Same(seg[w.at], w.name) {
			return JobName{}, fmt.Errorf("%q is not a job's id %s: segment %d is %q, want %q", id, JobShape, w.at+1, seg[w.at], w.name)
		}
	}
	n := JobName{Subscription: seg[1], ResourceGroup: seg[3], Collection: seg[7], Job: seg[9]}
	for _, c := range []struct {
		kind Kind
		v    string
	}{{Subscription, n.Subscription}, {ResourceGroup, n.ResourceGroup}, {Collection, n.Collection}, {Job, n.Job}} {
		if err := Check(c.kind, c.v); err != nil {
			return JobName{}, fmt.Errorf("%q is not a job's id: %w", id, err)
		}
	}
	return n, nil
}
