package action

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/tls"
	"encoding/base64"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/Azure/go-amqp"
	"github.com/google/uuid"

	"github.com/schedulerhq/terraform-provider-scheduler/internal/recurrence"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/retry"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"
)

// Service Bus defaults: Azure's namespaces, authenticated with SAS tokens on $cbs, entities
// addressed by their names.
const (
	DefaultServiceBusEndpoint     = "amqps://{namespace}.servicebus.windows.net"
	DefaultServiceBusQueueAddress = "{queue}"
	DefaultServiceBusTopicAddress = "{topic}"
	ServiceBusAuthCBS             = "cbs"
	ServiceBusAuthPlain           = "plain"
	// cbsTokenLifetime is how long a SAS token put on $cbs is valid; it is renewed when less than
	// a quarter is left.
	cbsTokenLifetime = time.Hour
)

// ServiceBusConfig says how Service Bus actions reach a namespace over AMQP 1.0.
type ServiceBusConfig struct {
	// Endpoint is the namespace's AMQP address, "{namespace}" standing for its name ("":
	// DefaultServiceBusEndpoint; RabbitMQ: amqp://127.0.0.1:5672).
	Endpoint string
	// Auth is "cbs" (a SAS token signed with the job's key and put on the $cbs node, as Azure
	// Service Bus wants; the connection itself is anonymous) or "plain" (SASL PLAIN with the key
	// name and the key as user name and password, for brokers without CBS). "": cbs.
	Auth string
	// QueueAddress and TopicAddress turn a queue name ("{queue}") or a topic path ("{topic}")
	// into the AMQP target address ("": the name itself, as on Service Bus; RabbitMQ 3.x:
	// "/amq/queue/{queue}" and "/exchange/{topic}"; RabbitMQ 4.x: "/queues/{queue}" and
	// "/exchanges/{topic}").
	QueueAddress string
	TopicAddress string
}

func (c *ServiceBusConfig) defaults() {
	if c.Endpoint == "" {
		c.Endpoint = DefaultServiceBusEndpoint
	}
	c.Endpoint = strings.TrimRight(c.Endpoint, "/")
	if c.Auth == "" {
		c.Auth = ServiceBusAuthCBS
	}
	if c.QueueAddress == "" {
		c.QueueAddress = DefaultServiceBusQueueAddress
	}
	if c.TopicAddress == "" {
		c.TopicAddress = DefaultServiceBusTopicAddress
	}
}

// Check reports a configuration that cannot work, naming the setting.
func (c ServiceBusConfig) Check() error {
	c.defaults()
	if err := CheckEndpoint(c.Endpoint, "{namespace}", "amqp", "amqps"); err != nil {
		return fmt.Errorf("service bus endpoint: %w", err)
	}
	if c.Auth != ServiceBusAuthCBS && c.Auth != ServiceBusAuthPlain {
		return fmt.Errorf("service bus auth %q: want cbs or plain", c.Auth)
	}
	if !strings.Contains(c.QueueAddress, "{queue}") {
		return fmt.Errorf("service bus queue address %q: it must contain {queue}", c.QueueAddress)
	}
	if !strings.Contains(c.TopicAddress, "{topic}") {
		return fmt.Errorf("service bus topic address %q: it must contain {topic}", c.TopicAddress)
	}
	return nil
}

// serviceBusRunner sends one message to a Service Bus queue or topic. Success is the broker's
// acceptance of the message (an unsettled transfer answered with accepted).
type serviceBusRunner struct {
	pool  *busPool
	topic bool
}

