package wire

import (
	"encoding/json"
	"testing"
)

// TestJobPropertiesClone: what the API writes into a stored job's copy to answer with it (every
// secret redacted, startTime and endTime reformatted, state and status set) leaves the stored job
// as it was.
func TestJobPropertiesClone(t *testing.T) {
	count := 3
	auth := func() *HTTPAuthentication {
		return &HTTPAuthentication{Type: "Basic", Username: "u", Password: "p", Pfx: "x", Secret: "s"}
	}
	orig := JobProperties{
		StartTime: "2026-01-01T00:00",
		Action: &JobAction{
			Type: "Https", Request: &HTTPRequest{URI: "https://a.test", Method: "GET", Authentication: auth(),
				Signing: &HTTPSigning{Secret: "whsec_a", PreviousSecret: "whsec_b"}},
			QueueMessage:           &StorageQueueMessage{SasToken: "sas"},
			ServiceBusQueueMessage: &ServiceBusQueueMessage{ServiceBusMessage: ServiceBusMessage{Authentication: &ServiceBusAuthentication{SasKey: "k1"}}},
			ServiceBusTopicMessage: &ServiceBusTopicMessage{ServiceBusMessage: ServiceBusMessage{Authentication: &ServiceBusAuthentication{SasKey: "k2"}}},
			ErrorAction: &JobErrorAction{
				Type: "Https", Request: &HTTPRequest{URI: "https://b.test", Method: "GET", Authentication: auth()},
				QueueMessage:           &StorageQueueMessage{SasToken: "sas2"},
				ServiceBusQueueMessage: &ServiceBusQueueMessage{ServiceBusMessage: ServiceBusMessage{Authentication: &ServiceBusAuthentication{SasKey: "k3"}}},
				ServiceBusTopicMessage: &ServiceBusTopicMessage{ServiceBusMessage: ServiceBusMessage{Authentication: &ServiceBusAuthentication{SasKey: "k4"}}},
			},
		},
		Recurrence: &JobRecurrence{Frequency: "Day", Count: &count, EndTime: "2027-01-01"},
		State:      "Enabled",
		Status:     &JobStatus{NextExecutionTime: "2026-01-01T00:00:00Z"},
	}
	before, err := json.Marshal(orig)
	if err != nil {
		t.Fatal(err)
	}
	c := orig.Clone()
	fields := c.Action.SecretFields()
	if len(fields) != 14 {
		t.Fatalf("%d secret fields, want 14", len(fields))
	}
	for _, f := range fields {
		*f = ""
	}
	c.StartTime = "2026-01-01T00:00:00Z"
	c.Recurrence.EndTime = "2027-01-01T00:00:00Z"
	c.State = "Disabled"
	c.Status.NextExecutionTime = ""
	after, err := json.Marshal(orig)
	if err != nil {
		t.Fatal(err)
	}
	if string(after) != string(before) {
		t.Errorf("the original changed:\n before %s\n after  %s", before, after)
	}
}
