package provider

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
	"github.com/hashicorp/terraform-plugin-testing/helper/acctest"

	"github.com/schedulerhq/terraform-provider-scheduler/internal/client"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"
)

// configuredServer is the provider server configured from the environment the acceptance tests
// set (the daemon TestMain started), with its schemas.
func configuredServer(t *testing.T) (tfprotov6.ProviderServer, *tfprotov6.GetProviderSchemaResponse) {
	t.Helper()
	ctx := context.Background()
	server, err := providerserver.NewProtocol6WithError(New("test")())()
	if err != nil {
		t.Fatal(err)
	}
	schemas, err := server.GetProviderSchema(ctx, &tfprotov6.GetProviderSchemaRequest{})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := tfprotov6.NewDynamicValue(schemas.Provider.ValueType(), objectOf(t, schemas.Provider.ValueType(), nil))
	if err != nil {
		t.Fatal(err)
	}
	if resp, err := server.ConfigureProvider(ctx, &tfprotov6.ConfigureProviderRequest{Config: &cfg}); err != nil || len(resp.Diagnostics) > 0 {
		t.Fatalf("configure: %v %v", err, resp.Diagnostics)
	}
	return server, schemas
}

// invokeJobRun invokes scheduler_job_run through the provider server and returns its progress
// messages and its final diagnostics ("severity: summary | detail").
func invokeJobRun(t *testing.T, server tfprotov6.ProviderServer, schemas *tfprotov6.GetProviderSchemaResponse, fields map[string]any) (progress, diags []string) {
	t.Helper()
	typ := schemas.ActionSchemas["scheduler_job_run"].Schema.ValueType()
	cfg, err := tfprotov6.NewDynamicValue(typ, objectOf(t, typ, fields))
	if err != nil {
		t.Fatal(err)
	}
	actions, ok := server.(tfprotov6.ProviderServerWithActions) //nolint:staticcheck // terraform-plugin-go 0.31 serves actions only through it
	if !ok {
		t.Fatal("the provider server does not serve actions")
	}
	stream, err := actions.InvokeAction(context.Background(), &tfprotov6.InvokeActionRequest{ActionType: "scheduler_job_run", Config: &cfg})
	if err != nil {
		t.Fatal(err)
	}
	completed := 0
	for ev := range stream.Events {
		switch e := ev.Type.(type) {
		case tfprotov6.ProgressInvokeActionEventType:
			progress = append(progress, e.Message)
		case tfprotov6.CompletedInvokeActionEventType:
			completed++
			for _, d := range e.Diagnostics {
				diags = append(diags, d.Severity.String()+": "+d.Summary+" | "+d.Detail)
			}
		}
	}
	if completed != 1 {
		t.Fatalf("%d completed events, want 1", completed)
	}
	return progress, diags
}

// action "scheduler_job_run" at the protocol level (no CLI here has actions: Terraform 1.14
// cannot be built offline, OpenTofu has none), against the acceptance daemon: it runs the job,
// waits for the outcome and reports it; a failed run fails the action; without
// wait_for_completion it returns once the run is requested.
func TestAccJobRunAction(t *testing.T) {
	if os.Getenv("TF_ACC") == "" {
		t.Skip("acceptance test: set TF_ACC=1 (make testacc), as resource.Test does")
	}
	ctx := context.Background()
	hits := make(chan string, 16)
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits <- r.URL.Path
		if r.URL.Path == "/fail" {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(target.Close)
	c := testClient(t)
	coll := client.CollectionID{Subscription: DefaultSubscriptionID, ResourceGroup: "default", Name: acctest.RandomWithPrefix("jc")}
	if _, err := c.CollectionPut(ctx, coll, &wire.JobCollectionDefinition{Properties: &wire.JobCollectionProperties{}}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.CollectionDelete(context.Background(), coll) })
	job := func(name, path string) client.JobID {
		id := client.JobID{CollectionID: coll, Name: name}
		if _, err := c.JobPut(ctx, id, &wire.JobDefinition{Properties: &wire.JobProperties{
			StartTime: "2040-01-01T00:00:00Z",
			Action: &wire.JobAction{Type: "Http", Request: &wire.HTTPRequest{URI: target.URL + path, Method: "POST"},
				RetryPolicy: &wire.RetryPolicy{RetryType: "None"}},
		}}); err != nil {
			t.Fatal(err)
		}
		return id
	}
	ok, failing, fire := job("ok", "/ok"), job("failing", "/fail"), job("fire", "/fire")
	server, schemas := configuredServer(t)
	lastEntry := func(id client.JobID) string {
		h, err := c.HistoryList(ctx, client.HistoryListParams{Job: id, Max: 1})
		if err != nil || len(h) != 1 {
			t.Fatalf("history of %s: %v %v", id, h, err)
		}
		return h[0].Name
	}
	lastMessage := func(id client.JobID) string {
		h, err := c.HistoryList(ctx, client.HistoryListParams{Job: id, Max: 1})
		if err != nil || len(h) != 1 {
			t.Fatalf("history of %s: %v %v", id, h, err)
		}
		return h[0].Properties.Message
	}
	wait := tftypes.NewValue(tftypes.Bool, true)
	timeout := tfStr("30s")

	progress, diags := invokeJobRun(t, server, schemas, map[string]any{"job_id": tfStr(ok.String()), "wait_for_completion": wait, "timeout": timeout})
	if want := []string{"Job ok: run requested", "Job ok: the run completed (history entry " + lastEntry(ok) + ": MainAction Completed)"}; !slices.Equal(progress, want) || diags != nil {
		t.Errorf("ok: progress %q, diagnostics %q; want %q and none", progress, diags, want)
	}
	if got := <-hits; got != "/ok" {
		t.Errorf("the receiver got %s, want /ok", got)
	}

	progress, diags = invokeJobRun(t, server, schemas, map[string]any{"job_id": tfStr(failing.String()), "wait_for_completion": wait, "timeout": timeout})
	if want := []string{"Job failing: run requested", "Job failing: the run faulted (history entry " + lastEntry(failing) + ": MainAction Failed)"}; !slices.Equal(progress, want) {
		t.Errorf("failing: progress %q, want %q", progress, want)
	}
	if want := []string{"ERROR: Job failing: the run faulted | The action failed after its retries, and so did the error action (or there was none). Last message: " + lastMessage(failing)}; !slices.Equal(diags, want) {
		t.Errorf("failing: diagnostics %q, want %q", diags, want)
	}

	progress, diags = invokeJobRun(t, server, schemas, map[string]any{"job_id": tfStr(fire.String())})
	if want := []string{"Job fire: run requested"}; !slices.Equal(progress, want) || diags != nil {
		t.Errorf("fire: progress %q, diagnostics %q; want %q and none", progress, diags, want)
	}
	for got := range hits { // the run happens anyway
		if got == "/fire" {
			break
		}
	}

	_, diags = invokeJobRun(t, server, schemas, map[string]any{"job_id": tfStr(ok.String()), "timeout": tfStr("soon")})
	if want := []string{`ERROR: Invalid timeout | timeout: "soon" is not a positive duration such as 90s or 10m`}; !slices.Equal(diags, want) {
		t.Errorf("bad timeout: diagnostics %q, want %q", diags, want)
	}
}
