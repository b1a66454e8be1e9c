package api

import (
	"net/http"
	"strings"
	"testing"
)

// TestSealedValuesFromClientsAreRefused: a tenant who copies a victim's sealed password out of the
// database file into its own job's PUT or PATCH gets 400 naming the field, and nothing it stores
// changes: the daemon never opens that value for it. Any value starting with "sealed:", in any
// case and in any secret field, is refused the same way.
func TestSealedValuesFromClientsAreRefused(t *testing.T) {
	h := newHarness(t)
	h.collection(collPath, `{"sku":{"name":"Standard"}}`)
	victimPath := collPath + "/jobs/victim" + apiVersion
	thiefPath := collPath + "/jobs/thief" + apiVersion
	h.must(http.StatusCreated, http.MethodPut, victimPath, `{"properties":{"action":{"type":"Https","request":{"uri":"https://victim.example/","method":"GET",`+
		`"authentication":{"type":"Basic","username":"alice","password":"hunter2"}}}}}`)
	stolen := h.storedJob("victim").Properties.Action.Request.Authentication.Password
	if !strings.HasPrefix(stolen, "sealed:") {
		t.Fatalf("victim's stored password %q", stolen)
	}
	h.must(http.StatusCreated, http.MethodPut, thiefPath, `{"properties":{"action":{"type":"Http","request":{"uri":"http://thief.example/","method":"GET",`+
		`"authentication":{"type":"Basic","username":"mallory","password":"own"}}}}}`)
	before := h.storedJob("thief")

	basic := func(pw string) string {
		return `{"properties":{"action":{"type":"Http","request":{"uri":"http://thief.example/","method":"GET",` +
			`"authentication":{"type":"Basic","username":"alice","password":"` + pw + `"}}}}}`
	}
	const pwField = "properties.action.request.authentication.password"
	for _, tc := range []struct {
		name, method, body, field string
	}{
		{"PUT with the victim's sealed password", http.MethodPut, basic(stolen), pwField},
		{"PATCH with the victim's sealed password", http.MethodPatch,
			`{"properties":{"action":{"request":{"authentication":{"password":"` + stolen + `"}}}}}`, pwField},
		{"PUT with another case", http.MethodPut, basic("SEALED:" + strings.TrimPrefix(stolen, "sealed:")), pwField},
		{"PUT with an old-format value", http.MethodPut, basic("sealed:v1:" + strings.TrimPrefix(stolen, "sealed:v2:")), pwField},
		{"PATCH of the error action's SAS token", http.MethodPatch,
			`{"properties":{"action":{"errorAction":{"type":"StorageQueue","queueMessage":{"storageAccount":"a","queueName":"q","sasToken":"sealed:v2:AAAA","message":"m"}}}}}`,
			"properties.action.errorAction.queueMessage.sasToken"},
		{"PUT of an OAuth secret", http.MethodPut,
			`{"properties":{"action":{"type":"Http","request":{"uri":"http://thief.example/","method":"GET",` +
				`"authentication":{"type":"ActiveDirectoryOAuth","tenant":"t","audience":"a","clientId":"c","secret":"` + stolen + `"}}}}}`,
			"properties.action.request.authentication.secret"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := h.do(tc.method, thiefPath, subAToken, tc.body)
			code, msg := r.errorBody(t)
			if r.status != http.StatusBadRequest || code != "BadRequest" || !strings.HasPrefix(msg, tc.field+": ") {
				t.Fatalf("%d %s %q, want 400 BadRequest naming %s", r.status, code, msg, tc.field)
			}
			if strings.Contains(msg, strings.TrimPrefix(stolen, "sealed:v2:")) {
				t.Errorf("the answer repeats the value: %s", msg)
			}
			after := h.storedJob("thief")
			if after.Version != before.Version || after.Properties.Action.Request.Authentication.Password != before.Properties.Action.Request.Authentication.Password {
				t.Fatalf("the thief's job changed: version %d (was %d)", after.Version, before.Version)
			}
		})
	}
	// The victim's job still opens for the victim.
	p := h.storedJob("victim").Properties
	if err := h.box.OpenJob(&p, h.storedJob("victim").Key); err != nil || p.Action.Request.Authentication.Password != "hunter2" {
		t.Fatalf("victim: %v %q", err, p.Action.Request.Authentication.Password)
	}
}