func (s serviceBusRunner) run(ctx context.Context, a *Attempt) Result {
	var m *wire.ServiceBusMessage
	var entity, address, what string
	cfg := s.pool.cfg
	if s.topic {
		what = "ServiceBusTopic action"
		if t := a.Action.ServiceBusTopicMessage; t != nil {
			m, entity = &t.ServiceBusMessage, t.TopicPath
			address = strings.ReplaceAll(cfg.TopicAddress, "{topic}", entity)
		}
	} else {
		what = "ServiceBusQueue action"
		if q := a.Action.ServiceBusQueueMessage; q != nil {
			m, entity = &q.ServiceBusMessage, q.QueueName
			address = strings.ReplaceAll(cfg.QueueAddress, "{queue}", entity)
		}
	}
	if m == nil {
		return Result{Message: what + " without its message"}
	}
	if m.Authentication == nil || m.Authentication.SasKeyName == "" || m.Authentication.SasKey == "" {
		return Result{Message: what + ": the job has no shared access key (authentication.sasKeyName and sasKey)"}
	}
	msg, err := busMessage(m, a, s.pool.now())
	if err != nil {
		return Result{Message: what + ": " + err.Error()}
	}
	if err := s.pool.send(ctx, m.Namespace, m.Authentication, entity, address, msg); err != nil {
		if deadlinePassed(ctx) {
			return Result{Message: fmt.Sprintf("%s (namespace %s: %s)", timedOut(what, a.timeout), m.Namespace, err)}
		}
		return Result{Message: fmt.Sprintf("%s: %s", what, err)}
	}
	return Result{Success: true, Message: fmt.Sprintf("%s: message %v accepted by %s (namespace %s, address %s)",
		what, msg.Properties.MessageID, entity, m.Namespace, address)}
}

// busMessage builds the AMQP message of an attempt: the job's message as the body (one data
// section, UTF-8), the brokered message properties where Service Bus maps them (properties,
// header, message annotations), the custom properties and the execution's metadata as
// application properties.
func busMessage(m *wire.ServiceBusMessage, a *Attempt, now time.Time) (*amqp.Message, error) {
	msg := &amqp.Message{
		Data:                  [][]byte{[]byte(m.Message)},
		Header:                &amqp.MessageHeader{Durable: true},
		Properties:            &amqp.MessageProperties{MessageID: a.ClientRequestID},
		ApplicationProperties: make(map[string]any, len(m.CustomMessageProperties)+6),
	}
	str := func(s string) *string {
		if s == "" {
			return nil
		}
		return &s
	}
	if b := m.BrokeredMessageProperties; b != nil {
		p := msg.Properties
		if b.MessageID != "" {
			p.MessageID = b.MessageID
		}
		if b.CorrelationID != "" {
			p.CorrelationID = b.CorrelationID
		}
		p.Subject, p.ReplyTo, p.To = str(b.Label), str(b.ReplyTo), str(b.To)
		p.GroupID, p.ReplyToGroupID = str(b.SessionID), str(b.ReplyToSessionID)
		p.ContentType = str(b.ContentType)
		if b.TimeToLive != "" {
			ttl, err := retry.ParseInterval(b.TimeToLive)
			if err != nil || ttl <= 0 {
				return nil, fmt.Errorf("brokeredMessageProperties.timeToLive %q is not a positive duration", b.TimeToLive)
			}
			msg.Header.TTL = ttl
			created, expires := now.UTC(), now.UTC().Add(ttl)
			p.CreationTime, p.AbsoluteExpiryTime = &created, &expires
		}
		ann := amqp.Annotations{}
		if b.ScheduledEnqueueTimeUtc != "" {
			at, err := recurrence.ParseTime(b.ScheduledEnqueueTimeUtc, time.UTC)
			if err != nil {
				return nil, fmt.Errorf("brokeredMessageProperties.scheduledEnqueueTimeUtc: %w", err)
			}
			ann["x-opt-scheduled-enqueue-time"] = at.UTC()
		}
		if b.PartitionKey != "" {
			ann["x-opt-partition-key"] = b.PartitionKey
		}
		if b.ViaPartitionKey != "" {
			ann["x-opt-via-partition-key"] = b.ViaPartitionKey
		}
		if len(ann) > 0 {
			msg.Annotations = ann
		}
	}
	for k, v := range m.CustomMessageProperties {
		msg.ApplicationProperties[k] = v
	}
	// The execution's metadata, named as the HTTP action's headers; they win over custom ones.
	msg.ApplicationProperties[HeaderExecutionTag] = a.ExecutionTag
	msg.ApplicationProperties[HeaderClientRequestID] = a.ClientRequestID
	msg.ApplicationProperties[HeaderExpectedExecution] = a.ExpectedExecution.UTC().Format(time.RFC3339)
	msg.ApplicationProperties[HeaderJobID] = a.JobID
	msg.ApplicationProperties[HeaderJobCollectionID] = a.JobCollectionID
	msg.ApplicationProperties[HeaderExecutionRegion] = a.Region
	for k, v := range a.Failure.fields() {
		msg.ApplicationProperties[k] = v
	}
	return msg, nil
}

