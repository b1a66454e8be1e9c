package client

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"
)

func newTestClient(t *testing.T, url string) *Client {
	t.Helper()
	c, err := New(Config{Endpoint: url, Token: "tok", RetryWait: time.Millisecond, RetryMaxWait: 5 * time.Millisecond})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return c
}

var testJob = JobID{CollectionID: CollectionID{Subscription: "sub", ResourceGroup: "rg", Name: "jc"}, Name: "nightly cleanup"}

func TestJobPutSendsARMRequest(t *testing.T) {
	type seen struct{ method, path, rawPath, apiVersion, auth, ctype, body string }
	var got seen
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got = seen{r.Method, r.URL.Path, r.URL.EscapedPath(), r.URL.Query().Get("api-version"), r.Header.Get("Authorization"), r.Header.Get("Content-Type"), string(b)}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		_, _ = io.WriteString(w, `{"id":"/x","name":"jc/nightly cleanup","properties":{"state":"Enabled","recurrence":{"frequency":"Day"}}}`)
	}))
	defer srv.Close()
	c := newTestClient(t, srv.URL)
	out, err := c.JobPut(context.Background(), testJob, &wire.JobDefinition{Properties: &wire.JobProperties{
		StartTime:  "2026-01-01T00:00:00Z",
		Recurrence: &wire.JobRecurrence{Frequency: "day"},
	}})
	if err != nil {
		t.Fatalf("JobPut: %v", err)
	}
	want := seen{
		method:     "PUT",
		path:       "/subscriptions/sub/resourceGroups/rg/providers/Microsoft.Scheduler/jobCollections/jc/jobs/nightly cleanup",
		rawPath:    "/subscriptions/sub/resourceGroups/rg/providers/Microsoft.Scheduler/jobCollections/jc/jobs/nightly%20cleanup",
		apiVersion: "2016-03-01",
		auth:       "Bearer tok",
		ctype:      "application/json",
		body:       `{"properties":{"startTime":"2026-01-01T00:00:00Z","recurrence":{"frequency":"day"}}}`,
	}
	if got != want {
		t.Errorf("request\n got %+v\nwant %+v", got, want)
	}
	if out.Properties == nil || out.Properties.State != "Enabled" || out.Properties.Recurrence.Frequency != "Day" {
		t.Errorf("decoded answer = %+v", out.Properties)
	}
}

func TestErrorCarriesAzureCodeAndMessage(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("x-ms-request-id", "req-1")
		switch r.Method {
		case http.MethodGet:
			w.WriteHeader(http.StatusNotFound)
			_, _ = io.WriteString(w, `{"error":{"code":"ResourceNotFound","message":"job jc/nightly cleanup not found"}}`)
		default:
			w.WriteHeader(http.StatusBadRequest)
			_, _ = io.WriteString(w, `{"error":{"code":"BadRequest","message":"recurrence.schedule.monthDays[2]: 32 is outside -31..-1, 1..31"}}`)
		}
	}))
	defer srv.Close()
	c := newTestClient(t, srv.URL)

	_, err := c.JobGet(context.Background(), testJob)
	if !IsNotFound(err) {
		t.Fatalf("JobGet error %v: want a not-found error", err)
	}
	_, err = c.JobPut(context.Background(), testJob, &wire.JobDefinition{})
	var apiErr *Error
	if !errors.As(err, &apiErr) {
		t.Fatalf("JobPut error %T %v: want *Error", err, err)
	}
	if apiErr.StatusCode != 400 || apiErr.Code != "BadRequest" || apiErr.RequestID != "req-1" ||
		apiErr.Message != "recurrence.schedule.monthDays[2]: 32 is outside -31..-1, 1..31" {
		t.Errorf("error = %+v", apiErr)
	}
	wantMsg := "PUT /subscriptions/sub/resourceGroups/rg/providers/Microsoft.Scheduler/jobCollections/jc/jobs/nightly%20cleanup: 400 BadRequest: recurrence.schedule.monthDays[2]: 32 is outside -31..-1, 1..31 (request id req-1)"
	if err.Error() != wantMsg {
		t.Errorf("Error()\n got %q\nwant %q", err.Error(), wantMsg)
	}
	if IsNotFound(err) || IsConflict(err) {
		t.Errorf("a 400 is neither not-found nor conflict")
	}
}

func TestTransientAnswersAreRetried(t *testing.T) {
	for _, code := range []int{http.StatusTooManyRequests, http.StatusServiceUnavailable} {
		t.Run(fmt.Sprint(code), func(t *testing.T) {
			var calls atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if calls.Add(1) <= 2 {
					w.WriteHeader(code)
					_, _ = io.WriteString(w, `{"error":{"code":"ServerBusy","message":"try later"}}`)
					return
				}
				_, _ = io.WriteString(w, `{"name":"jc"}`)
			}))
			defer srv.Close()
			out, err := newTestClient(t, srv.URL).CollectionGet(context.Background(), testJob.CollectionID)
			if err != nil {
				t.Fatalf("CollectionGet: %v", err)
			}
			if out.Name != "jc" || calls.Load() != 3 {
				t.Errorf("name %q after %d calls, want jc after 3", out.Name, calls.Load())
			}
		})
	}
}

