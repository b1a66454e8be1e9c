package action_test

import (
	"strings"
	"testing"
	"time"

	"github.com/Azure/go-amqp"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/action"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/brokertest"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"
)

func busExecutor(rb *brokertest.RabbitMQ, endpoint string) *action.Executor {
	return action.New(action.Config{Timeout: 10 * time.Second, ServiceBus: action.ServiceBusConfig{
		Endpoint: endpoint, Auth: action.ServiceBusAuthPlain, QueueAddress: rb.QueueAddress, TopicAddress: rb.TopicAddress,
	}})
}

func busMessage(rb *brokertest.RabbitMQ, key, body string) wire.ServiceBusMessage {
	return wire.ServiceBusMessage{
		Namespace: "localbus", Message: body, TransportType: "AMQP",
		Authentication: &wire.ServiceBusAuthentication{Type: "SharedAccessKey", SasKeyName: rb.User, SasKey: key},
	}
}

// TestServiceBusQueueRabbitMQ sends to a queue of the machine's RabbitMQ over AMQP 1.0 and
// consumes what arrived: body, properties, header, annotations and application properties as
// Service Bus maps them. The second attempt reuses the pooled connection.
func TestServiceBusQueueRabbitMQ(t *testing.T) {
	rb := brokertest.UseRabbitMQ(t)
	queue, consumer := rb.NewQueue(t)
	e := busExecutor(rb, rb.Endpoint)
	defer e.Close()

	m := busMessage(rb, rb.Password, `{"hello":"bus"}`)
	m.BrokeredMessageProperties = &wire.ServiceBusBrokeredMessageProperties{
		ContentType: "application/json", CorrelationID: "corr-1", Label: "the-label", MessageID: "mid-1",
		ReplyTo: "replies", SessionID: "session-1", ReplyToSessionID: "reply-session", TimeToLive: "PT10M", To: "someone",
		ScheduledEnqueueTimeUtc: "2030-01-02T03:04:05Z", PartitionKey: "pk-1", ViaPartitionKey: "via-1",
	}
	m.CustomMessageProperties = map[string]string{"appname": "FromScheduler", "x-ms-execution-tag": "overridden?"}
	a := attempt("ServiceBusQueue", nil)
	a.MainAction(&wire.JobAction{Type: "ServiceBusQueue", ServiceBusQueueMessage: &wire.ServiceBusQueueMessage{ServiceBusMessage: m, QueueName: queue}})
	res := e.Do(t.Context(), a)
	want := "ServiceBusQueue action: message mid-1 accepted by " + queue + " (namespace localbus, address /amq/queue/" + queue + ")"
	if !res.Success || res.StatusCode != 0 || res.Message != want {
		t.Fatalf("result = %+v, want %q", res, want)
	}
	got := consumer.Receive(t, 10*time.Second)
	if string(got.GetData()) != `{"hello":"bus"}` {
		t.Fatalf("body %q", got.GetData())
	}
	p := got.Properties
	if p == nil || p.MessageID != "mid-1" || p.CorrelationID != "corr-1" || deref(p.Subject) != "the-label" || deref(p.ReplyTo) != "replies" ||
		deref(p.To) != "someone" || deref(p.GroupID) != "session-1" || deref(p.ReplyToGroupID) != "reply-session" || deref(p.ContentType) != "application/json" {
		t.Fatalf("properties %+v", p)
	}
	if got.Header == nil || got.Header.TTL != 10*time.Minute || !got.Header.Durable {
		t.Fatalf("header %+v", got.Header)
	}
	if at, ok := got.Annotations["x-opt-scheduled-enqueue-time"].(time.Time); !ok || !at.Equal(time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)) ||
		got.Annotations["x-opt-partition-key"] != "pk-1" || got.Annotations["x-opt-via-partition-key"] != "via-1" {
		t.Fatalf("annotations %#v", got.Annotations)
	}
	wantApp := map[string]any{
		"appname": "FromScheduler", "x-ms-execution-tag": "tag-1", "x-ms-client-request-id": "req-1",
		"x-ms-scheduler-expected-execution-time": "2026-05-04T10:30:00Z",
		"x-ms-scheduler-jobid":                   "/subscriptions/s/resourceGroups/rg/providers/Microsoft.Scheduler/jobCollections/c/jobs/j",
		"x-ms-scheduler-jobcollectionid":         "/subscriptions/s/resourceGroups/rg/providers/Microsoft.Scheduler/jobCollections/c",
		"x-ms-scheduler-execution-region":        "local",
	}
	if len(got.ApplicationProperties) != len(wantApp) {
		t.Fatalf("application properties %#v", got.ApplicationProperties)
	}
	for k, v := range wantApp {
		if got.ApplicationProperties[k] != v {
			t.Fatalf("application property %s = %#v, want %#v", k, got.ApplicationProperties[k], v)
		}
	}

	// Without brokered properties the message id is the attempt's client request id.
	m.BrokeredMessageProperties, m.CustomMessageProperties = nil, nil
	a.MainAction(&wire.JobAction{Type: "ServiceBusQueue", ServiceBusQueueMessage: &wire.ServiceBusQueueMessage{ServiceBusMessage: m, QueueName: queue}})
	if res := e.Do(t.Context(), a); !res.Success {
		t.Fatalf("second attempt: %+v", res)
	}
	if got := consumer.Receive(t, 10*time.Second); got.Properties.MessageID != "req-1" || got.Properties.Subject != nil {
		t.Fatalf("second message properties %+v", got.Properties)
	}
	if n := e.ServiceBusDials(); n != 1 {
		t.Fatalf("%d connections opened for two attempts on one namespace, want 1 (pooled)", n)
	}
}