// busPool keeps one AMQP connection per namespace and key (and one sender per address on it),
// reused across attempts; a connection that fails is dropped and dialled again by the next
// attempt.
type busPool struct {
	cfg     ServiceBusConfig
	tls     *tls.Config
	timeout time.Duration
	now     func() time.Time

	dials atomic.Int64 // connections opened, for tests and figures

	mu    sync.Mutex
	conns map[string]*busConn
}

type busConn struct {
	mu      sync.Mutex // held while dialling, attaching and putting tokens
	conn    *amqp.Conn
	sess    *amqp.Session
	senders map[string]*amqp.Sender
	tokens  map[string]time.Time // CBS audience → token expiry
	cbsSend *amqp.Sender
	cbsRecv *amqp.Receiver
	cbsAddr string
}

func newBusPool(cfg ServiceBusConfig, tc *tls.Config, timeout time.Duration, now func() time.Time) *busPool {
	cfg.defaults()
	return &busPool{cfg: cfg, tls: tc, timeout: timeout, now: now, conns: map[string]*busConn{}}
}

// Close closes every pooled connection.
func (p *busPool) Close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for k, c := range p.conns {
		if c.conn != nil {
			_ = c.conn.Close()
		}
		delete(p.conns, k)
	}
}

func (p *busPool) entry(key string) *busConn {
	p.mu.Lock()
	defer p.mu.Unlock()
	c := p.conns[key]
	if c == nil {
		c = &busConn{}
		p.conns[key] = c
	}
	return c
}

// drop closes a connection after an error that may have broken it.
func (p *busPool) drop(c *busConn) {
	if c.conn != nil {
		_ = c.conn.Close()
	}
	c.conn, c.sess, c.senders, c.tokens, c.cbsSend, c.cbsRecv = nil, nil, nil, nil, nil, nil
}

func (p *busPool) send(ctx context.Context, namespace string, auth *wire.ServiceBusAuthentication, entity, address string, msg *amqp.Message) error {
	endpoint := strings.ReplaceAll(p.cfg.Endpoint, "{namespace}", namespace)
	keyHash := sha256.Sum256([]byte(auth.SasKey))
	c := p.entry(endpoint + "\x00" + auth.SasKeyName + "\x00" + string(keyHash[:]))

	c.mu.Lock()
	snd, err := p.sender(ctx, c, endpoint, auth, entity, address)
	c.mu.Unlock()
	if err != nil {
		return err
	}
	if err := sendAccepted(ctx, snd, msg); err != nil {
		c.mu.Lock()
		var le *amqp.LinkError
		if errors.As(err, &le) && c.senders[address] == snd {
			delete(c.senders, address)
			_ = snd.Close(context.Background())
		} else if c.conn != nil && !errors.As(err, &le) {
			p.drop(c)
		}
		c.mu.Unlock()
		return fmt.Errorf("send to %s: %s", address, amqpError(err))
	}
	return nil
}

// errNotAccepted is a message the broker settled without accepting it.
type errNotAccepted struct{ state string }

func (e errNotAccepted) Error() string {
	return "the broker " + e.state + " the message: it was not delivered (is there a queue or subscription to take it?)"
}

