package provider

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
)

// writeServerCert writes a self-signed certificate for 127.0.0.1 and its key into dir.
func writeServerCert(t *testing.T, dir string) (certFile, keyFile, certPEM string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "schedulerd test"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IPAddresses:           []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certPEM = string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, []byte(certPEM), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile, certPEM
}

// The provider block's TLS settings against a daemon serving HTTPS with its own certificate.
func TestAccProvider_tls(t *testing.T) {
	if os.Getenv("TF_ACC") == "" {
		t.Skip("acceptance test: set TF_ACC=1 (make testacc), as resource.Test does")
	}
	dir := t.TempDir()
	certFile, keyFile, certPEM := writeServerCert(t, dir)
	stop, addr, err := startDaemon(os.Getenv(envDaemonBinary), dir, "--tls-cert", certFile, "--tls-key", keyFile)
	if err != nil {
		t.Fatalf("start a TLS daemon: %v", err)
	}
	defer stop()
	config := func(tls string) string {
		return fmt.Sprintf(`
provider "scheduler" {
  endpoint = "https://%s"
  token    = %q
  %s
}

resource "scheduler_job_collection" "test" {
  name = "over-tls"
}
`, addr, accToken, tls)
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6Factories(),
		Steps: []resource.TestStep{
			{
				Config: config(fmt.Sprintf("ca_cert_pem = %q", certPEM)),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("scheduler_job_collection.test", tfjsonpath.New("id"),
						knownvalue.StringExact("/subscriptions/default/resourceGroups/default/providers/Microsoft.Scheduler/jobCollections/over-tls")),
				},
			},
			{ // the system roots do not trust it
				Config:      config(""),
				PlanOnly:    true,
				ExpectError: messageRE("certificate signed by unknown authority"),
			},
			{ // unless verification is off
				Config:   config("insecure_skip_verify = true"),
				PlanOnly: true,
			},
		},
	})
}
