package action

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/xml"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// StorageQueueVersion is the Azure Storage REST version the queue action speaks.
const StorageQueueVersion = "2019-12-12"

// QueueEnvelopeHeader is the XML declaration of the envelope. It names UTF-16, as the one Azure
// Scheduler put on queues did (.NET's XmlSerializer writing to a string); the bytes, like
// Azure's once in the queue, are UTF-8.
const QueueEnvelopeHeader = `<?xml version="1.0" encoding="utf-16"?>` + "\n"

// QueueEnvelope is what a StorageQueue action puts on the queue, as Azure Scheduler did: the
// job's message with the execution's metadata, as XML (QueueEnvelopeHeader first), base64-encoded
// in the queue message's text.
type QueueEnvelope struct {
	XMLName                  xml.Name `xml:"StorageQueueMessage"`
	XSD                      string   `xml:"xmlns:xsd,attr"`
	XSI                      string   `xml:"xmlns:xsi,attr"`
	ExecutionTag             string   `xml:"ExecutionTag"`
	ClientRequestID          string   `xml:"ClientRequestId"`
	ExpectedExecutionTime    string   `xml:"ExpectedExecutionTime"`
	SchedulerJobID           string   `xml:"SchedulerJobId"`
	SchedulerJobCollectionID string   `xml:"SchedulerJobCollectionId"`
	Region                   string   `xml:"Region"`
	Message                  string   `xml:"Message"`
	// What failed, in an error action's message only (extension; see Failure).
	FailedStatus string `xml:"FailedStatus,omitempty"`
	FailedReason string `xml:"FailedReason,omitempty"`
	Attempts     string `xml:"Attempts,omitempty"`
}

// queueMessage is the Put Message request body.
type queueMessage struct {
	XMLName     xml.Name `xml:"QueueMessage"`
	MessageText string   `xml:"MessageText"`
}

// QueueURL returns the Put Message URL of a queue (without the SAS token).
func (e *Executor) QueueURL(account, queue string) string {
	return strings.ReplaceAll(e.queues, "{account}", url.PathEscape(account)) + "/" + url.PathEscape(queue) + "/messages"
}

// storageQueueRunner puts one message on an Azure Storage queue (Put Message, authorized by the
// job's SAS token). Success is the service's 201 Created.
type storageQueueRunner struct{ e *Executor }

func (s storageQueueRunner) run(ctx context.Context, a *Attempt) Result {
	q := a.Action.QueueMessage
	if q == nil {
		return Result{Message: "StorageQueue action without a queueMessage"}
	}
	ev := QueueEnvelope{
		XSD: "http://www.w3.org/2001/XMLSchema", XSI: "http://www.w3.org/2001/XMLSchema-instance",
		ExecutionTag: a.ExecutionTag, ClientRequestID: a.ClientRequestID,
		ExpectedExecutionTime: a.ExpectedExecution.UTC().Format(time.RFC3339), SchedulerJobID: a.JobID,
		SchedulerJobCollectionID: a.JobCollectionID, Region: a.Region, Message: q.Message,
	}
	if f := a.Failure.fields(); f != nil {
		ev.FailedStatus, ev.FailedReason, ev.Attempts = f[HeaderFailedStatus], f[HeaderFailedReason], f[HeaderAttempts]
	}
	env, err := xml.MarshalIndent(ev, "", "  ")
	if err != nil {
		return Result{Message: "StorageQueue action: " + err.Error()}
	}
	body, err := xml.Marshal(queueMessage{MessageText: base64.StdEncoding.EncodeToString(append([]byte(QueueEnvelopeHeader), env...))})
	if err != nil {
		return Result{Message: "StorageQueue action: " + err.Error()}
	}
	u := s.e.QueueURL(q.StorageAccount, q.QueueName)
	if sas := strings.TrimPrefix(q.SasToken, "?"); sas != "" {
		u += "?" + sas
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, strings.NewReader(string(body)))
	if err != nil {
		return Result{Message: "StorageQueue action: invalid queue address: " + redactURLError(err)}
	}
	req.Header.Set("Content-Type", "application/xml")
	req.Header.Set("x-ms-version", StorageQueueVersion)
	req.Header.Set("x-ms-client-request-id", a.ClientRequestID)
	return send(ctx, s.e.client, req, "StorageQueue action", a.timeout, func(st int) bool { return st == http.StatusCreated }, secretValues(a.Action))
}

// ParseQueueEnvelope decodes a queue message's text (base64 of the XML envelope) as a Go
// consumer would: the XML declaration, which names UTF-16 for compatibility, is skipped.
func ParseQueueEnvelope(text string) (QueueEnvelope, error) {
	raw, err := base64.StdEncoding.DecodeString(text)
	if err != nil {
		return QueueEnvelope{}, fmt.Errorf("queue message text is not base64: %w", err)
	}
	raw = bytes.TrimPrefix(raw, []byte(QueueEnvelopeHeader))
	var env QueueEnvelope
	if err := xml.Unmarshal(raw, &env); err != nil {
		return QueueEnvelope{}, fmt.Errorf("queue message envelope: %w", err)
	}
	env.XMLName = xml.Name{}
	return env, nil
}
