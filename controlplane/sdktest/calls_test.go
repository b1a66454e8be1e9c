package sdktest

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/services/scheduler/mgmt/2016-03-01/scheduler"
	"github.com/Azure/go-autorest/autorest"
	"github.com/Azure/go-autorest/autorest/to"
)

// An Azure client reads a job that uses the extensions of how it calls (timeout, an Exponential
// retry policy with maxRetryInterval, signing) without failing, and sees its Azure fields as
// written.
func TestAzureSDKReadsAJobWithCallExtensions(t *testing.T) {
	base, _ := daemon(t)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	auth := autorest.NewBearerAuthorizer(staticToken(token))
	collections := scheduler.NewJobCollectionsClientWithBaseURI(base, subscription)
	collections.Authorizer = auth
	jobs := scheduler.NewJobsClientWithBaseURI(base, subscription)
	jobs.Authorizer = auth
	if _, err := collections.CreateOrUpdate(ctx, group, collection, scheduler.JobCollectionDefinition{
		Location: to.StringPtr("local"), Properties: &scheduler.JobCollectionProperties{Sku: &scheduler.Sku{Name: scheduler.Standard}},
	}); err != nil {
		t.Fatal(err)
	}
	body := `{"properties":{"startTime":"2030-01-01T00:00:00Z","state":"Disabled",
		"action":{"type":"Https","timeout":"PT10S","request":{"uri":"https://example.com/x","method":"POST","body":"b",
		"signing":{"secret":"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}},
		"retryPolicy":{"retryType":"Exponential","retryInterval":"PT30S","retryCount":5,"maxRetryInterval":"PT10M"},
		"errorAction":{"type":"Https","timeout":"PT5S","request":{"uri":"https://example.com/e","method":"POST"}}},
		"recurrence":{"frequency":"Day"}}}`
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, base+"/subscriptions/"+subscription+"/resourceGroups/"+group+
		"/providers/Microsoft.Scheduler/jobCollections/"+collection+"/jobs/calling?api-version=2016-03-01", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("PUT with extensions: %d", resp.StatusCode)
	}
	job, err := jobs.Get(ctx, group, collection, "calling")
	if err != nil {
		t.Fatalf("the SDK fails to read a job with call extensions: %v", err)
	}
	p := job.Properties
	if p.State != scheduler.JobStateDisabled || p.Recurrence == nil || p.Recurrence.Frequency != scheduler.Day ||
		p.Action == nil || p.Action.Type != scheduler.HTTPS || !p.StartTime.Equal(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)) ||
		p.Action.Request == nil || to.String(p.Action.Request.URI) != "https://example.com/x" ||
		p.Action.RetryPolicy == nil || p.Action.RetryPolicy.RetryType != "Exponential" || to.Int32(p.Action.RetryPolicy.RetryCount) != 5 ||
		p.Action.ErrorAction == nil || p.Action.ErrorAction.Request == nil {
		t.Fatalf("job read by the SDK: %+v", p)
	}
	page, err := jobs.List(ctx, group, collection, nil, nil, "")
	if err != nil || len(page.Values()) != 1 || to.String(page.Values()[0].Name) != collection+"/calling" {
		t.Fatalf("the SDK lists jobs with extensions: %v %d", err, len(page.Values()))
	}
}
