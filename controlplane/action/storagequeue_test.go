package action_test

import (
	"encoding/base64"
	"net/http"
	"strings"
	"testing"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/action"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/brokertest"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"
)

// wantEnvelope is the envelope of attempt()'s execution with the message "Hello <world> & co",
// in Azure Scheduler's shape.
const wantEnvelope = `<?xml version="1.0" encoding="utf-16"?>
<StorageQueueMessage xmlns:xsd="http://www.w3.org/2001/XMLSchema" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
  <ExecutionTag>tag-1</ExecutionTag>
  <ClientRequestId>req-1</ClientRequestId>
  <ExpectedExecutionTime>2026-05-04T10:30:00Z</ExpectedExecutionTime>
  <SchedulerJobId>/subscriptions/s/resourceGroups/rg/providers/Microsoft.Scheduler/jobCollections/c/jobs/j</SchedulerJobId>
  <SchedulerJobCollectionId>/subscriptions/s/resourceGroups/rg/providers/Microsoft.Scheduler/jobCollections/c</SchedulerJobCollectionId>
  <Region>local</Region>
  <Message>Hello &lt;world&gt; &amp; co</Message>
</StorageQueueMessage>`

// TestStorageQueueAzurite puts a message on a queue of a real Azurite with a SAS token Azurite
// verifies, reads it back with Get Messages and checks every byte of the envelope; then a SAS
// signed with the wrong key fails with Azurite's own answer and without the token.
func TestStorageQueueAzurite(t *testing.T) {
	az := brokertest.StartAzurite(t)
	az.CreateQueue(t, "jobs")
	e := action.New(action.Config{StorageQueueEndpoint: az.Endpoint()})

	a := attempt("storageQueue", nil)
	a.MainAction(&wire.JobAction{Type: "StorageQueue", QueueMessage: &wire.StorageQueueMessage{
		StorageAccount: brokertest.AzuriteAccount, QueueName: "jobs", SasToken: "?" + brokertest.AccountSAS("a"),
		Message: "Hello <world> & co",
	}})
	res := e.Do(t.Context(), a)
	if !res.Success || res.StatusCode != http.StatusCreated || !strings.HasPrefix(res.Message, "HTTP/1.1 201 Created\n<?xml") ||
		!strings.Contains(res.Message, "<MessageId>") {
		t.Fatalf("result = %+v", res)
	}
	texts := az.Messages(t, "jobs")
	if len(texts) != 1 {
		t.Fatalf("%d messages on the queue, want 1", len(texts))
	}
	if raw := decode(t, texts[0]); raw != wantEnvelope {
		t.Fatalf("envelope =\n%s\nwant\n%s", raw, wantEnvelope)
	}
	env, err := action.ParseQueueEnvelope(texts[0])
	if err != nil {
		t.Fatal(err)
	}
	if env.Message != "Hello <world> & co" || env.ExecutionTag != "tag-1" || env.Region != "local" {
		t.Fatalf("parsed envelope %+v", env)
	}

	// A token signed with another key: Azurite refuses it; history gets its answer, not the token.
	bad := strings.Replace(brokertest.AccountSAS("a"), "sig=", "sig=AAAA", 1)
	a.ErrorAction(&wire.JobErrorAction{Type: "StorageQueue", QueueMessage: &wire.StorageQueueMessage{
		StorageAccount: brokertest.AzuriteAccount, QueueName: "jobs", SasToken: bad, Message: "m",
	}})
	res = e.Do(t.Context(), a)
	if res.Success || res.StatusCode != http.StatusForbidden || !strings.HasPrefix(res.Message, "HTTP/1.1 403 Server failed to authenticate the request.") ||
		!strings.Contains(res.Message, "<Code>AuthorizationFailure</Code>") && !strings.Contains(res.Message, "<Code>AuthenticationFailed</Code>") {
		t.Fatalf("wrong SAS: %+v", res)
	}
	if strings.Contains(res.Message, "sig=") || strings.Contains(res.Message, "AAAA") {
		t.Fatalf("the message quotes the SAS token: %q", res.Message)
	}

	// A missing queue: Azurite's 404 QueueNotFound.
	a.ErrorAction(&wire.JobErrorAction{Type: "StorageQueue", QueueMessage: &wire.StorageQueueMessage{
		StorageAccount: brokertest.AzuriteAccount, QueueName: "nowhere", SasToken: brokertest.AccountSAS("a"), Message: "m",
	}})
	if res = e.Do(t.Context(), a); res.Success || res.StatusCode != http.StatusNotFound || !strings.Contains(res.Message, "QueueNotFound") {
		t.Fatalf("missing queue: %+v", res)
	}
}

// TestStorageQueueUnreachable: a service that cannot be reached; the error names the cause and
// not the SAS token.
func TestStorageQueueUnreachable(t *testing.T) {
	e := action.New(action.Config{StorageQueueEndpoint: "http://127.0.0.1:1/{account}"})
	a := attempt("StorageQueue", nil)
	a.ErrorAction(&wire.JobErrorAction{Type: "StorageQueue", QueueMessage: &wire.StorageQueueMessage{
		StorageAccount: "acct", QueueName: "jobs", SasToken: "sv=2019-12-12&sig=d3Jvbmc", Message: "m",
	}})
	res := e.Do(t.Context(), a)
	if res.Success || strings.Contains(res.Message, "d3Jvbmc") || !strings.HasPrefix(res.Message, "StorageQueue action: request failed: Post: dial tcp") {
		t.Fatalf("unreachable service: %+v", res)
	}
}

func decode(t *testing.T, text string) string {
	t.Helper()
	raw, err := base64Decode(text)
	if err != nil {
		t.Fatalf("message text is not base64: %v", err)
	}
	return raw
}

func base64Decode(s string) (string, error) {
	b, err := base64.StdEncoding.DecodeString(s)
	return string(b), err
}
