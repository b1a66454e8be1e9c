package api

import (
	"net/http"
	"strings"
	"testing"
)

// The signing secrets of the tests below: "whsec_" and base64 of 24 bytes.
const (
	signSecret     = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	signPrevSecret = "whsec_QUJDREVGR0hJSktMTU5PUFFSU1RVVldY"
)

// TestCallExtensionsRoundTrip: timeout, an Exponential retry policy and signing (SPEC 8) are
// stored and read back; the signing secrets are sealed bound to their job and never returned, and
// a PATCH that omits them keeps them.
func TestCallExtensionsRoundTrip(t *testing.T) {
	h := newHarness(t)
	h.collection(collPath, `{"sku":{"name":"Standard"}}`)
	path := collPath + "/jobs/signed" + apiVersion
	body := `{"properties":{"action":{"type":"Https","timeout":"PT5S",` +
		`"request":{"uri":"https://hooks.example/","method":"POST","body":"b","signing":{"secret":"` + signSecret + `","previousSecret":"` + signPrevSecret + `"}},` +
		`"retryPolicy":{"retryType":"exponential","retryInterval":"PT20S","retryCount":5,"maxRetryInterval":"PT10M"},` +
		`"errorAction":{"type":"Https","timeout":"PT2M","request":{"uri":"https://oncall.example/","method":"POST"}}}}}`
	for _, r := range []response{
		h.must(http.StatusCreated, http.MethodPut, path, body),
		h.must(http.StatusOK, http.MethodGet, path, nil),
		h.must(http.StatusOK, http.MethodGet, collPath+"/jobs"+apiVersion, nil),
	} {
		s := string(r.body)
		if strings.Contains(s, "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw") || strings.Contains(s, "QUJDREVGR0hJSktMTU5PUFFSU1RVVldY") || strings.Contains(s, "sealed:") {
			t.Fatalf("a signing secret is returned: %s", s)
		}
		for _, want := range []string{`"timeout":"PT5S"`, `"signing":{}`, `"timeout":"PT2M"`,
			`"retryPolicy":{"retryType":"Exponential","retryInterval":"PT20S","retryCount":5,"maxRetryInterval":"PT10M"}`} {
			if !strings.Contains(s, want) {
				t.Errorf("%s is not in %s", want, s)
			}
		}
	}
	j := h.storedJob("signed")
	sg := j.Properties.Action.Request.Signing
	if !strings.HasPrefix(sg.Secret, "sealed:v2:") || !strings.HasPrefix(sg.PreviousSecret, "sealed:v2:") {
		t.Fatalf("stored signing secrets are not sealed: %q %q", sg.Secret, sg.PreviousSecret)
	}
	// A PATCH that changes the URI keeps both secrets.
	h.must(http.StatusOK, http.MethodPatch, path, `{"properties":{"action":{"request":{"uri":"https://hooks.example/v2"}}}}`)
	j = h.storedJob("signed")
	p := j.Properties
	if err := h.box.OpenJob(&p, j.Key); err != nil {
		t.Fatal(err)
	}
	if got := p.Action.Request.Signing; got.Secret != signSecret || got.PreviousSecret != signPrevSecret || p.Action.Request.URI != "https://hooks.example/v2" {
		t.Fatalf("after the patch: %+v %s", got, p.Action.Request.URI)
	}
	// Sealed for this job, they do not open for another.
	other := j.Key
	other.Name = "other"
	p = h.storedJob("signed").Properties
	if err := h.box.OpenJob(&p, other); err == nil || !strings.Contains(err.Error(), "action.request.signing.secret") {
		t.Fatalf("opened for another job: %v", err)
	}
}

// TestCallExtensionsBadInput: each bad extension value is a 400 naming its field, the answer does
// not repeat a secret, and the stored job does not change.
func TestCallExtensionsBadInput(t *testing.T) {
	h := newHarness(t)
	h.collection(collPath, `{"sku":{"name":"Standard"}}`)
	path := collPath + "/jobs/j" + apiVersion
	h.must(http.StatusCreated, http.MethodPut, path, `{"properties":{"action":{"type":"Https","request":{"uri":"https://hooks.example/","method":"GET"}}}}`)
	before := h.storedJob("j")
	job := func(action string) string {
		return `{"properties":{"action":{"type":"Https","request":{"uri":"https://hooks.example/","method":"GET"}` + action + `}}}`
	}
	for _, tc := range []struct {
		name, method, body, msg string
	}{
		{"timeout too long", http.MethodPut, job(`,"timeout":"PT30M1S"`),
			`properties.action.timeout: "PT30M1S" is 30m1s, outside PT1S..PT30M`},
		{"timeout too short", http.MethodPatch, `{"properties":{"action":{"timeout":"PT0.9S"}}}`,
			`properties.action.timeout: "PT0.9S" is 900ms, outside PT1S..PT30M`},
		{"error action's timeout", http.MethodPut, job(`,"errorAction":{"type":"Https","timeout":"10 s","request":{"uri":"https://x.example/","method":"GET"}}`),
			`properties.action.errorAction.timeout: "10 s" is not an ISO 8601 duration (such as PT30S, PT5M)`},
		{"cap below the interval", http.MethodPut, job(`,"retryPolicy":{"retryType":"Exponential","retryInterval":"PT5M","maxRetryInterval":"PT1M"}`),
			`properties.action.retryPolicy.maxRetryInterval: "PT1M" is 1m0s, below the retryInterval of 5m0s`},
		{"cap on a fixed policy", http.MethodPatch, `{"properties":{"action":{"retryPolicy":{"maxRetryInterval":"PT1M"}}}}`,
			`properties.action.retryPolicy.maxRetryInterval: is allowed only with retryType Exponential`},
		{"secret without prefix", http.MethodPatch, `{"properties":{"action":{"request":{"signing":{"secret":"MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}}}}}`,
			`properties.action.request.signing.secret: must start with "whsec_"`},
		{"secret too short", http.MethodPut, `{"properties":{"action":{"type":"Https","request":{"uri":"https://hooks.example/","method":"GET","signing":{"secret":"whsec_c2hvcnQ="}}}}}`,
			`properties.action.request.signing.secret: decodes to 5 bytes; 24 to 64 are allowed`},
		{"previous secret not base64", http.MethodPatch, `{"properties":{"action":{"request":{"signing":{"secret":"` + signSecret + `","previousSecret":"whsec_***"}}}}}`,
			`properties.action.request.signing.previousSecret: must be whsec_ followed by standard base64`},
		{"signing on a queue action", http.MethodPut, `{"properties":{"action":{"type":"StorageQueue","queueMessage":{"storageAccount":"acct","queueName":"queue","sasToken":"sv=1&sig=x","message":"m"},` +
			`"request":{"signing":{"secret":"` + signSecret + `"}}}}}`,
			`properties.action.request: is not allowed with a StorageQueue action (it takes queueMessage)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := h.do(tc.method, path, adminToken, tc.body)
			code, msg := r.errorBody(t)
			if r.status != http.StatusBadRequest || code != "BadRequest" || !strings.Contains(msg, tc.msg) {
				t.Fatalf("%d %s %q, want 400 BadRequest with %q", r.status, code, msg, tc.msg)
			}
			if strings.Contains(msg, "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw") {
				t.Errorf("the answer repeats a secret: %s", msg)
			}
			if after := h.storedJob("j"); after.Version != before.Version {
				t.Fatalf("the job changed: version %d (was %d)", after.Version, before.Version)
			}
		})
	}
}
