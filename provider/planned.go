package provider

import (
	"context"
	"strings"
	"sync"

	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"

	"github.com/schedulerhq/terraform-provider-scheduler/internal/client"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/clock"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/jobdef"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/recurrence"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"
)

// A job that recurs faster than its collection's SKU or quota allows is refused by the API at
// apply. When the collection is in the same configuration, its plan comes first (its jobs depend
// on its id) and is recorded here, in the provider's process, so that the job's plan checks the
// limits the collection will have (SKU and quota as planned, not as the daemon has them now).

// plannedCollections maps a collection's id (lower case) to its planned properties.
type plannedCollections struct {
	mu    sync.Mutex
	props map[string]*wire.JobCollectionProperties
}

func newPlannedCollections() *plannedCollections {
	return &plannedCollections{props: map[string]*wire.JobCollectionProperties{}}
}

func (p *plannedCollections) set(id client.CollectionID, props *wire.JobCollectionProperties) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.props[strings.ToLower(id.String())] = props
}

func (p *plannedCollections) get(id client.CollectionID) (*wire.JobCollectionProperties, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	props, ok := p.props[strings.ToLower(id.String())]
	return props, ok
}

// planCollection records the collection's planned SKU and quota when they are known, and plans
// its id (known from the subscription, resource group and name), so that its jobs'
// job_collection_id is known at plan time too.
func (r *jobCollectionResource) planCollection(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if r.data == nil || r.data.err != nil || r.data.planned == nil {
		return
	}
	var plan jobCollectionModel
	if req.Plan.Get(ctx, &plan).HasError() || plan.Name.IsUnknown() || plan.ResourceGroup.IsUnknown() {
		return
	}
	id := client.CollectionID{Subscription: r.data.subscription, ResourceGroup: plan.ResourceGroup.ValueString(), Name: plan.Name.ValueString()}
	if plan.ID.IsUnknown() {
		resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root("id"), id.String())...)
	}
	if plan.Sku.IsUnknown() || (plan.Quota != nil && (plan.Quota.MaxJobCount.IsUnknown() || plan.Quota.MaxJobOccurrence.IsUnknown() ||
		(plan.Quota.MaxRecurrence != nil && (plan.Quota.MaxRecurrence.Frequency.IsUnknown() || plan.Quota.MaxRecurrence.Interval.IsUnknown())))) {
		return
	}
	r.data.planned.set(id, plan.toWire(ctx).Properties)
}

// checkPlannedLimits checks the planned job against the limits of its collection as planned in
// this run: the SKU's outbound authentication, quota.max_job_occurrence and the fastest
// recurrence allowed. done is how many times the job has run.
func checkPlannedLimits(data *providerData, c clock.Clock, plan *jobModel, done int, resp *resource.ModifyPlanResponse) {
	if data == nil || data.planned == nil || plan.JobCollectionID.IsUnknown() {
		return
	}
	coll, err := client.ParseCollectionID(plan.JobCollectionID.ValueString())
	if err != nil {
		return
	}
	props, ok := data.planned.get(coll)
	if !ok {
		return // not in this configuration: the daemon checks at apply
	}
	p, unknown := plan.toWire()
	if len(unknown) > 0 {
		return // what is known only after apply may change the answer
	}
	rule, err := recurrence.Compile(p.StartTime, p.Recurrence, c.Now())
	if err != nil {
		return // ValidateConfig reports it
	}
	v := jobdef.CheckLimits(p, rule, jobdef.CollectionLimits(props), c.Now(), done)
	if v == nil {
		return
	}
	at := path.Root("recurrence")
	switch v.Limit {
	case "authentication":
		at = path.Root("action").AtName("request").AtName("authentication")
	case "maxJobOccurrence":
		at = at.AtName("count")
	}
	resp.Diagnostics.AddAttributeError(at, "The job does not fit its collection "+coll.Name+": "+v.Message,
		v.Message+". The collection "+coll.Name+" is planned in this configuration with these limits (its sku and quota); "+
			"the daemon would refuse the job half-way through apply.")
}
