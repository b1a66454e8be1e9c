package provider

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha1" //nolint:gosec // the certificate thumbprint is SHA-1 by definition
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/acctest"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	"software.sslmate.com/src/go-pkcs12"
)

// testPfx makes a self-signed client certificate as a base64 PKCS#12 file; it returns the file
// and the certificate's thumbprint.
func testPfx(t *testing.T, cn, password string, notAfter time.Time) (pfx, thumbprint string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: cn},
		NotBefore:    notAfter.AddDate(-1, 0, 0),
		NotAfter:     notAfter,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	data, err := pkcs12.Modern.Encode(key, cert, nil, password)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha1.Sum(der) //nolint:gosec // see the import
	return base64.StdEncoding.EncodeToString(data), strings.ToUpper(hex.EncodeToString(sum[:]))
}

func authConfig(coll, pfx, pfxPassword, oauthSecret string) string {
	return fmt.Sprintf(`
resource "scheduler_job_collection" "test" {
  name = %q
}

resource "scheduler_job" "cert" {
  job_collection_id = scheduler_job_collection.test.id
  name              = "with-certificate"
  start_time        = "2030-01-01T00:00:00Z"
  action {
    type = "Https"
    request {
      uri    = "https://reports.example.com/send"
      method = "POST"
      authentication {
        client_certificate {
          pfx      = %q
          password = %q
        }
      }
    }
  }
  recurrence {
    frequency = "Month"
  }
}

resource "scheduler_job" "oauth" {
  job_collection_id = scheduler_job_collection.test.id
  name              = "with-oauth"
  start_time        = "2030-01-01T00:00:00Z"
  action {
    type = "Https"
    request {
      uri    = "https://batch.example.com/process"
      method = "POST"
      authentication {
        active_directory_oauth {
          tenant    = "contoso.onmicrosoft.com"
          audience  = "https://batch.example.com"
          client_id = "3f2b6c1e-8a5d-4b8e-9b61-2c7f0a9d4e11"
          secret    = %q
        }
      }
    }
  }
  recurrence {
    frequency = "Day"
  }
}
`, coll, pfx, pfxPassword, oauthSecret)
}

// Client certificates and OAuth secrets: write-only in the API, kept from the configuration,
// their changes applied; the certificate's details are read back.
func TestAccJob_authentication(t *testing.T) {
	coll := acctest.RandomWithPrefix("jc")
	notAfter := time.Date(2031, 6, 30, 12, 0, 0, 0, time.UTC)
	pfx1, thumb1 := testPfx(t, "scheduler-test", "pfx-pass-1", notAfter)
	pfx2, thumb2 := testPfx(t, "scheduler-test-2", "pfx-pass-2", notAfter)
	certAuth := tfjsonpath.New("action").AtMapKey("request").AtMapKey("authentication").AtMapKey("client_certificate")
	oauth := tfjsonpath.New("action").AtMapKey("request").AtMapKey("authentication").AtMapKey("active_directory_oauth")
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6Factories(),
		Steps: []resource.TestStep{
			{
				Config: authConfig(coll, pfx1, "pfx-pass-1", "oauth-secret-1"),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("scheduler_job.cert", certAuth.AtMapKey("certificate_thumbprint"), knownvalue.StringExact(thumb1)),
					statecheck.ExpectKnownValue("scheduler_job.cert", certAuth.AtMapKey("certificate_subject_name"), knownvalue.StringExact("CN=scheduler-test")),
					statecheck.ExpectKnownValue("scheduler_job.cert", certAuth.AtMapKey("certificate_expiration_date"), knownvalue.StringExact("2031-06-30T12:00:00Z")),
					statecheck.ExpectKnownValue("scheduler_job.cert", certAuth.AtMapKey("password"), knownvalue.StringExact("pfx-pass-1")),
					statecheck.ExpectKnownValue("scheduler_job.oauth", oauth.AtMapKey("client_id"), knownvalue.StringExact("3f2b6c1e-8a5d-4b8e-9b61-2c7f0a9d4e11")),
					statecheck.ExpectKnownValue("scheduler_job.oauth", oauth.AtMapKey("secret"), knownvalue.StringExact("oauth-secret-1")),
				},
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
			},
			{ // new certificate and new OAuth secret: both updated in place
				Config: authConfig(coll, pfx2, "pfx-pass-2", "oauth-secret-2"),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction("scheduler_job.cert", plancheck.ResourceActionUpdate),
						plancheck.ExpectResourceAction("scheduler_job.oauth", plancheck.ResourceActionUpdate),
					},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("scheduler_job.cert", certAuth.AtMapKey("certificate_thumbprint"), knownvalue.StringExact(thumb2)),
					statecheck.ExpectKnownValue("scheduler_job.cert", certAuth.AtMapKey("certificate_subject_name"), knownvalue.StringExact("CN=scheduler-test-2")),
					statecheck.ExpectKnownValue("scheduler_job.oauth", oauth.AtMapKey("secret"), knownvalue.StringExact("oauth-secret-2")),
				},
			},
			{
				ResourceName:            "scheduler_job.cert",
				ImportState:             true,
				ImportStateVerify:       true,
				ImportStateVerifyIgnore: []string{"action.request.authentication.client_certificate.pfx", "action.request.authentication.client_certificate.password"},
			},
			{
				ResourceName:            "scheduler_job.oauth",
				ImportState:             true,
				ImportStateVerify:       true,
				ImportStateVerifyIgnore: []string{"action.request.authentication.active_directory_oauth.secret"},
			},
		},
	})
}

// A wrong pfx password is caught at plan time by the daemon's own check.
func TestAccJob_planRejectsWrongPfxPassword(t *testing.T) {
	pfx, _ := testPfx(t, "scheduler-test", "right", time.Date(2031, 6, 30, 12, 0, 0, 0, time.UTC))
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6Factories(),
		Steps: []resource.TestStep{{
			Config:      authConfig(acctest.RandomWithPrefix("jc"), pfx, "wrong", "oauth-secret"),
			PlanOnly:    true,
			ExpectError: messageRE("action.request.authentication.client_certificate.pfx: cannot be opened: the password is incorrect"),
		}},
	})
}
