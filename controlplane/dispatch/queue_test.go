package dispatch_test

import (
	"encoding/xml"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/action"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/dispatch"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/secret"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"
)

// queuePost is one Put Message a fake queue service received.
type queuePost struct {
	Path, Query string
	Envelope    action.QueueEnvelope
}

// newFakeQueueService stands in for Azure Storage's queue service (Azurite is not installed
// where these tests run): it accepts every Put Message and reports it decoded.
func newFakeQueueService(t *testing.T) (*httptest.Server, chan queuePost) {
	t.Helper()
	posts := make(chan queuePost, 10)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var m struct {
			MessageText string `xml:"MessageText"`
		}
		b, _ := io.ReadAll(r.Body)
		p := queuePost{Path: r.URL.Path, Query: r.URL.RawQuery}
		if err := xml.Unmarshal(b, &m); err != nil {
			http.Error(w, "bad body", http.StatusBadRequest)
			return
		}
		env, err := action.ParseQueueEnvelope(m.MessageText)
		if err != nil {
			http.Error(w, "bad message", http.StatusBadRequest)
			return
		}
		p.Envelope = env
		posts <- p
		w.WriteHeader(http.StatusCreated)
	}))
	t.Cleanup(srv.Close)
	return srv, posts
}

func TestErrorActionToAStorageQueue(t *testing.T) {
	tg := newTarget(t)
	tg.answer("/main", http.StatusInternalServerError)
	queue, posts := newFakeQueueService(t)
	e := newEnv(t, t0, func(c *dispatch.Config) { c.StorageQueueEndpoint = queue.URL + "/{account}" })
	props := wire.JobProperties{StartTime: t0.Add(time.Minute).Format(time.RFC3339), Action: httpAction(tg.URL + "/main")}
	props.Action.RetryPolicy = &wire.RetryPolicy{RetryType: "None"}
	props.Action.ErrorAction = &wire.JobErrorAction{Type: "storageQueue", QueueMessage: &wire.StorageQueueMessage{
		StorageAccount: "acct", QueueName: "errors", SasToken: "sv=2019-12-12&sig=abc", Message: "main action failed",
	}}
	j := e.putJob("q", props, "Enabled")
	if sas := e.job(j.ID).Properties.Action.ErrorAction.QueueMessage.SasToken; !secret.IsSealed(sas) {
		t.Fatalf("stored SAS token %q is not sealed", sas)
	}
	e.start()
	e.clock.Set(t0.Add(time.Minute))
	tag := tg.next(t).Header.Get("x-ms-execution-tag")
	e.record()
	var p queuePost
	select {
	case p = <-posts:
	case <-time.After(wait):
		t.Fatal("nothing reached the queue")
	}
	equal(t, "queue address", p.Path+"?"+p.Query, "/acct/errors/messages?sv=2019-12-12&sig=abc")
	equal(t, "envelope", [4]string{p.Envelope.ExecutionTag, p.Envelope.ExpectedExecutionTime, p.Envelope.Message, p.Envelope.Region},
		[4]string{tag, "2026-06-01T09:01:00Z", "main action failed", "test-region"})
	r := e.record()
	equal(t, "error action record", [4]any{r.History.ActionName, r.History.Status, r.Finished, r.Faulted},
		[4]any{"ErrorAction", "Completed", true, false})
	got := e.job(j.ID)
	equal(t, "counters", [3]int{got.Status.ExecutionCount, got.Status.FailureCount, got.Status.FaultedCount}, [3]int{1, 1, 0})
}
