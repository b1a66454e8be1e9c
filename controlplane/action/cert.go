package action

import (
	"crypto/sha256"
	"crypto/tls"
	"encoding/base64"
	"fmt"
	"net/http"

	"software.sslmate.com/src/go-pkcs12"
)

// maxCertClients bounds the per-certificate client cache; past it the cache starts over.
const maxCertClients = 1024

// certClient returns a client presenting the PKCS#12 certificate (base64 pfx + password). Each
// distinct certificate gets its own transport (client certificates are per TLS connection), kept
// so connections to the target are reused.
func (e *Executor) certClient(pfx, password string) (*http.Client, error) {
	sum := sha256.Sum256([]byte(pfx + "\x00" + password))
	id := string(sum[:])
	e.mu.Lock()
	c, ok := e.certs[id]
	e.mu.Unlock()
	if ok {
		return c, nil
	}
	cert, err := LoadPFX(pfx, password)
	if err != nil {
		return nil, err
	}
	t := e.transport.Clone()
	tc := &tls.Config{MinVersion: tls.VersionTLS12}
	if t.TLSClientConfig != nil {
		tc = t.TLSClientConfig.Clone()
	}
	tc.Certificates = []tls.Certificate{cert}
	t.TLSClientConfig = tc
	c = &http.Client{Transport: t, CheckRedirect: checkRedirect}
	e.mu.Lock()
	if len(e.certs) >= maxCertClients {
		for k, old := range e.certs {
			if tr, ok := old.Transport.(interface{ CloseIdleConnections() }); ok {
				tr.CloseIdleConnections()
			}
			delete(e.certs, k)
		}
	}
	e.certs[id] = c
	e.mu.Unlock()
	return c, nil
}

// LoadPFX decodes a base64 PKCS#12 file into a TLS certificate with its chain.
func LoadPFX(pfx, password string) (tls.Certificate, error) {
	raw, err := base64.StdEncoding.DecodeString(pfx)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("pfx is not base64: %w", err)
	}
	key, leaf, chain, err := pkcs12.DecodeChain(raw, password)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("pfx: %w", err)
	}
	cert := tls.Certificate{PrivateKey: key, Leaf: leaf, Certificate: [][]byte{leaf.Raw}}
	for _, c := range chain {
		cert.Certificate = append(cert.Certificate, c.Raw)
	}
	return cert, nil
}