func TestRetriesGiveUpWithTheLastAnswer(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = io.WriteString(w, `{"error":{"code":"ServerBusy","message":"overloaded"}}`)
	}))
	defer srv.Close()
	c, err := New(Config{Endpoint: srv.URL, Retries: 2, RetryWait: time.Millisecond, RetryMaxWait: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	err = c.CollectionDelete(context.Background(), testJob.CollectionID)
	var apiErr *Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 503 || apiErr.Code != "ServerBusy" {
		t.Fatalf("error = %v, want the 503 ServerBusy answer", err)
	}
	if calls.Load() != 3 {
		t.Errorf("%d calls, want 3 (1 + 2 retries)", calls.Load())
	}
}

func TestClientErrorsAreNotRetried(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.WriteHeader(http.StatusConflict)
		_, _ = io.WriteString(w, `{"error":{"code":"Conflict","message":"job is Completed"}}`)
	}))
	defer srv.Close()
	_, err := newTestClient(t, srv.URL).JobPut(context.Background(), testJob, &wire.JobDefinition{})
	if !IsConflict(err) || calls.Load() != 1 {
		t.Errorf("err %v after %d calls, want a conflict after 1", err, calls.Load())
	}
}

func TestJobListFollowsNextLink(t *testing.T) {
	var mu sync.Mutex
	var queries []string
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		queries = append(queries, r.URL.RawQuery)
		mu.Unlock()
		var page wire.JobListResult
		if r.URL.Query().Get("$skip") == "" {
			page = wire.JobListResult{Value: []wire.JobDefinition{{Name: "jc/a"}, {Name: "jc/b"}},
				NextLink: srv.URL + r.URL.Path + "?api-version=2016-03-01&$top=2&$skip=2"}
		} else {
			page = wire.JobListResult{Value: []wire.JobDefinition{{Name: "jc/c"}}}
		}
		_ = json.NewEncoder(w).Encode(page)
	}))
	defer srv.Close()
	jobs, err := newTestClient(t, srv.URL).JobList(context.Background(), JobListParams{Collection: testJob.CollectionID, State: "Completed", Top: 2})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, j := range jobs {
		names = append(names, j.Name)
	}
	if strings.Join(names, ",") != "jc/a,jc/b,jc/c" {
		t.Errorf("names = %v", names)
	}
	want := []string{"%24filter=state+eq+Completed&%24top=2&api-version=2016-03-01", "api-version=2016-03-01&$top=2&$skip=2"}
	if strings.Join(queries, " | ") != strings.Join(want, " | ") {
		t.Errorf("queries\n got %q\nwant %q", queries, want)
	}
}

func TestHistoryListStopsAtMax(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("$top") != "2" || r.URL.Query().Get("$filter") != "status eq Failed" {
			http.Error(w, "bad query "+r.URL.RawQuery, http.StatusBadRequest)
			return
		}
		_ = json.NewEncoder(w).Encode(wire.JobHistoryListResult{
			Value:    []wire.JobHistoryDefinition{{Name: "h3"}, {Name: "h2"}},
			NextLink: "/more",
		})
	}))
	defer srv.Close()
	hist, err := newTestClient(t, srv.URL).HistoryList(context.Background(), HistoryListParams{Job: testJob, Status: "Failed", Max: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(hist) != 2 || hist[0].Name != "h3" || hist[1].Name != "h2" {
		t.Errorf("history = %+v", hist)
	}
}

func TestTLSWithCACertificate(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, `{"name":"jc"}`)
	}))
	defer srv.Close()
	caPEM := string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}))
	ctx := context.Background()

	c, err := New(Config{Endpoint: srv.URL, CACertPEM: caPEM})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.CollectionGet(ctx, testJob.CollectionID); err != nil {
		t.Errorf("with the CA: %v", err)
	}

	c, err = New(Config{Endpoint: srv.URL, Retries: -1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.CollectionGet(ctx, testJob.CollectionID); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("without the CA: err = %v, want a certificate error", err)
	}

	c, err = New(Config{Endpoint: srv.URL, InsecureSkipVerify: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.CollectionGet(ctx, testJob.CollectionID); err != nil {
		t.Errorf("insecure: %v", err)
	}
}

func TestNewRejectsBadConfig(t *testing.T) {
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{Endpoint: ""}, `endpoint "": want an http:// or https:// URL with a host`},
		{Config{Endpoint: "ftp://x"}, `endpoint "ftp://x": want an http:// or https:// URL with a host`},
		{Config{Endpoint: "https://x", CACertPEM: "nope"}, "ca_cert_pem: no PEM certificate found"},
	} {
		_, err := New(tc.cfg)
		if err == nil || err.Error() != tc.want {
			t.Errorf("New(%+v) = %v, want %q", tc.cfg, err, tc.want)
		}
	}
}