// sendAccepted sends msg unsettled and waits for the broker's outcome: accepted is a success;
// rejected, released and modified are failures (Sender.Send counts the last two as sent).
func sendAccepted(ctx context.Context, snd *amqp.Sender, msg *amqp.Message) error {
	receipt, err := snd.SendWithReceipt(ctx, msg, nil)
	if err != nil {
		return err
	}
	state, err := receipt.Wait(ctx)
	if err != nil {
		return err
	}
	switch st := state.(type) {
	case *amqp.StateAccepted:
		return nil
	case *amqp.StateRejected:
		if st.Error != nil {
			return st.Error
		}
		return errNotAccepted{"rejected"}
	case *amqp.StateReleased:
		return errNotAccepted{"released"}
	case *amqp.StateModified:
		return errNotAccepted{"modified"}
	default:
		return errNotAccepted{fmt.Sprintf("settled (%T)", state)}
	}
}

// sender returns the pooled sender of an address, dialling, authorizing and attaching as needed.
// c.mu is held.
func (p *busPool) sender(ctx context.Context, c *busConn, endpoint string, auth *wire.ServiceBusAuthentication, entity, address string) (*amqp.Sender, error) {
	if c.conn != nil {
		select {
		case <-c.conn.Done():
			p.drop(c)
		default:
		}
	}
	if c.conn == nil {
		opts := &amqp.ConnOptions{SASLType: amqp.SASLTypeAnonymous(), IdleTimeout: 0, TLSConfig: p.tls}
		if p.cfg.Auth == ServiceBusAuthPlain {
			opts.SASLType = amqp.SASLTypePlain(auth.SasKeyName, auth.SasKey)
		}
		if u, err := url.Parse(endpoint); err == nil {
			opts.HostName = u.Hostname()
		}
		p.dials.Add(1)
		conn, err := amqp.Dial(ctx, endpoint, opts)
		if err != nil {
			msg := strings.TrimSuffix(amqpError(err), ": ")
			switch {
			case strings.Contains(msg, "SASL") && p.cfg.Auth == ServiceBusAuthPlain:
				msg = fmt.Sprintf("the broker refused key %q (%s)", auth.SasKeyName, msg)
			case strings.Contains(msg, "SASL"):
				msg = fmt.Sprintf("the broker refused an anonymous connection (%s): --service-bus-auth=cbs is for Azure Service Bus; a broker without CBS needs plain", msg)
			}
			return nil, fmt.Errorf("connect to %s: %s", endpoint, msg)
		}
		sess, err := conn.NewSession(ctx, nil)
		if err != nil {
			_ = conn.Close()
			return nil, fmt.Errorf("begin a session on %s: %s", endpoint, amqpError(err))
		}
		c.conn, c.sess, c.senders, c.tokens = conn, sess, map[string]*amqp.Sender{}, map[string]time.Time{}
	}
	if p.cfg.Auth == ServiceBusAuthCBS {
		audience := serviceBusAudience(endpoint, entity)
		if exp, ok := c.tokens[audience]; !ok || p.now().After(exp.Add(-cbsTokenLifetime/4)) {
			exp, err := p.putToken(ctx, c, audience, auth)
			if err != nil {
				return nil, err
			}
			c.tokens[audience] = exp
		}
	}
	if s := c.senders[address]; s != nil {
		return s, nil
	}
	s, err := c.sess.NewSender(ctx, address, nil)
	if err != nil {
		var le *amqp.LinkError
		if !errors.As(err, &le) {
			p.drop(c)
		}
		return nil, fmt.Errorf("attach to %s: %s", address, amqpError(err))
	}
	c.senders[address] = s
	return s, nil
}

// serviceBusAudience is the resource a CBS token is for: the entity's URL on the namespace.
func serviceBusAudience(endpoint, entity string) string {
	host := endpoint
	if u, err := url.Parse(endpoint); err == nil {
		host = u.Host
	}
	return "sb://" + host + "/" + strings.TrimLeft(entity, "/")
}

// SASToken returns a Service Bus shared access signature for resource, valid until expiry:
// "SharedAccessSignature sr=...&sig=...&se=...&skn=...".
func SASToken(resource, keyName, key string, expiry time.Time) string {
	sr := url.QueryEscape(strings.ToLower(resource))
	se := strconv.FormatInt(expiry.Unix(), 10)
	mac := hmac.New(sha256.New, []byte(key))
	mac.Write([]byte(sr + "\n" + se))
	sig := base64.StdEncoding.EncodeToString(mac.Sum(nil))
	return "SharedAccessSignature sr=" + sr + "&sig=" + url.QueryEscape(sig) + "&se=" + se + "&skn=" + url.QueryEscape(keyName)
}

