package api

import (
	"crypto/x509/pkix"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/secret"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/jobstate"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/recurrence"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/testcert"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"
)

const jobPath = collPath + "/jobs/j1" + apiVersion

// TestSeedJob: the example job of the seed documents, comments and trailing commas removed, is
// accepted as written; read-only fields are ignored and enums come back in Azure's spelling.
func TestSeedJob(t *testing.T) {
	h := newHarness(t)
	h.collection(collPath, `{"sku":{"name":"Standard"}}`)
	raw, err := os.ReadFile("testdata/seed004-job.jsonc")
	if err != nil {
		t.Fatal(err)
	}
	r := h.must(201, http.MethodPut, jobPath, `{"properties":`+stripJSONC(string(raw))+`}`)
	want := `{"id":"/subscriptions/sub-a/resourceGroups/rg1/providers/Microsoft.Scheduler/jobCollections/jc1/jobs/j1",` +
		`"type":"Microsoft.Scheduler/jobCollections/jobs","name":"jc1/j1","properties":{` +
		`"startTime":"2012-08-04T00:00:00Z",` +
		`"action":{"type":"Http","request":{"uri":"http://contoso.com/foo","method":"PUT","body":"Posting from a timer","headers":{"Content-Type":"application/json"}},` +
		`"retryPolicy":{"retryType":"None"},` +
		`"errorAction":{"type":"Http","request":{"uri":"http://contoso.com/notifyError","method":"POST"}}},` +
		`"recurrence":{"frequency":"Week","interval":1,"count":10,"endTime":"2012-11-04T00:00:00Z","schedule":{"weekDays":["Monday","Wednesday","Friday"],"hours":[10,22]}},` +
		`"state":"Disabled","status":{"executionCount":0,"failureCount":0,"faultedCount":0}}}`
	if string(r.body) != want {
		t.Fatalf("PUT body\n%s\nwant\n%s", r.body, want)
	}
	if got := h.must(200, http.MethodGet, jobPath, nil); string(got.body) != want {
		t.Fatalf("GET body\n%s\nwant\n%s", got.body, want)
	}
	// Enabling it now: its endTime has passed, nothing is left, so it is Completed.
	r = h.must(200, http.MethodPatch, jobPath, `{"properties":{"state":"enabled"}}`)
	if s := get(r.json(t), "properties", "state"); s != "Completed" {
		t.Fatalf("state after enabling an ended job: %v", s)
	}
}

// TestJobScheduling: nextExecutionTime follows SPEC 4.3 from the injected clock, and updates keep
// the counters.
func TestJobScheduling(t *testing.T) {
	h := newHarness(t)
	h.collection(collPath, `{"sku":{"name":"Standard"}}`)
	action := `"action":{"type":"https","request":{"uri":"https://example.com/hook","method":"post"}}`
	for _, tc := range []struct {
		name, props, next string
	}{
		{"no startTime, no recurrence: now", `{` + action + `}`, "2026-11-18T12:00:30Z"},
		{"future startTime, no recurrence", `{"startTime":"2026-11-20T08:15:00Z",` + action + `}`, "2026-11-20T08:15:00Z"},
		{"past startTime, every 2 days", `{"startTime":"2026-11-17T14:00:00Z",` + action + `,"recurrence":{"frequency":"day","interval":2}}`, "2026-11-19T14:00:00Z"},
		{"disabled", `{"state":"Disabled",` + action + `}`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := collPath + "/jobs/" + strings.ReplaceAll(tc.name[:8], " ", "-") + apiVersion
			r := h.must(201, http.MethodPut, path, `{"properties":`+tc.props+`}`)
			next, _ := get(r.json(t), "properties", "status", "nextExecutionTime").(string)
			if next != tc.next {
				t.Errorf("nextExecutionTime %q, want %q", next, tc.next)
			}
			j := h.storedJob(strings.ReplaceAll(tc.name[:8], " ", "-"))
			if got := rfc3339UTC(j.Status.NextExecutionTime); got != tc.next {
				t.Errorf("stored NextExecutionTime %q, want %q", got, tc.next)
			}
		})
	}
	// An update keeps the counters; with count reached the job becomes Completed.
	h.must(201, http.MethodPut, jobPath, `{"properties":{"startTime":"2026-11-19T00:00:00Z",`+action+`,"recurrence":{"frequency":"hour","count":5}}}`)
	j := h.storedJob("j1")
	j.Status.ExecutionCount, j.Status.FailureCount = 3, 1
	if _, _, err := h.store.JobPut(t.Context(), store.JobPutParams{Job: *j, ExpectVersion: j.Version, Now: t0}); err != nil {
		t.Fatal(err)
	}
	r := h.must(200, http.MethodPatch, jobPath, `{"properties":{"recurrence":{"count":4}}}`)
	st := get(r.json(t), "properties", "status")
	if get(st, "executionCount") != 3.0 || get(st, "failureCount") != 1.0 || get(st, "nextExecutionTime") != "2026-11-19T00:00:00Z" {
		t.Fatalf("status after update %v", st)
	}
	r = h.must(200, http.MethodPatch, jobPath, `{"properties":{"recurrence":{"count":3}}}`)
	if s := get(r.json(t), "properties", "state"); s != "Completed" {
		t.Fatalf("state with count reached: %v", s)
	}
	if changed, _, _ := h.disp.calls(); len(changed) != 7 || changed[6] != j.ID {
		t.Errorf("JobChanged calls %v, want 7 ending with %d", changed, j.ID)
	}
	// Completed is final: PUT and PATCH 409, DELETE works.
	for _, m := range []string{http.MethodPut, http.MethodPatch} {
		r := h.must(409, m, jobPath, `{"properties":{`+action+`}}`)
		if code, msg := r.errorBody(t); code != "Conflict" || msg != "job j1 is Completed: a Completed job cannot be changed, only deleted" {
			t.Errorf("%s on a Completed job: %s %q", m, code, msg)
		}
	}
	h.must(409, http.MethodPost, collPath+"/jobs/j1/run"+apiVersion, nil)
	h.must(200, http.MethodDelete, jobPath, nil)
	h.must(404, http.MethodGet, jobPath, nil)
}

