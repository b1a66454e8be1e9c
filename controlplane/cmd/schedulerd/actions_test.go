package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/action"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/brokertest"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/testlog"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"
)

// daemon is a schedulerd serving in this process for one test.
type daemon struct {
	t     *testing.T
	base  string
	token string
	data  string
	logs  *testlog.Buffer
}

// startDaemon runs `schedulerd serve` in-process on a free port with extra flags; it stops with
// the test.
func startDaemon(t *testing.T, flags ...string) *daemon {
	t.Helper()
	data := filepath.Join(t.TempDir(), "data")
	ctx, cancel := context.WithCancel(t.Context())
	logs := &testlog.Buffer{}
	done := make(chan int, 1)
	args := append([]string{"serve", "--listen", "127.0.0.1:0", "--data", data}, flags...)
	go func() { done <- run(ctx, args, nil, io.Discard, logs) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			t.Errorf("the daemon did not stop; log:\n%s", logs.String())
		}
	})
	addr := waitForFile(t, filepath.Join(data, "listen-address"), logs)
	token := waitForFile(t, filepath.Join(data, "admin-token"), logs)
	d := &daemon{t: t, base: "http://" + addr, token: token, data: data, logs: logs}
	d.waitReady()
	d.call(http.MethodPut, "/subscriptions/s/resourceGroups/rg/providers/Microsoft.Scheduler/jobCollections/c",
		`{"location":"local","properties":{"sku":{"name":"Standard"}}}`, http.StatusCreated)
	return d
}