// putToken authorizes the connection for audience: a SAS token put on the $cbs node (AMQP
// claims-based security, as Service Bus defines it). c.mu is held.
func (p *busPool) putToken(ctx context.Context, c *busConn, audience string, auth *wire.ServiceBusAuthentication) (time.Time, error) {
	if c.cbsSend == nil {
		c.cbsAddr = "cbs-reply-" + uuid.NewString()
		rcv, err := c.sess.NewReceiver(ctx, "$cbs", &amqp.ReceiverOptions{TargetAddress: c.cbsAddr, Credit: 16})
		if err != nil {
			return time.Time{}, fmt.Errorf("open the $cbs node (is --service-bus-auth=cbs right for this broker?): %s", amqpError(err))
		}
		snd, err := c.sess.NewSender(ctx, "$cbs", nil)
		if err != nil {
			_ = rcv.Close(context.Background())
			return time.Time{}, fmt.Errorf("open the $cbs node (is --service-bus-auth=cbs right for this broker?): %s", amqpError(err))
		}
		c.cbsSend, c.cbsRecv = snd, rcv
	}
	expiry := p.now().Add(cbsTokenLifetime)
	id := uuid.NewString()
	req := &amqp.Message{
		Value:      SASToken(audience, auth.SasKeyName, auth.SasKey, expiry),
		Properties: &amqp.MessageProperties{MessageID: id, ReplyTo: &c.cbsAddr},
		ApplicationProperties: map[string]any{
			"operation": "put-token", "type": "servicebus.windows.net:sastoken", "name": audience,
			"expiration": expiry.UTC(),
		},
	}
	if err := c.cbsSend.Send(ctx, req, nil); err != nil {
		p.drop(c)
		return time.Time{}, fmt.Errorf("put a token on $cbs: %s", amqpError(err))
	}
	for {
		res, err := c.cbsRecv.Receive(ctx, nil)
		if err != nil {
			p.drop(c)
			if ctx.Err() != nil {
				return time.Time{}, fmt.Errorf("put a token on $cbs: no answer within %s: a broker without CBS needs --service-bus-auth=plain", p.timeout)
			}
			return time.Time{}, fmt.Errorf("put a token on $cbs: %s", amqpError(err))
		}
		_ = c.cbsRecv.AcceptMessage(ctx, res)
		if res.Properties == nil || res.Properties.CorrelationID != id {
			continue
		}
		code := fmt.Sprint(res.ApplicationProperties["status-code"])
		if code != "200" && code != "202" {
			return time.Time{}, fmt.Errorf("the namespace refused the token for %s (key %s): %s %v", audience, auth.SasKeyName,
				code, res.ApplicationProperties["status-description"])
		}
		return expiry, nil
	}
}

// amqpError describes an AMQP failure with the peer's condition and description when there is
// one.
func amqpError(err error) string {
	var remote *amqp.Error
	var le *amqp.LinkError
	var se *amqp.SessionError
	var ce *amqp.ConnError
	switch {
	case errors.As(err, &le) && le.RemoteErr != nil:
		remote = le.RemoteErr
	case errors.As(err, &se) && se.RemoteErr != nil:
		remote = se.RemoteErr
	case errors.As(err, &ce) && ce.RemoteErr != nil:
		remote = ce.RemoteErr
	case errors.As(err, &remote):
	}
	if remote != nil {
		s := string(remote.Condition)
		if remote.Description != "" {
			s += ": " + remote.Description
		}
		return s
	}
	return err.Error()
}

// ServiceBusDials is how many AMQP connections the executor has opened (pooled connections are
// reused, so this stays at one per namespace and key while they are healthy).
func (e *Executor) ServiceBusDials() int64 { return e.bus.dials.Load() }
