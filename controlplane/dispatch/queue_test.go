package dispatch_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/action"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/dispatch"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/secret"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/brokertest"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"
)

// TestErrorActionToAStorageQueue: the main action fails, the error action puts its envelope on a
// real Azurite queue with the execution's tag and expected time.
func TestErrorActionToAStorageQueue(t *testing.T) {
	tg := newTarget(t)
	tg.answer("/main", http.StatusInternalServerError)
	az := brokertest.StartAzurite(t)
	az.CreateQueue(t, "errors")
	e := newEnv(t, t0, func(c *dispatch.Config) { c.StorageQueueEndpoint = az.Endpoint() })
	props := wire.JobProperties{StartTime: t0.Add(time.Minute).Format(time.RFC3339), Action: httpAction(tg.URL + "/main")}
	props.Action.RetryPolicy = &wire.RetryPolicy{RetryType: "None"}
	props.Action.ErrorAction = &wire.JobErrorAction{Type: "storageQueue", QueueMessage: &wire.StorageQueueMessage{
		StorageAccount: brokertest.AzuriteAccount, QueueName: "errors", SasToken: brokertest.AccountSAS("a"), Message: "main action failed",
	}}
	j := e.putJob("q", props, "Enabled")
	if sas := e.job(j.ID).Properties.Action.ErrorAction.QueueMessage.SasToken; !secret.IsSealed(sas) {
		t.Fatalf("stored SAS token %q is not sealed", sas)
	}
	e.start()
	e.clock.Set(t0.Add(time.Minute))
	tag := tg.next(t).Header.Get("x-ms-execution-tag")
	e.record()
	r := e.record()
	equal(t, "error action record", [4]any{r.History.ActionName, r.History.Status, r.Finished, r.Faulted},
		[4]any{"ErrorAction", "Completed", true, false})
	texts := az.WaitMessages(t, "errors", 1, wait)
	env, err := action.ParseQueueEnvelope(texts[0])
	if err != nil {
		t.Fatal(err)
	}
	equal(t, "envelope", [4]string{env.ExecutionTag, env.ExpectedExecutionTime, env.Message, env.Region},
		[4]string{tag, "2026-06-01T09:01:00Z", "main action failed", "test-region"})
	got := e.job(j.ID)
	equal(t, "counters", [3]int{got.Status.ExecutionCount, got.Status.FailureCount, got.Status.FaultedCount}, [3]int{1, 1, 0})
}
