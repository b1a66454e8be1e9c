package main

import (
	"bytes"
	"context"
	"crypto/x509/pkix"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/internal/testcert"
)

// TestOccurrencesOfJobsAsTheDaemonReturnsThem: jobs with every kind of secret (Basic password,
// client certificate pfx and password, OAuth secret, SAS token, Service Bus key, and a secret in
// the error action), read back from a real daemon over HTTP (the secrets left out), preview with
// `schedulerd occurrences` as they are: the rule in words, then each run's jittered start for
// the job, excluded dates left out; and POST /preview/occurrences of the same document answers
// the same starts, words and scheduled times.
func TestOccurrencesOfJobsAsTheDaemonReturnsThem(t *testing.T) {
	d := startDaemon(t)
	cert := testcert.New(t, testcert.Options{Subject: pkix.Name{CommonName: "scheduler-client"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Date(2050, 1, 1, 0, 0, 0, 0, time.UTC)})
	https := func(auth string) string {
		return `{"type":"Https","request":{"uri":"https://example.com/hook","method":"POST","authentication":` + auth + `}}`
	}
	actions := map[string]string{
		"basic":  https(`{"type":"Basic","username":"u","password":"p4ss-basic"}`),
		"cert":   https(`{"type":"ClientCertificate","pfx":"` + cert.PFX(t, "p4ss-pfx") + `","password":"p4ss-pfx"}`),
		"oauth":  https(`{"type":"ActiveDirectoryOAuth","tenant":"contoso.com","audience":"https://management.core.windows.net/","clientId":"c","secret":"p4ss-oauth"}`),
		"queue":  `{"type":"StorageQueue","queueMessage":{"storageAccount":"acct","queueName":"jobs","sasToken":"sv=2015&sig=p4ss-sas","message":"m"}}`,
		"bus":    `{"type":"ServiceBusQueue","serviceBusQueueMessage":{"namespace":"contoso-bus","queueName":"q","transportType":"AMQP","message":"m","authentication":{"type":"SharedAccessKey","sasKeyName":"root","sasKey":"p4ss-bus"}}}`,
		"onfail": `{"type":"Http","request":{"uri":"http://example.com/hook","method":"POST"},"errorAction":` + https(`{"type":"Basic","username":"u","password":"p4ss-error"}`) + `}`,
	}
	const recurrence = `"recurrence":{"frequency":"Day","timeZone":"Europe/Berlin","jitter":"PT5M","excludeDates":["2040-12-25","2040-12-26","2041-01-01"]}`
	const words = "at 00:00 every day, up to 5 minutes later, except 3 dates, from 2040-12-23 00:00, Europe/Berlin"
	scheduled := []string{"2040-12-23T00:00:00+01:00", "2040-12-24T00:00:00+01:00", "2040-12-27T00:00:00+01:00", "2040-12-28T00:00:00+01:00"}
	// Pinned for the job "basic": every preview and the dispatcher compute these.
	wantBasic := []string{"2040-12-23T00:03:27.71+01:00", "2040-12-24T00:04:20.044+01:00", "2040-12-27T00:03:59.773+01:00", "2040-12-28T00:02:49.668+01:00"}
	seen := map[string]string{}
	for name, action := range actions {
		d.call(http.MethodPut, jobsPath+name, `{"properties":{"startTime":"2040-12-23T00:00:00","action":`+action+`,`+recurrence+`}}`, http.StatusCreated)
		returned := d.call(http.MethodGet, jobsPath+name, "", http.StatusOK)
		if strings.Contains(returned, "p4ss") {
			t.Fatalf("%s: a secret is returned: %s", name, returned)
		}
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), []string{"occurrences", "--now", "2040-12-01T00:00:00Z", "--count", "4", "--zone", "--describe"},
			strings.NewReader(returned), &stdout, &stderr)
		lines := strings.Split(strings.TrimSuffix(stdout.String(), "\n"), "\n")
		if code != 0 || stderr.Len() != 0 || len(lines) != 5 || lines[0] != words {
			t.Fatalf("%s: exit %d\nstdout:\n%s\nstderr:\n%s\njob:\n%s", name, code, stdout.String(), stderr.String(), returned)
		}
		starts := lines[1:]
		for i, s := range starts {
			start, err1 := time.Parse(time.RFC3339Nano, s)
			sched, err2 := time.Parse(time.RFC3339, scheduled[i])
			if err1 != nil || err2 != nil || start.Before(sched) || !start.Before(sched.Add(5*time.Minute)) || start.Location().String() == "UTC" {
				t.Errorf("%s: run %d starts at %s: not in [%s, +5m) in the rule's zone", name, i, s, scheduled[i])
			}
		}
		if name == "basic" && strings.Join(starts, " ") != strings.Join(wantBasic, " ") {
			t.Errorf("basic: starts %v, want %v", starts, wantBasic)
		}
		if other, ok := seen[starts[0]]; ok {
			t.Errorf("%s and %s start at the same instant %s: the offset is not the job's", name, other, starts[0])
		}
		seen[starts[0]] = name

		// The API's preview of the same document agrees.
		var got struct {
			Value     []string `json:"value"`
			Describe  string   `json:"describe"`
			Jitter    string   `json:"jitter"`
			Scheduled []string `json:"scheduled"`
		}
		if err := json.Unmarshal(d.preview(returned, "count=4&now=2040-12-01T00:00:00Z"), &got); err != nil {
			t.Fatal(err)
		}
		if strings.Join(got.Value, " ") != strings.Join(starts, " ") || got.Describe != words || got.Jitter != "PT5M" ||
			strings.Join(got.Scheduled, " ") != strings.Join(scheduled, " ") {
			t.Errorf("%s: POST /preview/occurrences %+v, the command %v", name, got, starts)
		}
	}
}

// preview posts a job document to /preview/occurrences with the query and returns the 200 body.
func (d *daemon) preview(body, query string) []byte {
	d.t.Helper()
	req, err := http.NewRequest(http.MethodPost, d.base+"/preview/occurrences?"+query, strings.NewReader(body))
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
	if resp.StatusCode != http.StatusOK {
		d.t.Fatalf("POST /preview/occurrences?%s: %d %s", query, resp.StatusCode, b)
	}
	return b
}
