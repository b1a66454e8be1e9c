// Package testcert makes the self-signed certificates tests need: client certificates (as the
// base64 PKCS#12 an Https job's ClientCertificate authentication carries) and server certificates
// (as PEM files for the daemon's --tls-cert and --tls-key). Tests only.
package testcert

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha1" //nolint:gosec // the certificate thumbprint is SHA-1 by definition
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/hex"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"software.sslmate.com/src/go-pkcs12"
)

// Options describes a certificate. Zero times: valid from an hour ago to an hour ahead.
type Options struct {
	Subject   pkix.Name
	NotBefore time.Time
	NotAfter  time.Time
	// Serial is the serial number; 0: 1.
	Serial int64
	// Server makes a server certificate that is also its own CA (a client can trust it as a
	// root), for Hosts; otherwise a client certificate.
	Server bool
	// Hosts are the names and IP addresses a server certificate is for; none: 127.0.0.1.
	Hosts []string
}

// Cert is a certificate and its key.
type Cert struct {
	Key  *ecdsa.PrivateKey
	Cert *x509.Certificate
	DER  []byte
}

// New makes a self-signed certificate (P-256); it fails t on error.
func New(t testing.TB, o Options) *Cert {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	if o.NotBefore.IsZero() {
		o.NotBefore = time.Now().Add(-time.Hour)
	}
	if o.NotAfter.IsZero() {
		o.NotAfter = time.Now().Add(time.Hour)
	}
	if o.Serial == 0 {
		o.Serial = 1
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(o.Serial), Subject: o.Subject, NotBefore: o.NotBefore, NotAfter: o.NotAfter,
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	if o.Server {
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
		tmpl.KeyUsage |= x509.KeyUsageCertSign
		if len(o.Hosts) == 0 {
			o.Hosts = []string{"127.0.0.1"}
		}
		for _, h := range o.Hosts {
			if ip := net.ParseIP(h); ip != nil {
				tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
			} else {
				tmpl.DNSNames = append(tmpl.DNSNames, h)
			}
		}
		tmpl.BasicConstraintsValid, tmpl.IsCA = true, true
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return &Cert{Key: key, Cert: cert, DER: der}
}

// PFX returns the certificate and its key as a base64 PKCS#12 file sealed with password.
func (c *Cert) PFX(t testing.TB, password string) string {
	t.Helper()
	data, err := pkcs12.Modern.Encode(c.Key, c.Cert, nil, password)
	if err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(data)
}

// Thumbprint is the certificate's SHA-1 in upper-case hex, as Azure shows it.
func (c *Cert) Thumbprint() string {
	sum := sha1.Sum(c.DER) //nolint:gosec // see the import
	return strings.ToUpper(hex.EncodeToString(sum[:]))
}

// PEM is the certificate in PEM.
func (c *Cert) PEM() []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.DER})
}

// Pool is a certificate pool that trusts this certificate.
func (c *Cert) Pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(c.Cert)
	return p
}

// WriteFiles writes the certificate (cert.pem) and its PKCS#8 key (key.pem) into dir, mode 0600.
func (c *Cert) WriteFiles(t testing.TB, dir string) (certFile, keyFile string) {
	t.Helper()
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	c.Write(t, certFile, keyFile)
	return certFile, keyFile
}

// Write writes the certificate to certFile and its PKCS#8 key to keyFile, mode 0600.
func (c *Cert) Write(t testing.TB, certFile, keyFile string) {
	t.Helper()
	keyDER, err := x509.MarshalPKCS8PrivateKey(c.Key)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(certFile, c.PEM(), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
}
