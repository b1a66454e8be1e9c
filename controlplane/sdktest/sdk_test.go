package sdktest

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/services/scheduler/mgmt/2016-03-01/scheduler"
	"github.com/Azure/go-autorest/autorest"
	"github.com/Azure/go-autorest/autorest/azure"
	"github.com/Azure/go-autorest/autorest/date"
	"github.com/Azure/go-autorest/autorest/to"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/api"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/dispatch"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/secret"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store/sqlite"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/clock"
)

const (
	subscription = "00000000-0000-0000-0000-000000000001"
	token        = "sdk-test-token"
	group        = "rg-sdk"
	collection   = "jc-sdk"
)

// staticToken is an adal.OAuthTokenProvider with a fixed bearer token.
type staticToken string

func (s staticToken) OAuthToken() string { return string(s) }

// daemon is the daemon's parts as `schedulerd serve` wires them: a SQLite file, the real
// dispatcher on the wall clock and the API, served over real HTTP.
// recorded is signalled after each attempt record is committed.
func daemon(t *testing.T) (string, <-chan struct{}) {
	t.Helper()
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(t.Context())
	st, err := sqlite.Open(ctx, filepath.Join(dir, "scheduler.db"))
	if err != nil {
		t.Fatal(err)
	}
	box, _, err := secret.LoadOrCreate(filepath.Join(dir, "secret.key"))
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewJSONHandler(io.Discard, nil))
	reg := prometheus.NewRegistry()
	recorded := make(chan struct{}, 64)
	disp, err := dispatch.New(dispatch.Config{Store: st, Clock: clock.Real{}, Secrets: box, Logger: log, Registerer: reg, Workers: 4, Region: "sdk",
		OnRecord: func(store.AttemptRecord, store.AttemptRecordResult) { recorded <- struct{}{} }})
	if err != nil {
		t.Fatal(err)
	}
	tokens, err := api.NewTokens(token, nil)
	if err != nil {
		t.Fatal(err)
	}
	h, err := api.New(api.Config{Store: st, Dispatcher: disp, Secrets: box, Clock: clock.Real{}, Logger: log, Tokens: tokens, Registerer: reg, Gatherer: reg})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	done := make(chan error, 1)
	go func() { done <- disp.Run(ctx) }()
	t.Cleanup(func() {
		srv.Close()
		cancel()
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("dispatcher: %v", err)
		}
		_ = st.Close()
	})
	return srv.URL, recorded
}

// statusOf returns the HTTP status of an SDK error, 0 when there is none.
func statusOf(err error) int {
	var de autorest.DetailedError
	if errors.As(err, &de) {
		if code, ok := de.StatusCode.(int); ok {
			return code
		}
	}
	return 0
}