func TestParseIDs(t *testing.T) {
	id := JobID{CollectionID: testJob.CollectionID, Name: "Nightly-cleanup_1.x"}
	got, err := ParseJobID(id.String())
	if err != nil || got != id {
		t.Fatalf("ParseJobID(%q) = %+v, %v", id.String(), got, err)
	}
	c, err := ParseCollectionID("/SUBSCRIPTIONS/s/resourcegroups/rg/providers/microsoft.scheduler/JOBCOLLECTIONS/jc")
	if err != nil || c != (CollectionID{"s", "rg", "jc"}) {
		t.Errorf("case-insensitive segments: %+v, %v", c, err)
	}
	for in, want := range map[string]string{
		"subscriptions/s": `job collection id "subscriptions/s": does not start with / (want /subscriptions/{subscription}/resourceGroups/{resourceGroup}/providers/Microsoft.Scheduler/jobCollections/{collection})`,
		"/subscriptions/s/resourceGroups/rg/providers/Microsoft.Web/jobCollections/jc":      `id "/subscriptions/s/resourceGroups/rg/providers/Microsoft.Web/jobCollections/jc": segment 6 is "Microsoft.Web", want "Microsoft.Scheduler" (want /subscriptions/{subscription}/resourceGroups/{resourceGroup}/providers/Microsoft.Scheduler/jobCollections/{collection})`,
		"/subscriptions//resourceGroups/rg/providers/Microsoft.Scheduler/jobCollections/jc": `job collection id "/subscriptions//resourceGroups/rg/providers/Microsoft.Scheduler/jobCollections/jc": segment 2 is empty (want /subscriptions/{subscription}/resourceGroups/{resourceGroup}/providers/Microsoft.Scheduler/jobCollections/{collection})`,
	} {
		if _, err := ParseCollectionID(in); err == nil || err.Error() != want {
			t.Errorf("ParseCollectionID(%q)\n got %v\nwant %s", in, err, want)
		}
	}
	for in, want := range map[string]string{
		"/subscriptions/s/resourceGroups/rg/providers/Microsoft.Scheduler/jobCollections/jc/jobs/..":  `the job name ".." is a dot segment`,
		"/subscriptions/ſ/resourceGroups/rg/providers/Microsoft.Scheduler/jobCollections/jc/jobs/j":   `the subscription id "ſ" contains the non-ASCII character U+017F`,
		"/subscriptions/s/resourceGroups/r g/providers/Microsoft.Scheduler/jobCollections/jc/jobs/j":  `the resource group name "r g" contains the character ' '`,
		"/subscriptions/s/resourceGroups/rg/providers/Microsoft.Scheduler/jobCollections/j%41/jobs/j": `the job collection name "j%41" contains the character '%'`,
		"/subscriptions/s/resourceGroups/rg/providers/Microſoft.Scheduler/jobCollections/jc/jobs/j":   `segment 6 is "Microſoft.Scheduler"`,
	} {
		if _, err := ParseJobID(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseJobID(%q) = %v, want an error containing %s", in, err, want)
		}
	}
	if _, err := ParseJobID(id.CollectionID.String()); err == nil || !strings.Contains(err.Error(), "has 8 segments, want 10") {
		t.Errorf("ParseJobID of a collection id: %v", err)
	}
}

func TestOccurrencePreviewPostsTheJob(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if r.Method != http.MethodPost || r.URL.Path != "/preview/occurrences" || r.URL.Query().Get("count") != "2" ||
			r.URL.Query().Get("now") != "2015-04-08T13:00:00Z" || string(b) != `{"properties":{"startTime":"2015-04-07T14:00:00Z"}}` {
			http.Error(w, r.Method+" "+r.URL.String()+" "+string(b), http.StatusBadRequest)
			return
		}
		_, _ = io.WriteString(w, `{"value":["2015-04-09T14:00:00Z","2015-04-11T14:00:00Z"]}`)
	}))
	defer srv.Close()
	got, err := newTestClient(t, srv.URL).OccurrencePreview(context.Background(), OccurrencePreviewParams{
		Properties: &wire.JobProperties{StartTime: "2015-04-07T14:00:00Z"},
		Count:      2,
		Now:        time.Date(2015, 4, 8, 13, 0, 0, 0, time.UTC),
	})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(got, ",") != "2015-04-09T14:00:00Z,2015-04-11T14:00:00Z" {
		t.Errorf("preview = %v", got)
	}
}