// TestServiceBusTopicRabbitMQ sends to a topic (an exchange) and a subscriber receives it.
func TestServiceBusTopicRabbitMQ(t *testing.T) {
	rb := brokertest.UseRabbitMQ(t)
	sub := rb.Subscribe(t, "amq.fanout")
	e := busExecutor(rb, rb.Endpoint)
	defer e.Close()
	a := attempt("ServiceBusTopic", nil)
	a.ErrorAction(&wire.JobErrorAction{Type: "ServiceBusTopic", ServiceBusTopicMessage: &wire.ServiceBusTopicMessage{
		ServiceBusMessage: busMessage(rb, rb.Password, "to every subscriber"), TopicPath: "amq.fanout"}})
	if res := e.Do(t.Context(), a); !res.Success || res.Message != "ServiceBusTopic action: message req-1 accepted by amq.fanout (namespace localbus, address /exchange/amq.fanout)" {
		t.Fatalf("result = %+v", res)
	}
	got := sub.ReceiveWhere(t, 10*time.Second, func(m *amqp.Message) bool { return m.ApplicationProperties["x-ms-execution-tag"] == "tag-1" })
	if string(got.GetData()) != "to every subscriber" {
		t.Fatalf("received %q %#v", got.GetData(), got.ApplicationProperties)
	}
}