// TestAzureSDK drives the daemon with Microsoft's SDK, unchanged: collections, jobs, paging,
// patch, run, history, enable/disable, errors.
func TestAzureSDK(t *testing.T) {
	base, recorded := daemon(t)
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()

	hits := make(chan http.Header, 16)
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits <- r.Header.Clone()
		w.WriteHeader(http.StatusOK)
	}))
	defer receiver.Close()

	auth := autorest.NewBearerAuthorizer(staticToken(token))
	collections := scheduler.NewJobCollectionsClientWithBaseURI(base, subscription)
	collections.Authorizer = auth
	jobs := scheduler.NewJobsClientWithBaseURI(base, subscription)
	jobs.Authorizer = auth

	// Collections.
	jc, err := collections.CreateOrUpdate(ctx, group, collection, scheduler.JobCollectionDefinition{
		Location: to.StringPtr("local"),
		Tags:     map[string]*string{"team": to.StringPtr("ops")},
		Properties: &scheduler.JobCollectionProperties{
			Sku:   &scheduler.Sku{Name: scheduler.Standard},
			State: scheduler.Enabled,
			Quota: &scheduler.JobCollectionQuota{MaxJobCount: to.Int32Ptr(10), MaxRecurrence: &scheduler.JobMaxRecurrence{Frequency: scheduler.Minute, Interval: to.Int32Ptr(1)}},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if jc.StatusCode != http.StatusCreated || to.String(jc.Name) != collection || jc.Properties.Sku.Name != scheduler.Standard ||
		to.String(jc.ID) != "/subscriptions/"+subscription+"/resourceGroups/"+group+"/providers/Microsoft.Scheduler/jobCollections/"+collection ||
		*jc.Properties.Quota.MaxJobCount != 10 || to.String(jc.Tags["team"]) != "ops" {
		t.Fatalf("created collection %d %+v", jc.StatusCode, jc)
	}
	got, err := collections.Get(ctx, group, collection)
	if err != nil || got.Properties.State != scheduler.Enabled || to.String(got.Type) != "Microsoft.Scheduler/jobCollections" {
		t.Fatalf("get collection %v %+v", err, got)
	}
	if _, err := collections.CreateOrUpdate(ctx, group, "jc-other", scheduler.JobCollectionDefinition{
		Location: to.StringPtr("local"), Properties: &scheduler.JobCollectionProperties{Sku: &scheduler.Sku{Name: scheduler.Free}},
	}); err != nil {
		t.Fatal(err)
	}
	var names []string
	for it, err := collections.ListBySubscriptionComplete(ctx); it.NotDone(); err = it.NextWithContext(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, to.String(it.Value().Name))
	}
	if len(names) != 2 || names[0] != "jc-other" || names[1] != collection {
		t.Fatalf("collections by subscription %v", names)
	}
	page, err := collections.ListByResourceGroup(ctx, group)
	if err != nil || len(page.Values()) != 2 {
		t.Fatalf("collections by resource group %v %d", err, len(page.Values()))
	}

	// Jobs: a daily one starting tomorrow, with Basic authentication; an every-minute one.
	start := time.Now().UTC().Add(24 * time.Hour).Truncate(time.Minute)
	job, err := jobs.CreateOrUpdate(ctx, group, collection, "daily", scheduler.JobDefinition{Properties: &scheduler.JobProperties{
		StartTime: &date.Time{Time: start},
		Action: &scheduler.JobAction{
			Type: scheduler.HTTP,
			Request: &scheduler.HTTPRequest{
				URI: to.StringPtr(receiver.URL + "/daily"), Method: to.StringPtr("POST"), Body: to.StringPtr("hello"),
				Headers:        map[string]*string{"Content-Type": to.StringPtr("text/plain")},
				Authentication: scheduler.BasicAuthentication{Username: to.StringPtr("alice"), Password: to.StringPtr("s3cret")},
			},
			RetryPolicy: &scheduler.RetryPolicy{RetryType: scheduler.Fixed, RetryInterval: to.StringPtr("PT30S"), RetryCount: to.Int32Ptr(2)},
		},
		Recurrence: &scheduler.JobRecurrence{Frequency: scheduler.Week, Interval: to.Int32Ptr(1),
			Schedule: &scheduler.JobRecurrenceSchedule{WeekDays: &[]scheduler.DayOfWeek{scheduler.Monday, scheduler.Friday}}},
		State: scheduler.JobStateEnabled,
	}})
	if err != nil {
		t.Fatal(err)
	}
	if job.StatusCode != http.StatusCreated || to.String(job.Name) != collection+"/daily" || job.Properties.State != scheduler.JobStateEnabled ||
		!job.Properties.StartTime.Equal(start) || job.Properties.Recurrence.Frequency != scheduler.Week {
		t.Fatalf("created job %d %+v", job.StatusCode, job.Properties)
	}
	basic, ok := job.Properties.Action.Request.Authentication.AsBasicAuthentication()
	if !ok || to.String(basic.Username) != "alice" || basic.Password != nil {
		t.Fatalf("authentication read back %+v (password must not come back)", job.Properties.Action.Request.Authentication)
	}
	if st := job.Properties.Status; st == nil || st.NextExecutionTime == nil || st.NextExecutionTime.Before(start) || *st.ExecutionCount != 0 {
		t.Fatalf("status %+v", job.Properties.Status)
	}
	if _, err := jobs.CreateOrUpdate(ctx, group, collection, "minutely", scheduler.JobDefinition{Properties: &scheduler.JobProperties{
		Action: &scheduler.JobAction{Type: scheduler.HTTP, Request: &scheduler.HTTPRequest{URI: to.StringPtr(receiver.URL + "/minutely"), Method: to.StringPtr("GET")}},
		Recurrence: &scheduler.JobRecurrence{Frequency: scheduler.Minute, Interval: to.Int32Ptr(1),
			EndTime: &date.Time{Time: time.Now().UTC().Add(time.Hour).Truncate(time.Second)}},
		State: scheduler.JobStateDisabled,
	}}); err != nil {
		t.Fatal(err)
	}
	// Get, and a list paged one job at a time through nextLink.
	daily, err := jobs.Get(ctx, group, collection, "daily")
	if err != nil || to.String(daily.ID) != to.String(job.ID) || to.String(daily.Properties.Action.Request.Body) != "hello" {
		t.Fatalf("get job %v %+v", err, daily)
	}
	names = nil
	for it, err := jobs.ListComplete(ctx, group, collection, to.Int32Ptr(1), nil, ""); it.NotDone(); err = it.NextWithContext(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, to.String(it.Value().Name))
	}
	if len(names) != 2 || names[0] != collection+"/daily" || names[1] != collection+"/minutely" {
		t.Fatalf("jobs %v", names)
	}
	disabled, err := jobs.List(ctx, group, collection, nil, nil, "state eq 'Disabled'")
	if err != nil || len(disabled.Values()) != 1 || to.String(disabled.Values()[0].Name) != collection+"/minutely" {
		t.Fatalf("disabled jobs %v %d", err, len(disabled.Values()))
	}

	// Patch: disable, then enable again; the password is kept (an omitted secret is kept).
	patched, err := jobs.Patch(ctx, group, collection, "daily", scheduler.JobDefinition{Properties: &scheduler.JobProperties{State: scheduler.JobStateDisabled}})
	if err != nil || patched.Properties.State != scheduler.JobStateDisabled || patched.Properties.Status.NextExecutionTime != nil {
		t.Fatalf("patch %v %+v", err, patched.Properties)
	}
	if _, err := jobs.Patch(ctx, group, collection, "daily", scheduler.JobDefinition{Properties: &scheduler.JobProperties{State: scheduler.JobStateEnabled}}); err != nil {
		t.Fatal(err)
	}

	// Run now: the real dispatcher calls the receiver; the history shows the attempt.
	if _, err := jobs.Run(ctx, group, collection, "daily"); err != nil {
		t.Fatal(err)
	}
	select {
	case hdr := <-hits:
		if hdr.Get("Authorization") == "" || hdr.Get("x-ms-scheduler-jobid") == "" {
			t.Errorf("the call lacks authentication or scheduler headers: %v", hdr)
		}
	case <-ctx.Done():
		t.Fatal("the receiver was not called after Run")
	}
	select {
	case <-recorded:
	case <-ctx.Done():
		t.Fatal("the attempt was not recorded")
	}
	h, err := jobs.ListJobHistory(ctx, group, collection, "daily", nil, nil, "status eq completed")
	if err != nil {
		t.Fatal(err)
	}
	entries := h.Values()
	if len(entries) != 1 || entries[0].Properties.Status != scheduler.Completed || entries[0].Properties.ActionName != scheduler.MainAction ||
		entries[0].Properties.StartTime == nil {
		t.Fatalf("history %+v", entries)
	}

	// Collection disable/enable (long-running operations in the SDK, done at once here).
	dis, err := collections.Disable(ctx, group, collection)
	if err != nil {
		t.Fatal(err)
	}
	if err := dis.WaitForCompletionRef(ctx, collections.Client); err != nil {
		t.Fatal(err)
	}
	if daily, err = jobs.Get(ctx, group, collection, "daily"); err != nil || daily.Properties.Status.NextExecutionTime != nil {
		t.Fatalf("job of a disabled collection: %v %+v", err, daily.Properties.Status)
	}
	en, err := collections.Enable(ctx, group, collection)
	if err != nil {
		t.Fatal(err)
	}
	if err := en.WaitForCompletionRef(ctx, collections.Client); err != nil {
		t.Fatal(err)
	}
	if got, err = collections.Get(ctx, group, collection); err != nil || got.Properties.State != scheduler.Enabled {
		t.Fatalf("enabled collection %v %+v", err, got.Properties)
	}

	// Errors come back as Azure errors the SDK parses.
	_, err = jobs.CreateOrUpdate(ctx, group, collection, "bad", scheduler.JobDefinition{Properties: &scheduler.JobProperties{
		Action:     &scheduler.JobAction{Type: scheduler.HTTPS, Request: &scheduler.HTTPRequest{URI: to.StringPtr("http://plain.example"), Method: to.StringPtr("GET")}},
		Recurrence: &scheduler.JobRecurrence{Frequency: scheduler.Month, Schedule: &scheduler.JobRecurrenceSchedule{MonthDays: &[]int32{1, 32}}},
	}})
	var re *azure.RequestError
	if statusOf(err) != http.StatusBadRequest || !errors.As(err, &re) || re.ServiceError == nil || re.ServiceError.Code != "BadRequest" {
		t.Fatalf("invalid job: %v", err)
	}

	// Delete the job and the collections.
	if _, err := jobs.Delete(ctx, group, collection, "daily"); err != nil {
		t.Fatal(err)
	}
	if _, err := jobs.Get(ctx, group, collection, "daily"); statusOf(err) != http.StatusNotFound {
		t.Fatalf("deleted job: %v", err)
	}
	for _, name := range []string{collection, "jc-other"} {
		del, err := collections.Delete(ctx, group, name)
		if err != nil {
			t.Fatal(err)
		}
		if err := del.WaitForCompletionRef(ctx, collections.Client); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := collections.Get(ctx, group, collection); statusOf(err) != http.StatusNotFound {
		t.Fatalf("deleted collection: %v", err)
	}
}
