package brokertest

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/Azure/go-amqp"
	"github.com/google/uuid"
)

// RabbitMQ is the machine's RabbitMQ (127.0.0.1:5672, guest/guest) speaking AMQP 1.0.
type RabbitMQ struct {
	Version string
	// Endpoint is the --service-bus-endpoint that reaches it.
	Endpoint string
	// QueueAddress and TopicAddress are the --service-bus-queue-address and
	// --service-bus-topic-address templates of its version.
	QueueAddress, TopicAddress string
	// User and Password are the broker's credentials: the sasKeyName and sasKey of a job, with
	// --service-bus-auth=plain.
	User, Password string
}

// UseRabbitMQ makes sure the local RabbitMQ speaks AMQP 1.0 (when it does not yet,
// tools/rabbitmq.sh enables the plugin of a 3.x broker) and returns how to reach it.
func UseRabbitMQ(t testing.TB) *RabbitMQ {
	t.Helper()
	r := &RabbitMQ{Endpoint: "amqp://127.0.0.1:5672", User: "guest", Password: "guest"}
	conn, err := r.dial(t.Context())
	if err != nil {
		tool(t, "rabbitmq.sh")
		// The plugin may take a moment to listen after being enabled.
		deadline := time.Now().Add(30 * time.Second)
		for err != nil {
			if time.Now().After(deadline) {
				t.Fatalf("rabbitmq does not accept AMQP 1.0 on 127.0.0.1:5672: %v", err)
			}
			time.Sleep(200 * time.Millisecond)
			conn, err = r.dial(t.Context())
		}
	}
	r.Version = fmt.Sprint(conn.Properties()["version"])
	_ = conn.Close()
	if strings.HasPrefix(r.Version, "3.") {
		r.QueueAddress, r.TopicAddress = "/amq/queue/{queue}", "/exchange/{topic}"
	} else {
		r.QueueAddress, r.TopicAddress = "/queues/{queue}", "/exchanges/{topic}"
	}
	return r
}

func (r *RabbitMQ) dial(ctx context.Context) (*amqp.Conn, error) {
	return amqp.Dial(ctx, r.Endpoint, &amqp.ConnOptions{SASLType: amqp.SASLTypePlain(r.User, r.Password)})
}

// Consumer receives what the daemon sent.
type Consumer struct {
	conn *amqp.Conn
	rcv  *amqp.Receiver
}

// NewQueue declares a queue with a fresh name (deleted with the test) and returns its name
// and a consumer of it.
func (r *RabbitMQ) NewQueue(t testing.TB) (string, *Consumer) {
	t.Helper()
	if !strings.HasPrefix(r.Version, "3.") {
		t.Fatalf("brokertest: declaring queues on RabbitMQ %s is not implemented (3.x declares on attach to /queue/NAME)", r.Version)
	}
	name := "sched-" + uuid.NewString()[:8]
	c := r.consume(t, "/queue/"+name)
	t.Cleanup(func() { _ = exec.Command("rabbitmqctl", "delete_queue", name).Run() })
	return name, c
}

// Subscribe binds a fresh queue to an exchange (a topic) and returns a consumer of it.
func (r *RabbitMQ) Subscribe(t testing.TB, exchange string) *Consumer {
	t.Helper()
	return r.consume(t, "/exchange/"+exchange+"/#")
}

func (r *RabbitMQ) consume(t testing.TB, source string) *Consumer {
	t.Helper()
	conn, err := r.dial(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	sess, err := conn.NewSession(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	rcv, err := sess.NewReceiver(t.Context(), source, &amqp.ReceiverOptions{Credit: 100})
	if err != nil {
		t.Fatalf("attach a receiver to %s: %v", source, err)
	}
	c := &Consumer{conn: conn, rcv: rcv}
	t.Cleanup(func() { _ = conn.Close() })
	return c
}

// Receive waits for the next message (failing the test after timeout) and accepts it.
func (c *Consumer) Receive(t testing.TB, timeout time.Duration) *amqp.Message {
	t.Helper()
	return c.ReceiveWhere(t, timeout, func(*amqp.Message) bool { return true })
}

// ReceiveWhere waits for the next message that mine says is the test's (failing the test after
// timeout), accepting and skipping the others. A consumer of a shared exchange (amq.fanout)
// also receives what tests of other packages, run at the same time, publish to it.
func (c *Consumer) ReceiveWhere(t testing.TB, timeout time.Duration, mine func(*amqp.Message) bool) *amqp.Message {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), timeout)
	defer cancel()
	for {
		m, err := c.rcv.Receive(ctx, nil)
		if err != nil {
			t.Fatalf("no message within %s: %v", timeout, err)
		}
		if err := c.rcv.AcceptMessage(ctx, m); err != nil {
			t.Fatal(err)
		}
		if mine(m) {
			return m
		}
	}
}
