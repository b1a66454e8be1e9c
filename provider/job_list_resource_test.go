package provider

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
	"github.com/hashicorp/terraform-plugin-testing/helper/acctest"

	"github.com/schedulerhq/terraform-provider-scheduler/internal/client"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"
)

// listJobs lists scheduler_job through the provider server: each result's display name, its
// identity as "subscription/resource_group/job_collection/name", and its resource (when asked);
// and the diagnostics.
func listJobs(t *testing.T, server tfprotov6.ProviderServer, schemas *tfprotov6.GetProviderSchemaResponse, fields map[string]any, include bool) (names, identities []string, resources []tftypes.Value, diags []string) {
	t.Helper()
	ctx := context.Background()
	lister, ok := server.(tfprotov6.ProviderServerWithListResource) //nolint:staticcheck // terraform-plugin-go 0.31 serves list resources only through it
	if !ok {
		t.Fatal("the provider server does not serve list resources")
	}
	typ := schemas.ListResourceSchemas["scheduler_job"].ValueType()
	cfg, err := tfprotov6.NewDynamicValue(typ, objectOf(t, typ, fields))
	if err != nil {
		t.Fatal(err)
	}
	stream, err := lister.ListResource(ctx, &tfprotov6.ListResourceRequest{TypeName: "scheduler_job", Config: &cfg, IncludeResource: include})
	if err != nil {
		t.Fatal(err)
	}
	ids, err := server.GetResourceIdentitySchemas(ctx, &tfprotov6.GetResourceIdentitySchemasRequest{})
	if err != nil {
		t.Fatal(err)
	}
	idType := ids.IdentitySchemas["scheduler_job"].ValueType()
	resType := schemas.ResourceSchemas["scheduler_job"].ValueType()
	for r := range stream.Results {
		for _, d := range r.Diagnostics {
			diags = append(diags, d.Severity.String()+": "+d.Summary+" | "+d.Detail)
		}
		if r.Identity == nil {
			continue
		}
		names = append(names, r.DisplayName)
		v, err := r.Identity.IdentityData.Unmarshal(idType)
		if err != nil {
			t.Fatal(err)
		}
		var parts map[string]tftypes.Value
		if err := v.As(&parts); err != nil {
			t.Fatal(err)
		}
		s := ""
		for _, k := range []string{"subscription", "resource_group", "job_collection", "name"} {
			var p string
			if err := parts[k].As(&p); err != nil {
				t.Fatal(err)
			}
			s += "/" + p
		}
		identities = append(identities, s[1:])
		if r.Resource != nil {
			rv, err := r.Resource.Unmarshal(resType)
			if err != nil {
				t.Fatal(err)
			}
			resources = append(resources, rv)
		}
	}
	return names, identities, resources, diags
}

// list "scheduler_job" at the protocol level (terraform query needs Terraform 1.14, which cannot
// be built offline; OpenTofu has no list resources), against the acceptance daemon: every job of
// the collection with its identity, the state filter, the resource for configuration generation.
func TestAccJobListResource(t *testing.T) {
	if os.Getenv("TF_ACC") == "" {
		t.Skip("acceptance test: set TF_ACC=1 (make testacc), as resource.Test does")
	}
	ctx := context.Background()
	c := testClient(t)
	coll := client.CollectionID{Subscription: DefaultSubscriptionID, ResourceGroup: "default", Name: acctest.RandomWithPrefix("jc")}
	if _, err := c.CollectionPut(ctx, coll, &wire.JobCollectionDefinition{Properties: &wire.JobCollectionProperties{}}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.CollectionDelete(context.Background(), coll) })
	for _, j := range []struct{ name, state string }{{"alpha", "Enabled"}, {"beta", "Disabled"}, {"gamma", "Enabled"}} {
		if _, err := c.JobPut(ctx, client.JobID{CollectionID: coll, Name: j.name}, &wire.JobDefinition{Properties: &wire.JobProperties{
			StartTime: "2040-01-01T00:00:00Z", State: j.state,
			Action: &wire.JobAction{Type: "Http", Request: &wire.HTTPRequest{URI: "http://127.0.0.1:9/" + j.name, Method: "GET"}},
		}}); err != nil {
			t.Fatal(err)
		}
	}
	server, schemas := configuredServer(t)
	identity := func(name string) string { return "default/default/" + coll.Name + "/" + name }

	names, ids, res, diags := listJobs(t, server, schemas, map[string]any{"job_collection_id": tfStr(coll.String())}, false)
	slices.Sort(names)
	slices.Sort(ids)
	if want := []string{"alpha", "beta", "gamma"}; !slices.Equal(names, want) || diags != nil || res != nil {
		t.Errorf("all: names %q, diagnostics %q, %d resources; want %q, none, none", names, diags, len(res), want)
	}
	if want := []string{identity("alpha"), identity("beta"), identity("gamma")}; !slices.Equal(ids, want) {
		t.Errorf("all: identities %q, want %q", ids, want)
	}

	names, ids, res, diags = listJobs(t, server, schemas, map[string]any{"job_collection_id": tfStr(coll.String()), "state": tfStr("disabled")}, true)
	if !slices.Equal(names, []string{"beta"}) || !slices.Equal(ids, []string{identity("beta")}) || diags != nil || len(res) != 1 {
		t.Fatalf("disabled: names %q, identities %q, diagnostics %q, %d resources; want beta, its identity, none, 1", names, ids, diags, len(res))
	}
	var attrs map[string]tftypes.Value
	if err := res[0].As(&attrs); err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]string{"id": client.JobID{CollectionID: coll, Name: "beta"}.String(), "job_collection_id": coll.String(),
		"name": "beta", "state": "Disabled", "start_time": "2040-01-01T00:00:00Z"} {
		var got string
		if err := attrs[k].As(&got); err != nil || got != want {
			t.Errorf("disabled: resource %s = %q (%v), want %q", k, got, err, want)
		}
	}

	_, _, _, diags = listJobs(t, server, schemas, map[string]any{"job_collection_id": tfStr(client.CollectionID{Subscription: DefaultSubscriptionID, ResourceGroup: "default", Name: "absent"}.String())}, false)
	want := "ERROR: Create the parent first: not found while listing the jobs of job collection " +
		"/subscriptions/default/resourceGroups/default/providers/Microsoft.Scheduler/jobCollections/absent | " +
		"GET /subscriptions/default/resourceGroups/default/providers/Microsoft.Scheduler/jobCollections/absent/jobs: 404 ResourceNotFound: job collection absent was not found"
	if len(diags) != 1 || !strings.HasPrefix(diags[0], want) {
		t.Errorf("absent collection: diagnostics %q, want one starting %q", diags, want)
	}
}