// TestServiceBusFailures: a wrong key, a missing queue and a broker that is down each fail the
// attempt with a message that says which, and never the key.
func TestServiceBusFailures(t *testing.T) {
	rb := brokertest.UseRabbitMQ(t)
	e := busExecutor(rb, rb.Endpoint)
	defer e.Close()
	send := func(e *action.Executor, key, queue string) action.Result {
		a := attempt("ServiceBusQueue", nil)
		a.MainAction(&wire.JobAction{Type: "ServiceBusQueue", ServiceBusQueueMessage: &wire.ServiceBusQueueMessage{
			ServiceBusMessage: busMessage(rb, key, "m"), QueueName: queue}})
		return e.Do(t.Context(), a)
	}
	queue, _ := rb.NewQueue(t)
	for _, tc := range []struct{ name, key, queue, endpoint, want string }{
		{"wrong key", "not-the-password-0451", queue, rb.Endpoint, `ServiceBusQueue action: connect to amqp://127.0.0.1:5672: the broker refused key "guest" (SASL PLAIN auth failed with code 0x1)`},
		{"broker down", rb.Password, queue, "amqp://127.0.0.1:1", "ServiceBusQueue action: connect to amqp://127.0.0.1:1: dial tcp 127.0.0.1:1: connect: connection refused"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := send(busExecutor(rb, tc.endpoint), tc.key, tc.queue)
			t.Logf("message: %s", res.Message)
			if res.Success || !strings.HasPrefix(res.Message, tc.want) || strings.Contains(res.Message, "0451") && tc.name == "wrong key" {
				t.Fatalf("result = %+v, want a failure starting %q", res, tc.want)
			}
		})
	}

	// A missing entity: the broker refuses the link. (RabbitMQ 3.x routes a queue address
	// through its default exchange and drops a message for a missing queue without a word, so the
	// missing entity here is a topic, an exchange; Service Bus and RabbitMQ 4 refuse both.)
	a := attempt("ServiceBusTopic", nil)
	a.MainAction(&wire.JobAction{Type: "ServiceBusTopic", ServiceBusTopicMessage: &wire.ServiceBusTopicMessage{
		ServiceBusMessage: busMessage(rb, rb.Password, "m"), TopicPath: "no-such-topic"}})
	res := e.Do(t.Context(), a)
	if res.Success || !strings.HasPrefix(res.Message, "ServiceBusTopic action: attach to /exchange/no-such-topic: amqp:not-found") {
		t.Fatalf("missing topic: %+v", res)
	}
	// After a refused link (RabbitMQ closes the connection with it) the next attempt works.
	if res := send(e, rb.Password, queue); !res.Success {
		t.Fatalf("after a refused link: %+v", res)
	}
}

func deref(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}

// TestSASToken checks the Service Bus token against one computed independently (Python's hmac,
// hashlib and urllib.parse.quote_plus over the same inputs).
func TestSASToken(t *testing.T) {
	got := action.SASToken("sb://contoso.servicebus.windows.net/q1", "RootManageSharedAccessKey", "c2VjcmV0LWtleQ==",
		time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	want := "SharedAccessSignature sr=sb%3A%2F%2Fcontoso.servicebus.windows.net%2Fq1&sig=vnR1rFROfHbTrW9ROv%2BE%2FVXleyTNm5XUPYmgqi2Emhg%3D&se=1893456000&skn=RootManageSharedAccessKey"
	if got != want {
		t.Fatalf("token\n%s\nwant\n%s", got, want)
	}
}

// TestServiceBusCBSAgainstABrokerWithoutIt: --service-bus-auth=cbs (the default, for Azure)
// against RabbitMQ, which has no $cbs node and refuses anonymous connections, fails with a
// message that says what to change.
func TestServiceBusCBSAgainstABrokerWithoutIt(t *testing.T) {
	rb := brokertest.UseRabbitMQ(t)
	queue, _ := rb.NewQueue(t)
	e := action.New(action.Config{Timeout: 10 * time.Second, ServiceBus: action.ServiceBusConfig{
		Endpoint: rb.Endpoint, QueueAddress: rb.QueueAddress, TopicAddress: rb.TopicAddress,
	}})
	defer e.Close()
	a := attempt("ServiceBusQueue", nil)
	a.MainAction(&wire.JobAction{Type: "ServiceBusQueue", ServiceBusQueueMessage: &wire.ServiceBusQueueMessage{
		ServiceBusMessage: busMessage(rb, rb.Password, "m"), QueueName: queue}})
	res := e.Do(t.Context(), a)
	t.Logf("message: %s", res.Message)
	if res.Success || !strings.HasPrefix(res.Message, "ServiceBusQueue action: ") ||
		!strings.Contains(res.Message, "--service-bus-auth=plain") {
		t.Fatalf("result = %+v", res)
	}
}
