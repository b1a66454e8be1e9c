package client

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"
)

// CollectionGet reads a job collection.
func (c *Client) CollectionGet(ctx context.Context, id CollectionID) (*wire.JobCollectionDefinition, error) {
	var out wire.JobCollectionDefinition
	if err := c.do(ctx, http.MethodGet, id.path(), nil, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// CollectionPut creates or replaces a job collection.
func (c *Client) CollectionPut(ctx context.Context, id CollectionID, def *wire.JobCollectionDefinition) (*wire.JobCollectionDefinition, error) {
	var out wire.JobCollectionDefinition
	if err := c.do(ctx, http.MethodPut, id.path(), nil, def, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// CollectionPatch updates the fields of a job collection that def sets.
func (c *Client) CollectionPatch(ctx context.Context, id CollectionID, def *wire.JobCollectionDefinition) (*wire.JobCollectionDefinition, error) {
	var out wire.JobCollectionDefinition
	if err := c.do(ctx, http.MethodPatch, id.path(), nil, def, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// CollectionDelete deletes a job collection with its jobs.
func (c *Client) CollectionDelete(ctx context.Context, id CollectionID) error {
	return c.do(ctx, http.MethodDelete, id.path(), nil, nil, nil)
}

// CollectionEnable enables a job collection.
func (c *Client) CollectionEnable(ctx context.Context, id CollectionID) error {
	return c.do(ctx, http.MethodPost, id.path()+"/enable", nil, nil, nil)
}

// CollectionDisable disables a job collection: none of its jobs fire.
func (c *Client) CollectionDisable(ctx context.Context, id CollectionID) error {
	return c.do(ctx, http.MethodPost, id.path()+"/disable", nil, nil, nil)
}

// CollectionListParams selects collections: of a subscription, of one resource group when set.
type CollectionListParams struct {
	Subscription  string
	ResourceGroup string
}

// CollectionList lists job collections, following nextLink to the end.
func (c *Client) CollectionList(ctx context.Context, params CollectionListParams) ([]wire.JobCollectionDefinition, error) {
	path := "/subscriptions/" + escape(params.Subscription)
	if params.ResourceGroup != "" {
		path += "/resourceGroups/" + escape(params.ResourceGroup)
	}
	path += "/providers/Microsoft.Scheduler/jobCollections"
	var all []wire.JobCollectionDefinition
	for path != "" {
		var page wire.JobCollectionListResult
		if err := c.do(ctx, http.MethodGet, path, nil, nil, &page); err != nil {
			return nil, err
		}
		all = append(all, page.Value...)
		path = page.NextLink
	}
	return all, nil
}

// JobGet reads a job (secrets are never returned).
func (c *Client) JobGet(ctx context.Context, id JobID) (*wire.JobDefinition, error) {
	var out wire.JobDefinition
	if err := c.do(ctx, http.MethodGet, id.path(), nil, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// JobPut creates or replaces a job.
func (c *Client) JobPut(ctx context.Context, id JobID, def *wire.JobDefinition) (*wire.JobDefinition, error) {
	var out wire.JobDefinition
	if err := c.do(ctx, http.MethodPut, id.path(), nil, def, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// JobPatch updates the fields of a job that def sets.
func (c *Client) JobPatch(ctx context.Context, id JobID, def *wire.JobDefinition) (*wire.JobDefinition, error) {
	var out wire.JobDefinition
	if err := c.do(ctx, http.MethodPatch, id.path(), nil, def, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// JobDelete deletes a job with its history.
func (c *Client) JobDelete(ctx context.Context, id JobID) error {
	return c.do(ctx, http.MethodDelete, id.path(), nil, nil, nil)
}

// JobRun runs a job now, outside its schedule.
func (c *Client) JobRun(ctx context.Context, id JobID) error {
	return c.do(ctx, http.MethodPost, id.path()+"/run", nil, nil, nil)
}

// JobListParams selects a collection's jobs.
type JobListParams struct {
	Collection CollectionID
	// State keeps only jobs in that state (Enabled, Disabled, Completed, Faulted); "" keeps all.
	State string
	// Top is the page size asked for (1..100); 0 lets the server choose.
	Top int
}

// JobList lists a collection's jobs, following nextLink to the end.
func (c *Client) JobList(ctx context.Context, params JobListParams) ([]wire.JobDefinition, error) {
	q := url.Values{}
	if params.State != "" {
		q.Set("$filter", "state eq "+params.State)
	}
	if params.Top > 0 {
		q.Set("$top", strconv.Itoa(params.Top))
	}
	path := params.Collection.path() + "/jobs"
	var all []wire.JobDefinition
	for path != "" {
		var page wire.JobListResult
		if err := c.do(ctx, http.MethodGet, path, q, nil, &page); err != nil {
			return nil, err
		}
		all = append(all, page.Value...)
		path, q = page.NextLink, nil
	}
	return all, nil
}

// HistoryListParams selects a job's history entries.
type HistoryListParams struct {
	Job JobID
	// Status keeps only entries with that status (Completed, Failed, Postponed); "" keeps all.
	Status string
	// Max is how many entries to return at most (newest first); 0 returns all.
	Max int
}

// HistoryList lists a job's history, newest first.
func (c *Client) HistoryList(ctx context.Context, params HistoryListParams) ([]wire.JobHistoryDefinition, error) {
	q := url.Values{}
	if params.Status != "" {
		q.Set("$filter", "status eq "+params.Status)
	}
	if params.Max > 0 {
		q.Set("$top", strconv.Itoa(min(params.Max, 100)))
	}
	path := params.Job.path() + "/history"
	var all []wire.JobHistoryDefinition
	for path != "" {
		var page wire.JobHistoryListResult
		if err := c.do(ctx, http.MethodGet, path, q, nil, &page); err != nil {
			return nil, err
		}
		all = append(all, page.Value...)
		if params.Max > 0 && len(all) >= params.Max {
			return all[:params.Max], nil
		}
		path, q = page.NextLink, nil
	}
	return all, nil
}

// OccurrencePreviewParams asks the daemon when a job would run.
type OccurrencePreviewParams struct {
	// Properties is the job (only startTime and recurrence matter).
	Properties *wire.JobProperties
	// Count is how many executions to return (1..1000).
	Count int
	// Now is when the job is created; zero means the daemon's now.
	Now time.Time
}

// OccurrencePreview returns the next executions of a job as the daemon's engine computes them
// (POST /preview/occurrences), RFC 3339 in the rule's zone.
func (c *Client) OccurrencePreview(ctx context.Context, params OccurrencePreviewParams) ([]string, error) {
	q := url.Values{}
	q.Set("count", strconv.Itoa(params.Count))
	if !params.Now.IsZero() {
		q.Set("now", params.Now.Format(time.RFC3339))
	}
	var out struct {
		Value []string `json:"value"`
	}
	if err := c.do(ctx, http.MethodPost, "/preview/occurrences", q, &wire.JobDefinition{Properties: params.Properties}, &out); err != nil {
		return nil, err
	}
	return out.Value, nil
}
