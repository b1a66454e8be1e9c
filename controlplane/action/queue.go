package action

import (
	"context"
	"encoding/base64"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// StorageQueueVersion is the Azure Storage REST version the queue action speaks.
const StorageQueueVersion = "2019-12-12"

// QueueEnvelope is what a StorageQueue action puts on the queue (as Azure Scheduler did): the
// job's message with the execution's metadata, as XML, base64-encoded in the queue message.
type QueueEnvelope struct {
	XMLName                  xml.Name `xml:"StorageQueueMessage"`
	ExecutionTag             string   `xml:"ExecutionTag"`
	ClientRequestID          string   `xml:"ClientRequestId"`
	ExpectedExecutionTime    string   `xml:"ExpectedExecutionTime"`
	SchedulerJobID           string   `xml:"SchedulerJobId"`
	SchedulerJobCollectionID string   `xml:"SchedulerJobCollectionId"`
	Region                   string   `xml:"Region"`
	Message                  string   `xml:"Message"`
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

// doQueue puts one message on an Azure Storage queue (Put Message, authorized by the job's SAS
// token). Success is the service's 201 Created.
func (e *Executor) doQueue(ctx context.Context, a Attempt) Result {
	q := a.QueueMessage
	if q == nil {
		return Result{Message: "StorageQueue action without a queueMessage"}
	}
	ctx, cancel := context.WithTimeout(ctx, e.timeout)
	defer cancel()

	env, err := xml.Marshal(QueueEnvelope{
		ExecutionTag: a.ExecutionTag, ClientRequestID: a.ClientRequestID,
		ExpectedExecutionTime: a.ExpectedExecution.UTC().Format(time.RFC3339), SchedulerJobID: a.JobID,
		SchedulerJobCollectionID: a.JobCollectionID, Region: a.Region, Message: q.Message,
	})
	if err != nil {
		return Result{Message: "StorageQueue action: " + err.Error()}
	}
	body, err := xml.Marshal(queueMessage{MessageText: base64.StdEncoding.EncodeToString(append([]byte(xml.Header), env...))})
	if err != nil {
		return Result{Message: "StorageQueue action: " + err.Error()}
	}
	u := e.QueueURL(q.StorageAccount, q.QueueName)
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
	resp, err := e.client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return Result{Message: fmt.Sprintf("StorageQueue action: the request timed out after %s", e.timeout)}
		}
		return Result{Message: "StorageQueue action: request failed: " + redactURLError(err)}
	}
	defer func() { _ = resp.Body.Close() }()
	head, _ := io.ReadAll(io.LimitReader(resp.Body, MaxMessageBody))
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 256<<10))
	msg := fmt.Sprintf("%s %s", resp.Proto, resp.Status)
	if len(head) > 0 {
		msg += "\n" + strings.ToValidUTF8(string(head), "\uFFFD")
	}
	return Result{Success: resp.StatusCode == http.StatusCreated, StatusCode: resp.StatusCode, Message: msg}
}
