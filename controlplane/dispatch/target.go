package dispatch

import (
	"net"
	"net/url"
	"strings"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/action"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"
)

// target is what the per-target concurrency limit counts attempts by: the scheme, host and port
// an attempt connects to ("https://example.com:443"), "sb://namespace" for Service Bus, and ""
// when it is not known (a job not loaded yet, an action without an address).
func (ex *Executor) target(p wire.JobProperties, phase string) string {
	return targetOf(ex.act, p, phase)
}

// targetOf is the target of an attempt of p's phase (act tells where storage queues are).
func targetOf(act *action.Executor, p wire.JobProperties, phase string) string {
	a := p.Action
	if a == nil {
		return ""
	}
	typ, req, queue, sbq, sbt := a.Type, a.Request, a.QueueMessage, a.ServiceBusQueueMessage, a.ServiceBusTopicMessage
	if phase == store.ActionError {
		e := a.ErrorAction
		if e == nil {
			return ""
		}
		typ, req, queue, sbq, sbt = e.Type, e.Request, e.QueueMessage, e.ServiceBusQueueMessage, e.ServiceBusTopicMessage
	}
	switch strings.ToLower(typ) {
	case "http", "https":
		if req != nil {
			return hostKey(req.URI)
		}
	case "storagequeue":
		if queue != nil {
			return hostKey(act.QueueURL(queue.StorageAccount, "q"))
		}
	case "servicebusqueue":
		if sbq != nil {
			return "sb://" + strings.ToLower(sbq.Namespace)
		}
	case "servicebustopic":
		if sbt != nil {
			return "sb://" + strings.ToLower(sbt.Namespace)
		}
	}
	return ""
}

// hostKey is "scheme://host:port" of an absolute URL, the port made explicit; "" when the URL
// cannot be parsed.
func hostKey(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return ""
	}
	scheme := strings.ToLower(u.Scheme)
	port := u.Port()
	if port == "" {
		switch scheme {
		case "https":
			port = "443"
		default:
			port = "80"
		}
	}
	return scheme + "://" + net.JoinHostPort(strings.ToLower(u.Hostname()), port)
}
