package jobdef

import (
	"net/url"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/schedulerhq/terraform-provider-scheduler/internal/recurrence"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/retry"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"
)

// Limits of the message actions (Azure Storage's and Azure Service Bus's own rules).
const (
	// MaxServiceBusEntityChars bounds a Service Bus queue name or topic path.
	MaxServiceBusEntityChars = 260
	// MaxServiceBusIDChars bounds messageId, sessionId, partitionKey and the like.
	MaxServiceBusIDChars = 128
)

// validateQueueMessage checks a StorageQueue action's queueMessage. No message quotes the SAS
// token: problems are returned to the caller and may be logged.
func validateQueueMessage(ps *problems, path string, q *wire.StorageQueueMessage) {
	switch n := len(q.StorageAccount); {
	case n == 0:
		ps.add(path+".storageAccount", "is required")
	case n < 3 || n > 24 || strings.Trim(q.StorageAccount, "abcdefghijklmnopqrstuvwxyz0123456789") != "":
		ps.add(path+".storageAccount", "%q is not a storage account name: 3 to 24 lower-case letters and digits", q.StorageAccount)
	}
	switch n := len(q.QueueName); {
	case n == 0:
		ps.add(path+".queueName", "is required")
	case n < 3 || n > 63 || strings.Trim(q.QueueName, "abcdefghijklmnopqrstuvwxyz0123456789-") != "" ||
		q.QueueName[0] == '-' || q.QueueName[n-1] == '-' || strings.Contains(q.QueueName, "--"):
		ps.add(path+".queueName", "%q is not a queue name: 3 to 63 lower-case letters, digits and single hyphens, starting and ending with a letter or digit", q.QueueName)
	}
	if q.SasToken == "" {
		ps.add(path+".sasToken", "is required")
	} else if v, err := url.ParseQuery(strings.TrimPrefix(q.SasToken, "?")); err != nil || v.Get("sig") == "" {
		ps.add(path+".sasToken", "is not a shared access signature (a query string with sig=...)")
	}
	if q.Message == "" {
		ps.add(path+".message", "is required")
	}
}

// validateServiceBus checks what Service Bus queue and topic messages share; entity is the
// queue name or topic path and field its JSON name.
func validateServiceBus(ps *problems, path string, m *wire.ServiceBusMessage, field, entity string) {
	switch n := len(m.Namespace); {
	case n == 0:
		ps.add(path+".namespace", "is required")
	case n < 6 || n > 50 || !isLetter(m.Namespace[0]) || m.Namespace[n-1] == '-' ||
		strings.Trim(m.Namespace, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-") != "":
		ps.add(path+".namespace", "%q is not a Service Bus namespace: 6 to 50 letters, digits and hyphens, starting with a letter and not ending with a hyphen", m.Namespace)
	}
	switch n := utf8.RuneCountInString(entity); {
	case n == 0:
		ps.add(path+"."+field, "is required")
	case n > MaxServiceBusEntityChars:
		ps.add(path+"."+field, "is %d characters long; at most %d are allowed", n, MaxServiceBusEntityChars)
	case strings.ContainsFunc(entity, func(r rune) bool { return r < 0x20 || r == 0x7f || r == '\\' || r == '?' || r == '#' }):
		ps.add(path+"."+field, "%q contains a character a Service Bus entity name cannot have (control characters, \\, ?, #)", entity)
	}
	ps.enumOptional(path+".transportType", m.TransportType, transportTypes)
	ap := path + ".authentication"
	if a := m.Authentication; a == nil {
		ps.add(ap, "is required (type SharedAccessKey with sasKeyName and sasKey)")
	} else {
		if t, ok := Canonical(a.Type, sbAuthTypes); a.Type != "" && !ok {
			ps.add(ap+".type", "%q is not one of SharedAccessKey", a.Type)
		} else if t == "NotSpecified" {
			ps.add(ap+".type", "must be SharedAccessKey: the scheduler signs in to Service Bus with a shared access key")
		}
		if a.SasKeyName == "" {
			ps.add(ap+".sasKeyName", "is required")
		}
		if a.SasKey == "" {
			ps.add(ap+".sasKey", "is required")
		}
	}
	if b := m.BrokeredMessageProperties; b != nil {
		bp := path + ".brokeredMessageProperties"
		for _, f := range []struct{ name, v string }{
			{"messageId", b.MessageID}, {"sessionId", b.SessionID}, {"partitionKey", b.PartitionKey},
			{"viaPartitionKey", b.ViaPartitionKey}, {"replyToSessionId", b.ReplyToSessionID}, {"correlationId", b.CorrelationID},
		} {
			if n := utf8.RuneCountInString(f.v); n > MaxServiceBusIDChars {
				ps.add(bp+"."+f.name, "is %d characters long; at most %d are allowed", n, MaxServiceBusIDChars)
			}
		}
		if b.TimeToLive != "" {
			if d, err := retry.ParseInterval(b.TimeToLive); err != nil || d <= 0 {
				ps.add(bp+".timeToLive", "%q is not a positive duration (ISO 8601 such as PT10M, or d.hh:mm:ss)", b.TimeToLive)
			}
		}
		if b.ScheduledEnqueueTimeUtc != "" {
			if _, err := recurrence.ParseTime(b.ScheduledEnqueueTimeUtc, time.UTC); err != nil {
				ps.add(bp+".scheduledEnqueueTimeUtc", "%q is not an ISO 8601 date-time", b.ScheduledEnqueueTimeUtc)
			}
		}
	}
	names := make([]string, 0, len(m.CustomMessageProperties))
	for k := range m.CustomMessageProperties {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		if k == "" || strings.ContainsFunc(k, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
			ps.add(path+".customMessageProperties", "%q is not a property name (empty or control characters)", k)
		}
	}
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
