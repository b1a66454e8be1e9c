package action_test

import (
	"encoding/base64"
	"encoding/xml"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/action"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"
)

// fakeQueueService stands in for Azure Storage's queue service (Azurite is not installed where
// these tests run): it implements Put Message for one account, checking the SAS signature, the
// REST version and the body, and keeps the message texts it accepted.
type fakeQueueService struct {
	*httptest.Server
	mu       sync.Mutex
	messages map[string][]string // queue → message texts
}

const fakeSAS = "sv=2019-12-12&ss=q&srt=o&sp=a&se=2030-01-01T00:00:00Z&sig=c2VjcmV0"

func newFakeQueueService(t *testing.T) *fakeQueueService {
	t.Helper()
	f := &fakeQueueService{messages: map[string][]string{}}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
		switch {
		case r.Method != http.MethodPost || len(parts) != 3 || parts[0] != "acct" || parts[2] != "messages":
			http.Error(w, "<Error><Code>InvalidUri</Code></Error>", http.StatusBadRequest)
			return
		case r.URL.RawQuery != fakeSAS:
			http.Error(w, "<Error><Code>AuthenticationFailed</Code></Error>", http.StatusForbidden)
			return
		case r.Header.Get("x-ms-version") != action.StorageQueueVersion:
			http.Error(w, "<Error><Code>InvalidHeaderValue</Code></Error>", http.StatusBadRequest)
			return
		}
		var m struct {
			MessageText string `xml:"MessageText"`
		}
		b, _ := io.ReadAll(r.Body)
		if err := xml.Unmarshal(b, &m); err != nil || m.MessageText == "" {
			http.Error(w, "<Error><Code>InvalidXmlDocument</Code></Error>", http.StatusBadRequest)
			return
		}
		f.mu.Lock()
		f.messages[parts[1]] = append(f.messages[parts[1]], m.MessageText)
		f.mu.Unlock()
		w.WriteHeader(http.StatusCreated)
		_, _ = io.WriteString(w, "<QueueMessagesList><QueueMessage><MessageId>1</MessageId></QueueMessage></QueueMessagesList>")
	}))
	t.Cleanup(f.Close)
	return f
}

func TestStorageQueuePutsTheEnvelope(t *testing.T) {
	f := newFakeQueueService(t)
	e := action.New(action.Config{StorageQueueEndpoint: f.URL + "/{account}"})
	a := attempt("storageQueue", nil)
	a.MainAction(&wire.JobAction{Type: "StorageQueue", QueueMessage: &wire.StorageQueueMessage{
		StorageAccount: "acct", QueueName: "jobs", SasToken: "?" + fakeSAS, Message: "Hello <world> & co",
	}})
	res := e.Do(t.Context(), a)
	want := action.Result{Success: true, StatusCode: 201,
		Message: "HTTP/1.1 201 Created\n<QueueMessagesList><QueueMessage><MessageId>1</MessageId></QueueMessage></QueueMessagesList>"}
	if res != want {
		t.Fatalf("result = %+v, want %+v", res, want)
	}
	f.mu.Lock()
	texts := f.messages["jobs"]
	f.mu.Unlock()
	if len(texts) != 1 {
		t.Fatalf("%d messages on the queue, want 1", len(texts))
	}
	raw, err := base64.StdEncoding.DecodeString(texts[0])
	if err != nil {
		t.Fatalf("message text is not base64: %v", err)
	}
	if string(raw) != wantEnvelope {
		t.Fatalf("envelope =\n%s\nwant\n%s", raw, wantEnvelope)
	}
}

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

func TestStorageQueueRejectedSASFailsWithoutLeakingIt(t *testing.T) {
	f := newFakeQueueService(t)
	e := action.New(action.Config{StorageQueueEndpoint: f.URL + "/{account}"})
	a := attempt("StorageQueue", nil)
	a.ErrorAction(&wire.JobErrorAction{Type: "StorageQueue", QueueMessage: &wire.StorageQueueMessage{
		StorageAccount: "acct", QueueName: "jobs", SasToken: "sv=2019-12-12&sig=d3Jvbmc", Message: "m",
	}})
	res := e.Do(t.Context(), a)
	if res.Success || res.StatusCode != http.StatusForbidden || !strings.HasPrefix(res.Message, "HTTP/1.1 403 Forbidden\n<Error><Code>AuthenticationFailed") {
		t.Fatalf("result = %+v", res)
	}

	// A service that cannot be reached: the error names the cause, not the SAS token.
	f.Close()
	res = action.New(action.Config{StorageQueueEndpoint: f.URL + "/{account}"}).Do(t.Context(), a)
	if res.Success || strings.Contains(res.Message, "d3Jvbmc") || !strings.HasPrefix(res.Message, "StorageQueue action: request failed: Post: dial tcp") {
		t.Fatalf("unreachable service: %+v", res)
	}
}
