package action_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/action"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/clock"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"
)

// verifyStandardWebhook is a receiver's verification written from the Standard Webhooks
// specification (https://www.standardwebhooks.com, "Verifying webhook authenticity"), apart from
// the signing code: the key is the base64 after "whsec_"; the signed content is
// "{webhook-id}.{webhook-timestamp}.{body}"; webhook-signature holds space-delimited
// "v1,{base64 HMAC-SHA256}" signatures, any one of which may match; the timestamp must be within
// tolerance of now.
func verifyStandardWebhook(secret string, h http.Header, body []byte, now time.Time) error {
	id, ts, sigs := h.Get("webhook-id"), h.Get("webhook-timestamp"), h.Get("webhook-signature")
	if id == "" || ts == "" || sigs == "" {
		return errors.New("missing webhook headers")
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return fmt.Errorf("timestamp %q: %w", ts, err)
	}
	if d := now.Sub(time.Unix(sec, 0)); d > 5*time.Minute || d < -5*time.Minute {
		return fmt.Errorf("timestamp %s is %v away", ts, d)
	}
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil {
		return err
	}
	m := hmac.New(sha256.New, key)
	m.Write([]byte(id + "." + ts + "." + string(body)))
	want := m.Sum(nil)
	for _, s := range strings.Split(sigs, " ") {
		v, sig, ok := strings.Cut(s, ",")
		if !ok || v != "v1" {
			continue
		}
		got, err := base64.StdEncoding.DecodeString(sig)
		if err == nil && hmac.Equal(got, want) {
			return nil
		}
	}
	return errors.New("no matching signature")
}

const (
	// The secret of the specification's own test vectors, and two more.
	specSecret  = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	newSecret   = "whsec_QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo0NTY3ODk="
	otherSecret = "whsec_c29tZW9uZSBlbHNlJ3Mgc2VjcmV0IGtleSEh"
)

// TestSignedRequests: a signed Http action's request verifies, with the independent verifier
// above and with the specification's maintained Go library, under its secret and, during a
// rotation, under the previous one too; not under another secret, nor with a changed body.
// webhook-id is the execution tag; a retry (a second attempt) carries the same id.
func TestSignedRequests(t *testing.T) {
	rc := &recorder{status: http.StatusOK}
	srv := httptest.NewServer(rc)
	defer srv.Close()
	e := action.New(action.Config{})
	body := `{"event":"nightly"}`
	send := func(signing *wire.HTTPSigning, headers map[string]string) received {
		t.Helper()
		a := attempt("Http", nil)
		a.MainAction(&wire.JobAction{Type: "Http", Request: &wire.HTTPRequest{
			URI: srv.URL + "/hook", Method: "POST", Body: body, Signing: signing, Headers: headers}})
		if res := e.Do(t.Context(), a); !res.Success {
			t.Fatalf("attempt failed: %+v", res)
		}
		got := rc.requests()
		return got[len(got)-1]
	}
	verifyWithLibrary := func(secret string, r received) error {
		wh, err := standardwebhooks.NewWebhook(secret)
		if err != nil {
			return err
		}
		return wh.Verify([]byte(r.Body), r.Header)
	}

	one := send(&wire.HTTPSigning{Secret: specSecret}, map[string]string{"webhook-id": "spoofed"})
	if id := one.Header.Get("webhook-id"); id != "tag-1" {
		t.Errorf("webhook-id %q, want the execution tag", id)
	}
	if n := len(strings.Split(one.Header.Get("webhook-signature"), " ")); n != 1 {
		t.Errorf("%d signatures, want 1: %s", n, one.Header.Get("webhook-signature"))
	}
	if err := verifyStandardWebhook(specSecret, one.Header, []byte(one.Body), time.Now()); err != nil {
		t.Errorf("independent verifier: %v", err)
	}
	if err := verifyWithLibrary(specSecret, one); err != nil {
		t.Errorf("standard-webhooks library: %v", err)
	}
	if err := verifyWithLibrary(otherSecret, one); err == nil {
		t.Error("verifies under another secret")
	}
	if err := verifyStandardWebhook(specSecret, one.Header, []byte(body+" "), time.Now()); err == nil {
		t.Error("verifies with a changed body")
	}

	// A rotation: both secrets verify; a retry of the execution keeps its id.
	two := send(&wire.HTTPSigning{Secret: newSecret, PreviousSecret: specSecret}, nil)
	if n := len(strings.Split(two.Header.Get("webhook-signature"), " ")); n != 2 {
		t.Errorf("%d signatures during a rotation, want 2: %s", n, two.Header.Get("webhook-signature"))
	}
	for _, s := range []string{newSecret, specSecret} {
		if err := verifyStandardWebhook(s, two.Header, []byte(two.Body), time.Now()); err != nil {
			t.Errorf("independent verifier, %s: %v", s[:10], err)
		}
		if err := verifyWithLibrary(s, two); err != nil {
			t.Errorf("standard-webhooks library, %s: %v", s[:10], err)
		}
	}
	if err := verifyWithLibrary(otherSecret, two); err == nil {
		t.Error("rotation: verifies under another secret")
	}
	if two.Header.Get("webhook-id") != one.Header.Get("webhook-id") {
		t.Errorf("ids %q and %q differ for one execution", one.Header.Get("webhook-id"), two.Header.Get("webhook-id"))
	}

	// Unsigned: no webhook headers at all.
	plain := send(nil, nil)
	for _, h := range []string{"webhook-id", "webhook-timestamp", "webhook-signature"} {
		if v := plain.Header.Get(h); v != "" {
			t.Errorf("unsigned request has %s: %q", h, v)
		}
	}
}

// TestSignedTimestampIsTheAttemptTime: webhook-timestamp is the executor's clock at the attempt
// (Unix seconds).
func TestSignedTimestampIsTheAttemptTime(t *testing.T) {
	rc := &recorder{status: http.StatusOK}
	srv := httptest.NewServer(rc)
	defer srv.Close()
	at := time.Date(2026, 5, 4, 10, 30, 7, 0, time.UTC)
	e := action.New(action.Config{Clock: clock.NewFake(at)})
	a := attempt("Http", nil)
	a.MainAction(&wire.JobAction{Type: "Http", Request: &wire.HTTPRequest{URI: srv.URL, Method: "POST", Body: "b",
		Signing: &wire.HTTPSigning{Secret: specSecret}}})
	if res := e.Do(t.Context(), a); !res.Success {
		t.Fatal(res.Message)
	}
	r := rc.requests()[0]
	if got := r.Header.Get("webhook-timestamp"); got != strconv.FormatInt(at.Unix(), 10) {
		t.Fatalf("webhook-timestamp %s, want %d", got, at.Unix())
	}
	if err := verifyStandardWebhook(specSecret, r.Header, []byte(r.Body), at); err != nil {
		t.Fatal(err)
	}
}