// TestBadJobInput: every kind of bad input is a 400 naming the field, and the stored job is
// unchanged afterwards.
func TestBadJobInput(t *testing.T) {
	h := newHarness(t)
	h.collection(collPath, `{"sku":{"name":"Standard"}}`)
	good := `{"properties":{"startTime":"2026-12-01T10:00:00Z","action":{"type":"Https","request":{"uri":"https://example.com/x","method":"GET"}},"recurrence":{"frequency":"Month","schedule":{"monthDays":[1,15]}}}}`
	before := h.must(201, http.MethodPut, jobPath, good).body
	storedBefore := h.storedJob("j1")
	long := strings.Repeat("a", 8193)
	for _, tc := range []struct {
		name, body, msg string
	}{
		{"malformed JSON", `{"properties":{"action":`, "invalid JSON"},
		{"wrong type", `{"properties":{"recurrence":{"frequency":"Day","interval":"two"}}}`, "properties.recurrence.interval"},
		{"unknown field", `{"properties":{"acton":{}}}`, "properties.acton"},
		{"unknown enum", `{"properties":{"action":{"type":"Ftp","request":{"uri":"https://e.com","method":"GET"}}}}`, `properties.action.type: "Ftp" is not one of Http, Https, StorageQueue, ServiceBusQueue, ServiceBusTopic`},
		{"unknown weekday", `{"properties":{"action":{"type":"Https","request":{"uri":"https://e.com","method":"GET"}},"recurrence":{"frequency":"Week","schedule":{"weekDays":["Funday"]}}}}`, "properties.recurrence.schedule.weekDays[0]"},
		{"month day 32", `{"properties":{"action":{"type":"Https","request":{"uri":"https://e.com","method":"GET"}},"recurrence":{"frequency":"Month","schedule":{"monthDays":[1,2,32]}}}}`, "properties.recurrence.schedule.monthDays[2]"},
		{"scheme mismatch", `{"properties":{"action":{"type":"Http","request":{"uri":"https://e.com","method":"GET"}}}}`, `properties.action.request.uri: the scheme "https" does not match the action type Http (it must be http)`},
		{"no method", `{"properties":{"action":{"type":"Http","request":{"uri":"http://e.com"}}}}`, "properties.action.request.method: is required"},
		{"body too long", `{"properties":{"action":{"type":"Http","request":{"uri":"http://e.com","method":"POST","body":"` + long + `"}}}}`, "properties.action.request.body: is 8193 characters long; at most 8192 are allowed"},
		{"queue action", `{"properties":{"action":{"type":"StorageQueue","queueMessage":{"storageAccount":"acct","queueName":"q","sasToken":"sv=1&sig=s","message":"m"}}}}`, `properties.action.queueMessage.queueName: "q" is not a queue name`},
		{"basic without password", `{"properties":{"action":{"type":"Https","request":{"uri":"https://e.com","method":"GET","authentication":{"type":"Basic","username":"u"}}}}}`, "properties.action.request.authentication.password: is required for Basic authentication"},
		{"completed state", `{"properties":{"state":"completed","action":{"type":"Https","request":{"uri":"https://e.com","method":"GET"}}}}`, "properties.state: Completed is set by the scheduler"},
		{"oversize body", `{"properties":{"action":{"type":"Http","request":{"uri":"http://e.com","method":"POST","body":"` + strings.Repeat("b", 70000) + `"}}}}`, "the request body is larger than 65536 bytes"},
		{"empty body", ``, "the request body is required"},
		{"no properties", `{}`, "properties: is required"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, m := range []string{http.MethodPut, http.MethodPatch} {
				if (tc.name == "no properties" || tc.name == "no method") && m == http.MethodPatch {
					continue // a patch keeps what it does not name
				}
				r := h.do(m, jobPath, adminToken, tc.body)
				code, msg := r.errorBody(t)
				if r.status != 400 || code != "BadRequest" || !strings.Contains(msg, tc.msg) {
					t.Errorf("%s: %d %s %q, want 400 BadRequest containing %q", m, r.status, code, msg, tc.msg)
				}
			}
			if after := h.must(200, http.MethodGet, jobPath, nil).body; string(after) != string(before) {
				t.Fatalf("job changed:\n%s\nwas\n%s", after, before)
			}
			if j := h.storedJob("j1"); j.Version != storedBefore.Version {
				t.Fatalf("stored version %d, was %d", j.Version, storedBefore.Version)
			}
		})
	}
}