// waitReady waits (bounded) until the daemon's /readyz answers 200: its dispatcher has loaded the
// schedule. A loaded machine took longer than the daemon took to write its listen-address.
func (d *daemon) waitReady() {
	d.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(d.base + "/readyz")
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		if time.Now().After(deadline) {
			d.t.Fatalf("/readyz did not answer 200 within 30s (%v); log:\n%s", err, d.logs.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (d *daemon) call(method, path, body string, want int) string {
	d.t.Helper()
	req, err := http.NewRequest(method, d.base+path+"?api-version=2016-03-01", strings.NewReader(body))
	if err != nil {
		d.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+d.token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		d.t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		d.t.Fatalf("%s %s: %d %s, want %d", method, path, resp.StatusCode, b, want)
	}
	return string(b)
}

const jobsPath = "/subscriptions/s/resourceGroups/rg/providers/Microsoft.Scheduler/jobCollections/c/jobs/"

// putJob creates a job that runs once, now, with the given action JSON.
func (d *daemon) putJob(name, actionJSON string) {
	d.t.Helper()
	d.call(http.MethodPut, jobsPath+name, `{"properties":{"startTime":"`+time.Now().UTC().Format(time.RFC3339)+`","action":`+actionJSON+`}}`, http.StatusCreated)
}

// history waits until a job has n history entries and returns them oldest first.
func (d *daemon) history(name string, n int) []wire.JobHistoryDefinition {
	d.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		var h wire.JobHistoryListResult
		if err := json.Unmarshal([]byte(d.call(http.MethodGet, jobsPath+name+"/history", "", http.StatusOK)), &h); err != nil {
			d.t.Fatal(err)
		}
		if len(h.Value) >= n {
			out := make([]wire.JobHistoryDefinition, 0, len(h.Value))
			for i := len(h.Value) - 1; i >= 0; i-- {
				out = append(out, h.Value[i])
			}
			return out
		}
		if time.Now().After(deadline) {
			d.t.Fatalf("job %s: %d history entries after 60 s, want %d; log:\n%s", name, len(h.Value), n, d.logs.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// stored returns every byte the daemon keeps on disk (database, WAL).
func (d *daemon) stored() []byte {
	d.t.Helper()
	var all []byte
	entries, _ := os.ReadDir(d.data)
	for _, e := range entries {
		if b, err := os.ReadFile(filepath.Join(d.data, e.Name())); err == nil {
			all = append(all, b...)
		}
	}
	return all
}

// TestStorageQueueActionEndToEnd: a StorageQueue job accepted by the API puts Azure Scheduler's
// envelope on a real Azurite queue through --storage-queue-endpoint; its SAS token is never
// returned nor stored in plain text; a job with a wrong SAS fails with Azurite's answer in its
// history and the token nowhere in it.
func TestStorageQueueActionEndToEnd(t *testing.T) {
	az := brokertest.StartAzurite(t)
	az.CreateQueue(t, "jobs")
	d := startDaemon(t, "--storage-queue-endpoint", az.Endpoint(), "--region", "test-region")

	sas := brokertest.AccountSAS("a")
	d.putJob("good", `{"type":"storageQueue","queueMessage":{"storageAccount":"`+brokertest.AzuriteAccount+
		`","queueName":"jobs","sasToken":"?`+sas+`","message":"Hello <queue>"}}`)
	if got := d.call(http.MethodGet, jobsPath+"good", "", http.StatusOK); strings.Contains(got, "sig=") || strings.Contains(got, "sasToken") {
		t.Fatalf("GET returns the SAS token: %s", got)
	}
	h := d.history("good", 1)
	if p := h[0].Properties; p.Status != "Completed" || p.ActionName != "MainAction" || !strings.HasPrefix(p.Message, "HTTP/1.1 201 Created") {
		t.Fatalf("history %+v", p)
	}
	texts := az.WaitMessages(t, "jobs", 1, 10*time.Second)
	env, err := action.ParseQueueEnvelope(texts[0])
	if err != nil {
		t.Fatal(err)
	}
	raw := decodeBase64(t, texts[0])
	if !strings.HasPrefix(raw, action.QueueEnvelopeHeader+`<StorageQueueMessage xmlns:xsd="http://www.w3.org/2001/XMLSchema" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">`) {
		t.Fatalf("envelope head: %s", raw)
	}
	if len(env.ExecutionTag) != 36 || len(env.ClientRequestID) != 36 {
		t.Fatalf("execution tag %q, client request id %q", env.ExecutionTag, env.ClientRequestID)
	}
	want := action.QueueEnvelope{
		ExecutionTag: env.ExecutionTag, ClientRequestID: env.ClientRequestID,
		ExpectedExecutionTime:    h[0].Properties.ExpectedExecutionTime,
		SchedulerJobID:           jobsPath + "good",
		SchedulerJobCollectionID: strings.TrimSuffix(jobsPath, "/jobs/"),
		Region:                   "test-region", Message: "Hello <queue>",
	}
	if env != want {
		t.Fatalf("envelope %+v\nwant     %+v", env, want)
	}

	bad := strings.Replace(sas, "sig=", "sig=AAAA", 1)
	d.putJob("bad", `{"type":"StorageQueue","queueMessage":{"storageAccount":"`+brokertest.AzuriteAccount+
		`","queueName":"jobs","sasToken":"`+bad+`","message":"m"},"retryPolicy":{"retryType":"None"}}`)
	h = d.history("bad", 1)
	if p := h[0].Properties; p.Status != "Failed" || !strings.HasPrefix(p.Message, "HTTP/1.1 403 Server failed to authenticate the request.") ||
		strings.Contains(p.Message, "AAAA") || strings.Contains(p.Message, "sig=") {
		t.Fatalf("history of the wrong SAS: %+v", p)
	}
	sig := func(s string) string { v, _, _ := strings.Cut(s[strings.Index(s, "sig=")+4:], "&"); return v }
	for _, s := range []string{sig(sas), sig(bad)} {
		if bytes.Contains(d.stored(), []byte(s)) {
			t.Fatalf("the data directory holds a SAS signature in plain text")
		}
		if strings.Contains(d.logs.String(), s) {
			t.Fatalf("the log holds a SAS signature")
		}
	}
}

func decodeBase64(t *testing.T, s string) string {
	t.Helper()
	b, err := base64Std(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func base64Std(s string) (string, error) {
	b, err := base64.StdEncoding.DecodeString(s)
	return string(b), err
}
