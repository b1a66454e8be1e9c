package main

import (
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
)

// minTokenLength is the shortest token the daemon accepts: 32 characters (a generated admin
// token is 43, 32 random bytes in base64). A short token can be guessed by anyone who can reach
// the API.
const minTokenLength = 32

// checkTokenLength refuses a token shorter than minTokenLength; what names where it came from.
// The error never repeats the token.
func checkTokenLength(what, token string) error {
	if len(token) < minTokenLength {
		return fmt.Errorf("%s: the token has %d characters, fewer than %d: use a long random one "+
			"(such as `openssl rand -base64 32`)", what, len(token), minTokenLength)
	}
	return nil
}

// readTokenFile reads a file of tokens, refusing one that a group or other users can read (or
// write): tokens are credentials, the file must be the daemon user's alone (chmod 600 or 400).
func readTokenFile(flagName, path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", flagName, err)
	}
	defer func() { _ = f.Close() }()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", flagName, err)
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return nil, fmt.Errorf("%s %s is readable or writable by group or others (mode %04o): "+
			"a token file must be private to the daemon's user (chmod 600 %s)", flagName, path, perm, path)
	}
	b, err := io.ReadAll(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", flagName, err)
	}
	return b, nil
}

// warnPlainHTTP logs a warning when the API is served without TLS on an address other hosts can
// reach: bearer tokens would cross the network in clear.
func warnPlainHTTP(log *slog.Logger, addr net.Addr, tls bool) {
	tcp, ok := addr.(*net.TCPAddr)
	if tls || !ok || tcp.IP.IsLoopback() {
		return
	}
	log.Warn("serving plain HTTP on an address other hosts can reach: bearer tokens and job secrets cross the network in clear; "+
		"serve TLS (--tls-cert, --tls-key) or listen on loopback behind a TLS proxy", "address", addr.String())
}