func TestSecretsAreWriteOnly(t *testing.T) {
	h := newHarness(t)
	h.collection(collPath, `{"sku":{"name":"Standard"}}`)
	r := h.must(201, http.MethodPut, jobPath, `{"properties":{"action":{"type":"Https","request":{"uri":"https://e.com","method":"GET",`+
		`"authentication":{"type":"basic","username":"alice","password":"hunter2"}}}}}`)
	auth := get(r.json(t), "properties", "action", "request", "authentication")
	if m, _ := auth.(map[string]any); len(m) != 2 || get(auth, "type") != "Basic" || get(auth, "username") != "alice" {
		t.Fatalf("authentication read back %v", auth)
	}
	if strings.Contains(string(r.body), "hunter2") {
		t.Fatalf("secret in the response: %s", r.body)
	}
	stored := h.storedJob("j1").Properties.Action.Request.Authentication.Password
	if !secret.IsSealed(stored) || strings.Contains(stored, "hunter2") {
		t.Fatalf("stored password %q is not sealed", stored)
	}
	// PATCH without the password keeps the stored one.
	h.must(200, http.MethodPatch, jobPath, `{"properties":{"action":{"request":{"authentication":{"username":"bob"}}}}}`)
	p := h.storedJob("j1").Properties
	if err := h.box.OpenJob(&p, h.storedJob("j1").Key); err != nil {
		t.Fatal(err)
	}
	if a := p.Action.Request.Authentication; a.Username != "bob" || a.Password != "hunter2" {
		t.Fatalf("after PATCH: %+v", a)
	}
	// PUT replaces: without the password it is a 400.
	r = h.must(400, http.MethodPut, jobPath, `{"properties":{"action":{"type":"Https","request":{"uri":"https://e.com","method":"GET","authentication":{"type":"Basic","username":"bob"}}}}}`)
	if _, msg := r.errorBody(t); msg != "properties.action.request.authentication.password: is required for Basic authentication" {
		t.Fatalf("PUT without password: %q", msg)
	}
	// A list never shows secrets either.
	if l := h.must(200, http.MethodGet, collPath+"/jobs"+apiVersion, nil); strings.Contains(string(l.body), "hunter2") || strings.Contains(string(l.body), "sealed:") {
		t.Fatalf("list shows a secret: %s", l.body)
	}
}

