package main

import (
	"bufio"
	"context"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/Azure/go-amqp"
	"github.com/google/uuid"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/action"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/brokertest"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"
)

// broker is where --action storagequeue and servicebusqueue deliver, read back by consumers that
// record each message's expected time (from its envelope or application properties) in the sink.
type broker struct {
	daemonArgs []string
	action     func() *wire.JobAction
	stop       func()
}

// startBroker starts the target of an action kind: Azurite (tools/azurite.sh) for storagequeue,
// a fresh queue on the machine's RabbitMQ for servicebusqueue; nil for http.
func startBroker(ctx context.Context, kind string, s *sink) (*broker, error) {
	switch kind {
	case "http":
		return nil, nil
	case "storagequeue":
		return startAzurite(ctx, s)
	case "servicebusqueue":
		return startRabbit(ctx, s)
	}
	return nil, fmt.Errorf("--action %q: want http, storagequeue or servicebusqueue", kind)
}

var azuriteListening = regexp.MustCompile(`successfully listens on (http://\S+)`)

func startAzurite(ctx context.Context, s *sink) (*broker, error) {
	out, err := exec.Command("tools/azurite.sh").Output()
	if err != nil {
		return nil, fmt.Errorf("tools/azurite.sh: %w", err)
	}
	bin := strings.TrimSpace(string(out))
	cctx, cancel := context.WithCancel(ctx)
	cmd := exec.CommandContext(cctx, bin, "--queueHost", "127.0.0.1", "--queuePort", "0", "--inMemoryPersistence", "--extentMemoryLimit", "512")
	pipe, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		cancel()
		return nil, err
	}
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pipe)
		for sc.Scan() {
			if m := azuriteListening.FindStringSubmatch(sc.Text()); m != nil {
				found <- m[1]
			}
		}
	}()
	var base string
	select {
	case base = <-found:
	case <-time.After(60 * time.Second):
		cancel()
		return nil, fmt.Errorf("azurite did not listen within 60 s")
	}
	queueURL := base + "/" + brokertest.AzuriteAccount + "/bench"
	sas := brokertest.AccountSAS("rwdlacup")
	if err := azuriteDo(http.MethodPut, queueURL+"?"+sas, nil); err != nil {
		cancel()
		return nil, err
	}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for cctx.Err() == nil {
				var list struct {
					Messages []struct {
						MessageText string `xml:"MessageText"`
					} `xml:"QueueMessage"`
				}
				if err := azuriteDo(http.MethodGet, queueURL+"/messages?numofmessages=32&visibilitytimeout=600&"+sas, &list); err != nil {
					time.Sleep(10 * time.Millisecond)
					continue
				}
				now := time.Now()
				for _, m := range list.Messages {
					env, err := action.ParseQueueEnvelope(m.MessageText)
					exp, perr := time.Parse(time.RFC3339, env.ExpectedExecutionTime)
					s.record(exp, now, err == nil && perr == nil)
				}
				if len(list.Messages) == 0 {
					time.Sleep(5 * time.Millisecond)
				}
			}
		})
	}
	return &broker{
		daemonArgs: []string{"--storage-queue-endpoint", base + "/{account}"},
		action: func() *wire.JobAction {
			return &wire.JobAction{Type: "StorageQueue", QueueMessage: &wire.StorageQueueMessage{
				StorageAccount: brokertest.AzuriteAccount, QueueName: "bench", SasToken: brokertest.AccountSAS("a"), Message: "bench"}}
		},
		stop: func() { cancel(); wg.Wait(); _ = cmd.Wait() },
	}, nil
}

func azuriteDo(method, u string, into any) error {
	req, err := http.NewRequest(method, u, nil)
	if err != nil {
		return err
	}
	req.Header.Set("x-ms-version", brokertest.StorageVersion)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode >= 300 {
		return fmt.Errorf("azurite %s: %s %s", method, resp.Status, b)
	}
	if into != nil {
		return xml.Unmarshal(b, into)
	}
	return nil
}

func startRabbit(ctx context.Context, s *sink) (*broker, error) {
	conn, err := amqp.Dial(ctx, "amqp://127.0.0.1:5672", &amqp.ConnOptions{SASLType: amqp.SASLTypePlain("guest", "guest")})
	if err != nil {
		return nil, fmt.Errorf("rabbitmq (run tools/rabbitmq.sh): %w", err)
	}
	sess, err := conn.NewSession(ctx, nil)
	if err != nil {
		return nil, err
	}
	queue := "schedbench-" + uuid.NewString()[:8]
	rcv, err := sess.NewReceiver(ctx, "/queue/"+queue, &amqp.ReceiverOptions{Credit: 2000})
	if err != nil {
		return nil, err
	}
	cctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			m, err := rcv.Receive(cctx, nil)
			if err != nil {
				return
			}
			now := time.Now()
			exp, perr := time.Parse(time.RFC3339, fmt.Sprint(m.ApplicationProperties[action.HeaderExpectedExecution]))
			s.record(exp, now, perr == nil)
			_ = rcv.AcceptMessage(cctx, m)
		}
	}()
	return &broker{
		daemonArgs: []string{"--service-bus-endpoint", "amqp://127.0.0.1:5672", "--service-bus-auth", "plain",
			"--service-bus-queue-address", "/amq/queue/{queue}"},
		action: func() *wire.JobAction {
			return &wire.JobAction{Type: "ServiceBusQueue", ServiceBusQueueMessage: &wire.ServiceBusQueueMessage{QueueName: queue,
				ServiceBusMessage: wire.ServiceBusMessage{Namespace: "benchbus", Message: "bench",
					Authentication: &wire.ServiceBusAuthentication{Type: "SharedAccessKey", SasKeyName: "guest", SasKey: "guest"}}}}
		},
		stop: func() {
			cancel()
			<-done
			_ = conn.Close()
			_ = exec.Command("rabbitmqctl", "delete_queue", queue).Run()
		},
	}, nil
}
