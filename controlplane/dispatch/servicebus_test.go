package dispatch_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/Azure/go-amqp"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/action"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/dispatch"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/brokertest"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"
)

// TestServiceBusRetriesThenErrorAction: a ServiceBusQueue action whose key the broker (the
// machine's RabbitMQ) refuses fails every attempt with a clear message, is retried as its policy
// says, and then the ServiceBusTopic error action delivers to a subscriber.
func TestServiceBusRetriesThenErrorAction(t *testing.T) {
	rb := brokertest.UseRabbitMQ(t)
	queue, _ := rb.NewQueue(t)
	sub := rb.Subscribe(t, "amq.fanout")
	e := newEnv(t, t0, func(c *dispatch.Config) {
		c.ServiceBus = action.ServiceBusConfig{Endpoint: rb.Endpoint, Auth: action.ServiceBusAuthPlain,
			QueueAddress: rb.QueueAddress, TopicAddress: rb.TopicAddress}
	})
	msg := func(key string) wire.ServiceBusMessage {
		return wire.ServiceBusMessage{Namespace: "localbus", Message: "payload",
			Authentication: &wire.ServiceBusAuthentication{Type: "SharedAccessKey", SasKeyName: rb.User, SasKey: key}}
	}
	props := wire.JobProperties{StartTime: t0.Add(time.Minute).Format(time.RFC3339), Action: &wire.JobAction{
		Type:                   "ServiceBusQueue",
		ServiceBusQueueMessage: &wire.ServiceBusQueueMessage{ServiceBusMessage: msg("wrong-key"), QueueName: queue},
		RetryPolicy:            &wire.RetryPolicy{RetryType: "Fixed", RetryInterval: "PT15S", RetryCount: intp(1)},
		ErrorAction: &wire.JobErrorAction{Type: "ServiceBusTopic",
			ServiceBusTopicMessage: &wire.ServiceBusTopicMessage{ServiceBusMessage: msg(rb.Password), TopicPath: "amq.fanout"}},
	}}
	j := e.putJob("bus", props, "Enabled")
	e.start()
	e.clock.Set(t0.Add(time.Minute))
	want := `ServiceBusQueue action: connect to amqp://127.0.0.1:5672: the broker refused key "guest" (SASL PLAIN auth failed with code 0x1)`
	for i := range 2 {
		r := e.record()
		equal(t, fmt.Sprintf("attempt %d", i), [4]any{r.History.ActionName, r.History.Status, r.History.RetryCount, r.History.Message},
			[4]any{"MainAction", "Failed", i, want})
		if i == 0 {
			equal(t, "retry due", r.Next, r.History.EndTime.Add(15*time.Second))
			e.clock.Advance(15 * time.Second)
		}
	}
	r := e.record()
	equal(t, "error action", [3]any{r.History.ActionName, r.History.Status, r.Finished}, [3]any{"ErrorAction", "Completed", true})
	jobID := "/subscriptions/sub/resourceGroups/rg/providers/Microsoft.Scheduler/jobCollections/coll/jobs/bus"
	got := sub.ReceiveWhere(t, wait, func(m *amqp.Message) bool { return m.ApplicationProperties["x-ms-scheduler-jobid"] == jobID })
	equal(t, "error action message", [2]any{string(got.GetData()), got.ApplicationProperties["x-ms-scheduler-jobid"]},
		[2]any{"payload", jobID})
	_ = j
}