// clientCert is a fresh client certificate of "CN=scheduler-client, O=Contoso" that expires
// on 2030-01-02T03:04:05Z.
func clientCert(t *testing.T) *testcert.Cert {
	return testcert.New(t, testcert.Options{Subject: pkix.Name{CommonName: "scheduler-client", Organization: []string{"Contoso"}}, Serial: 42,
		NotBefore: time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC), NotAfter: time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)})
}

func TestClientCertificate(t *testing.T) {
	h := newHarness(t)
	h.collection(collPath, `{"sku":{"name":"P20Premium"}}`)
	cert := clientCert(t)
	pfx, notAfter := cert.PFX(t, "pfx-pass"), cert.Cert.NotAfter
	body := func(password string) string {
		return `{"properties":{"action":{"type":"Https","request":{"uri":"https://e.com","method":"GET",` +
			`"authentication":{"type":"ClientCertificate","pfx":"` + pfx + `","password":"` + password + `"}}}}}`
	}
	r := h.must(400, http.MethodPut, jobPath, body("wrong"))
	if _, msg := r.errorBody(t); msg != "properties.action.request.authentication.pfx: cannot be opened: the password is incorrect" {
		t.Fatalf("wrong password: %q", msg)
	}
	r = h.must(400, http.MethodPut, jobPath, strings.Replace(body("pfx-pass"), pfx, "bm90IGEgcGZ4", 1))
	if _, msg := r.errorBody(t); !strings.HasPrefix(msg, "properties.action.request.authentication.pfx: is not a valid PKCS#12 (pfx) file") {
		t.Fatalf("not a pfx: %q", msg)
	}
	r = h.must(201, http.MethodPut, jobPath, body("pfx-pass"))
	auth := get(r.json(t), "properties", "action", "request", "authentication")
	want := map[string]any{
		"type":                      "ClientCertificate",
		"certificateThumbprint":     cert.Thumbprint(),
		"certificateExpirationDate": notAfter.Format(time.RFC3339),
		"certificateSubjectName":    "CN=scheduler-client, O=Contoso",
	}
	m, _ := auth.(map[string]any)
	if len(m) != len(want) {
		t.Fatalf("authentication read back %v, want %v", m, want)
	}
	for k, v := range want {
		if m[k] != v {
			t.Errorf("%s = %v, want %v", k, m[k], v)
		}
	}
}

func TestQuotas(t *testing.T) {
	h := newHarness(t)
	h.collection(collPath, `{"sku":{"name":"Free"}}`)
	action := `"action":{"type":"Https","request":{"uri":"https://e.com","method":"GET"}}`
	for _, tc := range []struct {
		name, props, msg string
	}{
		{"faster than the Free sku's hour", `{` + action + `,"recurrence":{"frequency":"Minute","interval":30}}`, "the job recurs faster than the collection's maxRecurrence (1 Hour)"},
		{"authentication on Free", `{"action":{"type":"Https","request":{"uri":"https://e.com","method":"GET","authentication":{"type":"Basic","username":"u","password":"p"}}}}`, "the collection's sku (Free) does not allow outbound authentication"},
	} {
		r := h.must(409, http.MethodPut, jobPath, `{"properties":`+tc.props+`}`)
		if code, msg := r.errorBody(t); code != "Conflict" || !strings.HasPrefix(msg, tc.msg) {
			t.Errorf("%s: %s %q", tc.name, code, msg)
		}
	}
	// An hourly job with minutes [0] and no startTime created at 12:20:30: its immediate run is
	// not a recurrence (the next is 13:00:30, 40 minutes later), so it fits a Free collection.
	h.clock.Set(t0.Add(20 * time.Minute))
	h.must(201, http.MethodPut, jobPath, `{"properties":{`+action+`,"recurrence":{"frequency":"Day","schedule":{"minutes":[0]}}}}`)
	for i := 2; i <= 5; i++ {
		h.must(201, http.MethodPut, collPath+"/jobs/j"+string(rune('0'+i))+apiVersion, `{"properties":{`+action+`}}`)
	}
	r := h.must(409, http.MethodPut, collPath+"/jobs/j6"+apiVersion, `{"properties":{`+action+`}}`)
	if _, msg := r.errorBody(t); msg != "job collection jc1 already holds its maxJobCount of 5 jobs" {
		t.Errorf("sixth job: %q", msg)
	}
	// A quota overrides the sku: maxJobOccurrence.
	h.must(200, http.MethodPatch, collPath+apiVersion, `{"properties":{"quota":{"maxJobCount":10,"maxJobOccurrence":3}}}`)
	h.must(201, http.MethodPut, collPath+"/jobs/j6"+apiVersion, `{"properties":{`+action+`}}`)
	r = h.must(409, http.MethodPut, collPath+"/jobs/j7"+apiVersion, `{"properties":{`+action+`,"recurrence":{"frequency":"Hour","count":4}}}`)
	if _, msg := r.errorBody(t); msg != "recurrence.count 4 exceeds the collection's maxJobOccurrence 3" {
		t.Errorf("count above maxJobOccurrence: %q", msg)
	}
}

