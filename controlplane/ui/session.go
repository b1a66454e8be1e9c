package ui

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/api"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/clock"
)

// cookieName is the session cookie's name; its path is /ui/.
const cookieName = "scheduler_ui_session"

// maxSessions bounds the sessions kept in memory; signing in beyond it ends the session closest
// to expiry.
const maxSessions = 10000

// session is a signed-in user. The token is not kept: only who it identified.
type session struct {
	principal api.Principal
	csrf      string // the per-session token every form and fetch() sends back
	expires   time.Time
	flash     string // a message for the next page (after a form's redirect)
}

// sessions is the server-side session map, keyed by the SHA-256 of the cookie's random id: a
// restart signs everyone out.
type sessions struct {
	mu    sync.Mutex
	m     map[[sha256.Size]byte]*session
	ttl   time.Duration
	clock clock.Clock
}

func newSessions(ttl time.Duration, c clock.Clock) *sessions {
	return &sessions{m: map[[sha256.Size]byte]*session{}, ttl: ttl, clock: c}
}

func randomID() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("random session id: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// create starts a session for p and returns its cookie value.
func (s *sessions) create(p api.Principal) (string, error) {
	id, err := randomID()
	if err != nil {
		return "", err
	}
	csrf, err := randomID()
	if err != nil {
		return "", err
	}
	now := s.clock.Now()
	sess := &session{principal: p, csrf: csrf, expires: now.Add(s.ttl)}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.m) >= maxSessions {
		var oldest [sha256.Size]byte
		var at time.Time
		for k, v := range s.m {
			if !v.expires.After(now) {
				delete(s.m, k)
				continue
			}
			if at.IsZero() || v.expires.Before(at) {
				oldest, at = k, v.expires
			}
		}
		if len(s.m) >= maxSessions {
			delete(s.m, oldest)
		}
	}
	s.m[sha256.Sum256([]byte(id))] = sess
	return id, nil
}

// get returns the unexpired session of a cookie value (a copy), or nil.
func (s *sessions) get(id string) *session {
	if id == "" {
		return nil
	}
	k := sha256.Sum256([]byte(id))
	s.mu.Lock()
	defer s.mu.Unlock()
	sess, ok := s.m[k]
	if !ok {
		return nil
	}
	if !sess.expires.After(s.clock.Now()) {
		delete(s.m, k)
		return nil
	}
	c := *sess
	return &c
}

// takeFlash returns and clears a session's flash message.
func (s *sessions) takeFlash(id string) string {
	k := sha256.Sum256([]byte(id))
	s.mu.Lock()
	defer s.mu.Unlock()
	sess, ok := s.m[k]
	if !ok {
		return ""
	}
	f := sess.flash
	sess.flash = ""
	return f
}

func (s *sessions) setFlash(id, msg string) {
	k := sha256.Sum256([]byte(id))
	s.mu.Lock()
	defer s.mu.Unlock()
	if sess, ok := s.m[k]; ok {
		sess.flash = msg
	}
}

func (s *sessions) remove(id string) {
	k := sha256.Sum256([]byte(id))
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, k)
}

// sessionCookie is the cookie of a session: HttpOnly, SameSite=Strict, Secure when served over
// TLS, limited to /ui/ and expiring with the session.
func (s *Server) sessionCookie(value string, maxAge int) *http.Cookie {
	return &http.Cookie{
		Name:     cookieName,
		Value:    value,
		Path:     Prefix,
		MaxAge:   maxAge,
		HttpOnly: true,
		Secure:   s.tls,
		SameSite: http.SameSiteStrictMode,
	}
}

// checkOrigin refuses a cross-site change: Sec-Fetch-Site, when the browser sends it, must be
// same-origin, and Origin, when sent, must name this server's host.
func checkOrigin(r *http.Request) error {
	if v := r.Header.Get("Sec-Fetch-Site"); v != "" && v != "same-origin" {
		return fmt.Errorf("the request comes from another site (Sec-Fetch-Site: %s)", v)
	}
	if o := r.Header.Get("Origin"); o != "" {
		u, err := url.Parse(o)
		// The host must be this one; the scheme is not compared, so that a proxy that ends TLS in
		// front of the daemon works (Sec-Fetch-Site, which browsers compute with the scheme,
		// covers it).
		if err != nil || u.Host == "" || u.Host != r.Host || (u.Scheme != "http" && u.Scheme != "https") {
			return errors.New("the request comes from another origin")
		}
	}
	return nil
}

// checkCSRF checks a change of a signed-in user: the origin, and the session's token in the form
// (field csrf) or in the X-CSRF-Token header, compared in constant time.
func checkCSRF(r *http.Request, sess *session) error {
	if err := checkOrigin(r); err != nil {
		return err
	}
	tok := r.Header.Get("X-CSRF-Token")
	if tok == "" {
		tok = r.PostFormValue("csrf")
	}
	if tok == "" || subtle.ConstantTimeCompare([]byte(tok), []byte(sess.csrf)) != 1 {
		return errors.New("the form is stale or was not sent by this dashboard (CSRF token mismatch): reload the page")
	}
	return nil
}
