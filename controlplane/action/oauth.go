package action

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/internal/clock"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"
)

// tokenEarly is how long before its expiry a cached token is replaced.
const tokenEarly = 5 * time.Minute

// tokenCache holds ActiveDirectoryOAuth client-credentials tokens until shortly before they
// expire. Concurrent attempts needing the same token share one request.
type tokenCache struct {
	clock clock.Clock
	mu    sync.Mutex
	byKey map[string]*tokenEntry
}

type tokenEntry struct {
	mu      sync.Mutex // held while fetching
	token   string
	expires time.Time
}

func newTokenCache(c clock.Clock) *tokenCache {
	return &tokenCache{clock: c, byKey: map[string]*tokenEntry{}}
}

func (tc *tokenCache) get(ctx context.Context, client *http.Client, authority string, a *wire.HTTPAuthentication) (string, error) {
	sum := sha256.Sum256([]byte(strings.Join([]string{authority, a.Tenant, a.ClientID, a.Audience, a.Secret}, "\x00")))
	k := string(sum[:])
	tc.mu.Lock()
	e, ok := tc.byKey[k]
	if !ok {
		e = &tokenEntry{}
		tc.byKey[k] = e
	}
	tc.mu.Unlock()

	e.mu.Lock()
	defer e.mu.Unlock()
	now := tc.clock.Now()
	if e.token != "" && now.Before(e.expires.Add(-tokenEarly)) {
		return e.token, nil
	}
	tok, life, err := fetchToken(ctx, client, authority, a)
	if err != nil {
		return "", err
	}
	e.token, e.expires = tok, now.Add(life)
	return tok, nil
}

// fetchToken asks {authority}/{tenant}/oauth2/token for a client-credentials token.
func fetchToken(ctx context.Context, client *http.Client, authority string, a *wire.HTTPAuthentication) (string, time.Duration, error) {
	form := url.Values{
		"grant_type":    {"client_credentials"},
		"client_id":     {a.ClientID},
		"client_secret": {a.Secret},
		"resource":      {a.Audience},
	}
	endpoint := authority + "/" + url.PathEscape(a.Tenant) + "/oauth2/token"
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return "", 0, fmt.Errorf("token request: %w", err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return "", 0, fmt.Errorf("token request to %s: %s", endpoint, redactURLError(err))
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if err != nil {
		return "", 0, fmt.Errorf("token response: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		var e struct {
			Error       string `json:"error"`
			Description string `json:"error_description"`
		}
		_ = json.Unmarshal(body, &e)
		return "", 0, fmt.Errorf("token endpoint %s answered %s %s %s", endpoint, resp.Status, e.Error, e.Description)
	}
	var t struct {
		AccessToken string          `json:"access_token"`
		ExpiresIn   json.RawMessage `json:"expires_in"` // a number, or a string (AAD v1)
	}
	if err := json.Unmarshal(body, &t); err != nil {
		return "", 0, fmt.Errorf("token response: %w", err)
	}
	if t.AccessToken == "" {
		return "", 0, errors.New("token response without access_token")
	}
	secs, err := strconv.Atoi(strings.Trim(string(t.ExpiresIn), `"`))
	if err != nil || secs <= 0 {
		secs = 3600
	}
	return t.AccessToken, time.Duration(secs) * time.Second, nil
}
