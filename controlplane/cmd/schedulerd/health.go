package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/pem"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// healthUsage is the help of `schedulerd health`.
const healthUsage = `usage: schedulerd health [--url URL] [--tls-cert FILE] [--timeout D]

Asks a running daemon's /readyz and exits 0 when it answers 200 (ready), 1 otherwise: the health
check of a container image without curl. Without --url the address is the one serve would use,
read from the same environment: SCHEDULERD_LISTEN (a wildcard host is asked on loopback; port 0
reads <SCHEDULERD_DATA>/listen-address), https when SCHEDULERD_TLS_CERT is set.
`

// runHealth is `schedulerd health`: 0 ready, 1 not ready or unreachable, 2 bad usage.
func runHealth(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("schedulerd health", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, healthUsage)
		fs.PrintDefaults()
	}
	rawURL := fs.String("url", "", "the readiness URL to ask (default: from SCHEDULERD_LISTEN, SCHEDULERD_DATA and SCHEDULERD_TLS_CERT)")
	certFile := fs.String("tls-cert", getenv("SCHEDULERD_TLS_CERT"), "the daemon's PEM certificate: an https answer must present exactly this one [SCHEDULERD_TLS_CERT]")
	timeout := fs.Duration("timeout", 5*time.Second, "how long to wait for the answer")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "schedulerd health: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	target := *rawURL
	if target == "" {
		var err error
		if target, err = healthURL(getenv, *certFile != ""); err != nil {
			fmt.Fprintf(stderr, "schedulerd health: %v\n", err)
			return 1
		}
	}
	client, err := healthClient(*certFile)
	if err != nil {
		fmt.Fprintf(stderr, "schedulerd health: %v\n", err)
		return 1
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	status, body, err := getReady(ctx, client, target)
	if err != nil {
		fmt.Fprintf(stderr, "schedulerd health: %s: %v\n", target, err)
		return 1
	}
	if status != http.StatusOK {
		fmt.Fprintf(stderr, "schedulerd health: %s: not ready: %d %s\n", target, status, body)
		return 1
	}
	fmt.Fprintf(stdout, "ready: %s\n", body)
	return 0
}

// healthURL is the /readyz URL of the daemon serve would start from the same environment.
func healthURL(getenv func(string) string, tlsOn bool) (string, error) {
	listen := getenv("SCHEDULERD_LISTEN")
	if listen == "" {
		listen = "127.0.0.1:8480"
	}
	host, port, err := net.SplitHostPort(listen)
	if err != nil {
		return "", fmt.Errorf("SCHEDULERD_LISTEN %q: %w", listen, err)
	}
	if port == "0" {
		// A free port chosen at start: serve wrote it to <data>/listen-address.
		data := getenv("SCHEDULERD_DATA")
		if data == "" {
			data = "./data"
		}
		path := filepath.Join(data, "listen-address")
		b, err := os.ReadFile(path)
		if err != nil {
			return "", fmt.Errorf("SCHEDULERD_LISTEN %q has port 0 and the daemon's address is unknown: %w", listen, err)
		}
		if host, port, err = net.SplitHostPort(strings.TrimSpace(string(b))); err != nil {
			return "", fmt.Errorf("%s: %w", path, err)
		}
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		// Listening on every address: ask on loopback, of the same family.
		host = "127.0.0.1"
		if ip != nil && ip.To4() == nil {
			host = "::1"
		}
	}
	scheme := "http"
	if tlsOn {
		scheme = "https"
	}
	return scheme + "://" + net.JoinHostPort(host, port) + "/readyz", nil
}

// healthClient is the client that asks: with certFile, an https answer must present that very
// certificate (asked on loopback, the daemon's name rarely matches the address, so the check pins
// the certificate rather than its name); without, the system's roots verify it.
func healthClient(certFile string) (*http.Client, error) {
	transport := &http.Transport{Proxy: nil, DisableKeepAlives: true}
	if certFile != "" {
		b, err := os.ReadFile(certFile)
		if err != nil {
			return nil, fmt.Errorf("--tls-cert: %w", err)
		}
		block, _ := pem.Decode(b)
		if block == nil || block.Type != "CERTIFICATE" {
			return nil, fmt.Errorf("--tls-cert %s: no PEM certificate", certFile)
		}
		want := block.Bytes
		transport.TLSClientConfig = &tls.Config{
			MinVersion: tls.VersionTLS12,
			// Verification is done by VerifyConnection below: the certificate must be the one
			// in certFile, byte for byte.
			InsecureSkipVerify: true,
			VerifyConnection: func(cs tls.ConnectionState) error {
				if len(cs.PeerCertificates) == 0 || !bytes.Equal(cs.PeerCertificates[0].Raw, want) {
					return fmt.Errorf("the server's certificate is not the one in %s", certFile)
				}
				return nil
			},
		}
	}
	return &http.Client{Transport: transport, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}, nil
}

// getReady asks target and returns the status and the body (at most 4 KiB, trimmed).
func getReady(ctx context.Context, client *http.Client, target string) (int, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return 0, "", fmt.Errorf("request: %w", err)
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, "", fmt.Errorf("get: %w", err)
	}
	defer func() { _ = resp.Body.Close() }()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
	if err != nil {
		return 0, "", fmt.Errorf("read the answer: %w", err)
	}
	return resp.StatusCode, strings.TrimSpace(string(b)), nil
}
