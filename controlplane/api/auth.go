package api

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/schedulerhq/terraform-provider-scheduler/internal/arm"
)

// Tokens are the bearer tokens the API accepts: admin tokens (every subscription), tokens
// scoped to one subscription, and metrics tokens (GET /metrics only: they see no tenant's jobs).
// Only their SHA-256 hashes are kept, and a presented token is compared with every one of them
// in constant time.
type Tokens struct {
	entries []tokenEntry
}

type tokenEntry struct {
	hash         [sha256.Size]byte
	subscription string // "": admin (unless metrics)
	metrics      bool   // reads /metrics only
}

// NewTokens returns the tokens: admin (required) and scoped, subscription to token.
func NewTokens(admin string, scoped map[string]string) (*Tokens, error) {
	if admin == "" {
		return nil, errors.New("an admin token is required")
	}
	t := &Tokens{entries: []tokenEntry{{hash: sha256.Sum256([]byte(admin))}}}
	for sub, tok := range scoped {
		if sub == "" || tok == "" {
			return nil, fmt.Errorf("scoped token for subscription %q: subscription and token must not be empty", sub)
		}
		if err := arm.Check(arm.Subscription, sub); err != nil {
			return nil, fmt.Errorf("scoped token: %w", err)
		}
		if tok == admin {
			return nil, fmt.Errorf("scoped token for subscription %q: equals the admin token", sub)
		}
		t.entries = append(t.entries, tokenEntry{hash: sha256.Sum256([]byte(tok)), subscription: sub})
	}
	return t, nil
}

// WithMetricsToken returns the tokens with a metrics token added: it reads GET /metrics (the
// daemon-wide figures) and nothing else, so a monitoring system holds no tenant's access.
func (t *Tokens) WithMetricsToken(token string) (*Tokens, error) {
	if token == "" {
		return nil, errors.New("the metrics token must not be empty")
	}
	h := sha256.Sum256([]byte(token))
	for _, e := range t.entries {
		if subtle.ConstantTimeCompare(h[:], e.hash[:]) == 1 {
			return nil, errors.New("the metrics token equals another token")
		}
	}
	out := &Tokens{entries: append(append([]tokenEntry(nil), t.entries...), tokenEntry{hash: h, metrics: true})}
	return out, nil
}

// principal is who a request is from.
type principal struct {
	admin        bool
	subscription string
	metrics      bool // the metrics token: /metrics only
}

// allows reports whether the principal may see and change the subscription's resources: the
// names compare as the store's keys and the routes compare them (arm.Same).
func (p principal) allows(subscription string) bool {
	if p.metrics {
		return false
	}
	return p.admin || arm.Same(p.subscription, subscription)
}

// readsMetrics: the principal may read the daemon-wide figures (/metrics): an admin or the
// metrics token, never a subscription's token.
func (p principal) readsMetrics() bool { return p.admin || p.metrics }

// identify returns the principal of a token; ok is false when the token is unknown.
func (t *Tokens) identify(token string) (principal, bool) {
	h := sha256.Sum256([]byte(token))
	found := -1
	for i := range t.entries {
		// Compare with every entry, so the time taken does not tell which one matched.
		if subtle.ConstantTimeCompare(h[:], t.entries[i].hash[:]) == 1 && found < 0 {
			found = i
		}
	}
	if found < 0 {
		return principal{}, false
	}
	e := t.entries[found]
	return principal{admin: e.subscription == "" && !e.metrics, subscription: e.subscription, metrics: e.metrics}, true
}

// authenticate checks the request's bearer token: 401 AuthenticationFailed without a known one.
func (t *Tokens) authenticate(r *http.Request) (principal, *apiError) {
	h := r.Header.Get("Authorization")
	scheme, token, ok := strings.Cut(h, " ")
	if h == "" {
		return principal{}, &apiError{http.StatusUnauthorized, codeAuthentication, "the request has no credential: send Authorization: Bearer <token>"}
	}
	if !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(token) == "" {
		return principal{}, &apiError{http.StatusUnauthorized, codeAuthentication, "the Authorization header must be Bearer <token>"}
	}
	p, known := t.identify(strings.TrimSpace(token))
	if !known {
		return principal{}, &apiError{http.StatusUnauthorized, codeAuthentication, "the bearer token is not valid"}
	}
	return p, nil
}

// Principal is who a token belongs to, for the daemon's own front ends (the dashboard): an admin
// (every subscription) or one subscription.
type Principal struct {
	Admin        bool
	Subscription string // "" for an admin
}

// Allows reports whether the principal may see and change the subscription's resources (the
// API's own rule: subscription ids compare as arm.Same does).
func (p Principal) Allows(subscription string) bool {
	return principal{admin: p.Admin, subscription: p.Subscription}.allows(subscription)
}

// Identify returns the principal of a token, checked as the API checks a bearer token (in
// constant time against every known one); ok is false when the token is unknown or is a
// metrics token (it signs in nowhere).
func (t *Tokens) Identify(token string) (p Principal, ok bool) {
	q, ok := t.identify(token)
	if q.metrics {
		return Principal{}, false
	}
	return Principal{Admin: q.admin, Subscription: q.subscription}, ok
}

// principalKey is the context key of a principal authenticated outside the API (As).
type principalKey struct{}

// As returns a handler that answers API requests as p, without a bearer token: for the
// daemon's own front ends that authenticated their user themselves (the dashboard's session).
// Everything else is the API's: scoping, validation, limits, logging and metrics.
func (s *Server) As(p Principal) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), principalKey{}, p)))
	})
}

// authenticateRequest returns the principal set by As, else the one of the bearer token.
func (s *Server) authenticateRequest(r *http.Request) (principal, *apiError) {
	if p, ok := r.Context().Value(principalKey{}).(Principal); ok {
		return principal{admin: p.Admin, subscription: p.Subscription}, nil
	}
	return s.tokens.authenticate(r)
}
