// Package secret seals the write-only fields of a job (passwords, pfx, OAuth secret, SAS token and
// key) with AES-256-GCM before they reach the store, and opens them for the dispatcher. The key is
// kept in its own file, apart from the database, so a copy of the database alone reveals nothing.
//
// A sealed value is bound to its job: the job's canonical ARM id (store.JobKey.CanonicalID) is the
// AEAD's associated data, so a value copied into another job's row (or sent by a client as its
// own) does not open there. Format: "sealed:v2:" + base64(nonce || ciphertext).
//
// "sealed:v1:" values (before 0.1.0, not bound to a job) are opened only by the start-up
// migration (Migrate), which re-seals them bound to the job holding them.
package secret

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
)

const (
	// Prefix starts every sealed value, of any version: a client value starting with it (in any
	// case) is refused by the API.
	Prefix = "sealed:"
	// prefix marks a value sealed bound to its job.
	prefix = "sealed:v2:"
	// prefixV1 marks a value sealed by an older daemon, bound to nothing.
	prefixV1 = "sealed:v1:"
)

// ErrWrongOwner is returned by Open for a value that does not open for the job it is opened for:
// sealed for another job (copied), sealed with another key, or tampered with.
var ErrWrongOwner = errors.New("the sealed value does not open for this job: it was sealed for another job or with another key")

// Box seals and opens secrets with one key.
type Box struct {
	aead  cipher.AEAD
	check string
}

// New returns a Box for a 32-byte key.
func New(key []byte) (*Box, error) {
	if len(key) != 32 {
		return nil, fmt.Errorf("secret key: want 32 bytes, got %d", len(key))
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("secret key: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("secret key: %w", err)
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte("scheduler secret key check v1"))
	return &Box{aead: aead, check: "hmac-sha256:" + base64.RawStdEncoding.EncodeToString(mac.Sum(nil))}, nil
}

// Check is the key's check value: an HMAC of a constant under the key, which identifies the key
// without revealing it. The store keeps it so that a start with another key is refused.
func (b *Box) Check() string { return b.check }

// Load reads the base64 key at path; a missing file is an error wrapping os.ErrNotExist.
func Load(path string) (*Box, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("secret key %s: %w", path, err)
	}
	key, err := base64.StdEncoding.DecodeString(strings.TrimSpace(string(data)))
	if err != nil {
		return nil, fmt.Errorf("secret key %s: %w", path, err)
	}
	b, err := New(key)
	if err != nil {
		return nil, fmt.Errorf("secret key %s: %w", path, err)
	}
	return b, nil
}

// Create writes a new random key at path (mode 0600; the file must not exist).
func Create(path string) (*Box, error) {
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return nil, fmt.Errorf("secret key: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("secret key %s: %w", path, err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, fmt.Errorf("secret key %s: %w", path, err)
	}
	if _, err := f.WriteString(base64.StdEncoding.EncodeToString(key) + "\n"); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("secret key %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("secret key %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return nil, fmt.Errorf("secret key %s: %w", path, err)
	}
	return New(key)
}

// LoadOrCreate reads the key at path, creating it when absent, and reports whether it created
// it. The daemon does not use it (see Startup, which never replaces a key the database needs);
// tests with a fresh database do.
func LoadOrCreate(path string) (*Box, bool, error) {
	b, err := Load(path)
	if err == nil {
		return b, false, nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return nil, false, err
	}
	b, err = Create(path)
	return b, err == nil, err
}

// Seal encrypts plain bound to the job owner; "" stays "". Every other value is sealed, one that
// looks sealed too (the API refuses those before).
func (b *Box) Seal(plain string, owner store.JobKey) (string, error) {
	if plain == "" {
		return "", nil
	}
	nonce := make([]byte, b.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return "", fmt.Errorf("seal: %w", err)
	}
	out := b.aead.Seal(nonce, nonce, []byte(plain), []byte(owner.CanonicalID()))
	return prefix + base64.StdEncoding.EncodeToString(out), nil
}

// Open decrypts a value sealed for the job owner; "" stays "". A value sealed for another job, or
// an unbound v1 value, does not open (ErrWrongOwner, or an error saying what is wrong).
func (b *Box) Open(sealed string, owner store.JobKey) (string, error) {
	if sealed == "" {
		return "", nil
	}
	if strings.HasPrefix(sealed, prefixV1) {
		return "", errors.New("open: the value is sealed in the old unbound format (sealed:v1), which only the start-up migration opens")
	}
	if !strings.HasPrefix(sealed, prefix) {
		return "", errors.New("open: value is not sealed")
	}
	return b.open(sealed[len(prefix):], []byte(owner.CanonicalID()))
}

func (b *Box) open(payload string, aad []byte) (string, error) {
	raw, err := base64.StdEncoding.DecodeString(payload)
	if err != nil {
		return "", fmt.Errorf("open: %w", err)
	}
	n := b.aead.NonceSize()
	if len(raw) < n {
		return "", errors.New("open: sealed value too short")
	}
	plain, err := b.aead.Open(nil, raw[:n], raw[n:], aad)
	if err != nil {
		return "", fmt.Errorf("open: %w", ErrWrongOwner)
	}
	return string(plain), nil
}

// IsSealed reports whether s is a value sealed in the current, job-bound format.
func IsSealed(s string) bool { return strings.HasPrefix(s, prefix) }

// LooksSealed reports whether s starts like a sealed value of any version, in any case: what the
// API refuses from clients.
func LooksSealed(s string) bool {
	return len(s) >= len(Prefix) && strings.EqualFold(s[:len(Prefix)], Prefix)
}
