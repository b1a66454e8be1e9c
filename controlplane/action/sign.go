package action

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/internal/jobdef"
)

// Standard Webhooks headers (SPEC 8: action.request.signing).
const (
	HeaderWebhookID        = "webhook-id"
	HeaderWebhookTimestamp = "webhook-timestamp"
	HeaderWebhookSignature = "webhook-signature"
)

// sign sets the Standard Webhooks headers of a request: webhook-id (the execution tag, the same
// on every retry), webhook-timestamp (the attempt's time, Unix seconds) and webhook-signature,
// "v1," and the base64 HMAC-SHA256 of "id.timestamp.body" under each secret (the current one
// first, then the previous one during a rotation), space separated. An error never quotes a
// secret.
func sign(h http.Header, id string, at time.Time, body []byte, secrets ...string) error {
	ts := strconv.FormatInt(at.Unix(), 10)
	var sigs []string
	for i, s := range secrets {
		if s == "" {
			continue
		}
		key, err := jobdef.SigningKey(s)
		if err != nil {
			name := "secret"
			if i > 0 {
				name = "previousSecret"
			}
			return fmt.Errorf("%s %v", name, err)
		}
		mac := hmac.New(sha256.New, key)
		mac.Write([]byte(id))
		mac.Write([]byte{'.'})
		mac.Write([]byte(ts))
		mac.Write([]byte{'.'})
		mac.Write(body)
		sigs = append(sigs, "v1,"+base64.StdEncoding.EncodeToString(mac.Sum(nil)))
	}
	h["Webhook-Id"] = []string{id}
	h["Webhook-Timestamp"] = []string{ts}
	h["Webhook-Signature"] = []string{strings.Join(sigs, " ")}
	return nil
}