// TestPatchAuthenticationType: a patch that changes the authentication type replaces the stored
// authentication whole, so the old type's secrets do not leak into the new one.
func TestPatchAuthenticationType(t *testing.T) {
	h := newHarness(t)
	h.collection(collPath, `{"sku":{"name":"Standard"}}`)
	h.must(201, http.MethodPut, jobPath, `{"properties":{"action":{"type":"Https","request":{"uri":"https://e.com","method":"GET",`+
		`"authentication":{"type":"Basic","username":"alice","password":"hunter2"}}}}}`)
	r := h.must(400, http.MethodPatch, jobPath, `{"properties":{"action":{"request":{"authentication":{"type":"ActiveDirectoryOAuth","tenant":"t","audience":"a","clientId":"c"}}}}}`)
	if _, msg := r.errorBody(t); msg != "properties.action.request.authentication.secret: is required for ActiveDirectoryOAuth authentication" {
		t.Fatalf("oauth without secret: %q", msg)
	}
	pfx := clientCert(t).PFX(t, "")
	r = h.must(200, http.MethodPatch, jobPath, `{"properties":{"action":{"request":{"authentication":{"type":"clientcertificate","pfx":"`+pfx+`"}}}}}`)
	if a := get(r.json(t), "properties", "action", "request", "authentication"); get(a, "username") != nil || get(a, "type") != "ClientCertificate" ||
		get(a, "certificateSubjectName") != "CN=scheduler-client, O=Contoso" {
		t.Fatalf("authentication after the patch %v", a)
	}
	p := h.storedJob("j1").Properties
	if err := h.box.OpenJob(&p, h.storedJob("j1").Key); err != nil {
		t.Fatal(err)
	}
	if a := p.Action.Request.Authentication; a.Password != "" || a.Username != "" || a.Pfx != pfx {
		t.Fatalf("stored authentication %+v", a)
	}
	// A null removes it.
	r = h.must(200, http.MethodPatch, jobPath, `{"properties":{"action":{"request":{"authentication":null}}}}`)
	if a := get(r.json(t), "properties", "action", "request", "authentication"); a != nil {
		t.Fatalf("authentication after null: %v", a)
	}
}

// TestUpdateReschedulesAnOccurrenceClaimedAhead: the dispatcher claims an occurrence up to half
// a second before it is due; a job updated in that half second is scheduled at it again (the
// update cancels the claim: TestAChangeWinsOverAClaim).
func TestUpdateReschedulesAnOccurrenceClaimedAhead(t *testing.T) {
	t0 := time.Date(2026, 6, 1, 9, 0, 0, 0, time.UTC)
	one := 1
	rule, err := recurrence.Compile(t0.Format(time.RFC3339), &wire.JobRecurrence{Frequency: "Minute", Interval: &one}, t0)
	if err != nil {
		t.Fatal(err)
	}
	now := t0.Add(time.Minute - 300*time.Millisecond)
	for _, tc := range []struct {
		name string
		last time.Time
		want time.Time
	}{
		{"the 09:01 occurrence claimed ahead", t0.Add(time.Minute), t0.Add(time.Minute)},
		{"the 09:01 occurrence not claimed yet", t0, t0.Add(time.Minute)},
		{"never executed", time.Time{}, t0.Add(time.Minute)},
	} {
		old := &store.Job{Status: store.JobStatus{ExecutionCount: 1, LastExecutionTime: tc.last}}
		if tc.last.IsZero() {
			old.Status.ExecutionCount = 0
		}
		next, state := jobstate.FirstRun(rule, store.JobStateEnabled, store.CollectionStateEnabled, old.Status.ExecutionCount, now)
		if !next.Equal(tc.want) || state != store.JobStateEnabled {
			t.Errorf("%s: next %s, state %s; want %s, Enabled", tc.name, next, state, tc.want)
		}
	}
}
