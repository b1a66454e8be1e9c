package main

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
)

// adminToken returns the admin token: the configured one, else the one in <data>/admin-token,
// else a new one written there (mode 0600). The log names the file, never the token.
func adminToken(cfg *serveConfig, log *slog.Logger) (string, error) {
	if cfg.adminToken != "" {
		return cfg.adminToken, nil
	}
	path := filepath.Join(cfg.data, "admin-token")
	b, err := os.ReadFile(path)
	if err == nil && strings.TrimSpace(string(b)) != "" {
		log.Info("using the admin token in the data directory", "path", path)
		return strings.TrimSpace(string(b)), nil
	}
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("admin token: %w", err)
	}
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return "", fmt.Errorf("admin token: %w", err)
	}
	tok := base64.RawURLEncoding.EncodeToString(raw)
	if err := writeFileAtomic(path, []byte(tok+"\n"), 0o600); err != nil {
		return "", fmt.Errorf("admin token: %w", err)
	}
	log.Warn("generated an admin token (no --admin-token-file or SCHEDULERD_ADMIN_TOKEN given)", "path", path)
	return tok, nil
}

// privateDir creates the data directory (mode 0700) or makes an existing one 0700 whatever its
// mode was, and checks that a file can be created in it: a directory that cannot be written stops
// the daemon at start with an error naming it, not at its first write.
func privateDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("data directory %s: %w", dir, err)
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return fmt.Errorf("data directory %s: %w", dir, err)
	}
	f, err := os.CreateTemp(dir, ".write-probe-*")
	if err != nil {
		return fmt.Errorf("data directory %s is not writable: %w", dir, err)
	}
	name := f.Name()
	_, err = f.WriteString("probe")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if rerr := os.Remove(name); err == nil {
		err = rerr
	}
	if err != nil {
		return fmt.Errorf("data directory %s is not writable: %w", dir, err)
	}
	return nil
}

// writeFileAtomic writes a file through a temporary file and a rename, so that readers never see
// a partial file.
func writeFileAtomic(path string, data []byte, perm os.FileMode) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp := f.Name()
	fail := func(err error) error {
		_ = f.Close()
		_ = os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Chmod(perm); err != nil {
		return fail(err)
	}
	if _, err := f.Write(data); err != nil {
		return fail(err)
	}
	if err := f.Sync(); err != nil {
		return fail(err)
	}
	if err := f.Close(); err != nil {
		return fail(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
