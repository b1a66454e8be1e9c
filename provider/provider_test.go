package provider

import (
	"context"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	fwresource "github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-testing/config"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/schedulerhq/terraform-provider-scheduler/internal/client"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/testcert"
)

// The acceptance tests (TF_ACC=1) run against a real daemon: TestMain builds
// ./controlplane/cmd/schedulerd, starts it on a free port with a fresh data directory, and points
// the provider at it through SCHEDULER_ENDPOINT and SCHEDULER_TOKEN. terraform-plugin-testing
// drives a real tofu (TF_ACC_TERRAFORM_PATH=$(tools/tofu.sh)). See `make testacc`.

const accToken = "acceptance-test-token-0123456789abcdef0123456789abcdef"

// envDaemonBinary names the schedulerd binary TestMain built, for tests that start their own.
const envDaemonBinary = "SCHEDULER_ACC_SCHEDULERD"

func TestMain(m *testing.M) {
	os.Exit(runTests(m))
}

func runTests(m *testing.M) int {
	if os.Getenv("TF_ACC") == "" {
		return m.Run() // unit tests only; resource.Test skips the acceptance tests
	}
	dir, err := os.MkdirTemp("", "scheduler-acc-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "acceptance tests:", err)
		return 1
	}
	defer func() { _ = os.RemoveAll(dir) }()
	bin := filepath.Join(dir, "schedulerd")
	build := exec.Command("go", "build", "-o", bin, "./controlplane/cmd/schedulerd")
	build.Dir = ".." // the module root
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "acceptance tests: go build schedulerd: %v\n%s", err, out)
		return 1
	}
	if err := os.Setenv(envDaemonBinary, bin); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	stop, addr, err := startDaemon(bin, dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, "acceptance tests: cannot start schedulerd:", err)
		return 1
	}
	defer stop()
	if err := os.Setenv(EnvEndpoint, "http://"+addr); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := os.Setenv(EnvToken, accToken); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}

// startDaemon starts the schedulerd binary bin with its data in dir and extra flags; it returns
// how to stop it and its address.
func startDaemon(bin, dir string, extra ...string) (stop func(), addr string, err error) {
	data := filepath.Join(dir, "data")
	logFile, err := os.Create(filepath.Join(dir, "schedulerd.log"))
	if err != nil {
		return nil, "", err
	}
	args := append([]string{"serve", "--listen", "127.0.0.1:0", "--data", data, "--log-level", "warn"}, extra...)
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "SCHEDULERD_ADMIN_TOKEN="+accToken) // never on the command line
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		return nil, "", err
	}
	exited := make(chan struct{})
	var waitErr error
	go func() {
		waitErr = cmd.Wait()
		close(exited)
	}()
	stop = func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
		_ = logFile.Close()
		if os.Getenv("SCHEDULER_ACC_DAEMON_LOG") != "" {
			if b, err := os.ReadFile(logFile.Name()); err == nil {
				fmt.Fprintf(os.Stderr, "--- schedulerd log ---\n%s", b)
			}
		}
	}
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		b, err := os.ReadFile(filepath.Join(data, "listen-address"))
		if err == nil && strings.TrimSpace(string(b)) != "" {
			return stop, strings.TrimSpace(string(b)), nil
		}
		select {
		case <-exited:
			b, _ := os.ReadFile(logFile.Name())
			return nil, "", fmt.Errorf("schedulerd exited: %v\n%s", waitErr, b)
		case <-time.After(20 * time.Millisecond):
		}
	}
	stop()
	return nil, "", errors.New("schedulerd did not write listen-address within 30s")
}

func protoV6Factories() map[string]func() (tfprotov6.ProviderServer, error) {
	return map[string]func() (tfprotov6.ProviderServer, error){
		"scheduler": providerserver.NewProtocol6WithError(New("test")()),
	}
}

// testClient talks to the acceptance tests' daemon (for drift and destroy checks).
func testClient(t *testing.T) *client.Client {
	t.Helper()
	c, err := client.New(client.Config{Endpoint: os.Getenv(EnvEndpoint), Token: os.Getenv(EnvToken)})
	if err != nil {
		t.Fatalf("client: %v", err)
	}
	return c
}

// messageRE matches msg exactly, whatever line wrapping tofu applies to it.
func messageRE(msg string) *regexp.Regexp {
	words := strings.Fields(msg)
	for i, w := range words {
		words[i] = regexp.QuoteMeta(w)
	}
	return regexp.MustCompile(strings.Join(words, `\s+`))
}

// waitForJob polls the daemon until the job satisfies ok (timeout 30s).
func waitForJob(t *testing.T, id client.JobID, what string, ok func(state string, executions int) bool) {
	t.Helper()
	c := testClient(t)
	deadline := time.Now().Add(30 * time.Second)
	for {
		j, err := c.JobGet(context.Background(), id)
		if err == nil && j.Properties != nil {
			n := 0
			if s := j.Properties.Status; s != nil && s.ExecutionCount != nil {
				n = *s.ExecutionCount
			}
			if ok(j.Properties.State, n) {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %s: not %s after 30s (last: %+v, %v)", id, what, j, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

const oneCollection = `
resource "scheduler_job_collection" "test" {
  name = "unreachable"
}
`

// A missing setting is an error naming the variable to set; the preview still works without it.
func TestAccProvider_missingSettings(t *testing.T) {
	t.Run("endpoint", func(t *testing.T) {
		t.Setenv(EnvEndpoint, "")
		resource.Test(t, resource.TestCase{
			ProtoV6ProviderFactories: protoV6Factories(),
			Steps: []resource.TestStep{{
				Config:      oneCollection,
				ExpectError: messageRE(`Set SCHEDULER_ENDPOINT or the provider's endpoint`),
			}},
		})
	})
	t.Run("token", func(t *testing.T) {
		t.Setenv(EnvToken, "")
		resource.Test(t, resource.TestCase{
			ProtoV6ProviderFactories: protoV6Factories(),
			Steps: []resource.TestStep{{
				Config:      oneCollection,
				ExpectError: messageRE(`Set SCHEDULER_TOKEN or the provider's token`),
			}},
		})
	})
	t.Run("wrong token", func(t *testing.T) {
		t.Setenv(EnvToken, "not-the-token")
		resource.Test(t, resource.TestCase{
			ProtoV6ProviderFactories: protoV6Factories(),
			Steps: []resource.TestStep{{
				Config:      oneCollection,
				ExpectError: messageRE(`Check the Scheduler token: the daemon refused it while checking whether job collection`),
			}},
		})
	})
	t.Run("preview needs no daemon", func(t *testing.T) {
		t.Setenv(EnvEndpoint, "")
		t.Setenv(EnvToken, "")
		resource.Test(t, resource.TestCase{
			ProtoV6ProviderFactories: protoV6Factories(),
			Steps: []resource.TestStep{{
				Config: `
data "scheduler_occurrences" "hourly" {
  start_time = "2026-01-01T00:15:00Z"
  recurrence {
    frequency = "hour"
  }
  now   = "2026-01-01T00:00:00Z"
  limit = 2
}
`,
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr("data.scheduler_occurrences.hourly", "times.#", "2"),
					resource.TestCheckResourceAttr("data.scheduler_occurrences.hourly", "times.0", "2026-01-01T00:15:00Z"),
					resource.TestCheckResourceAttr("data.scheduler_occurrences.hourly", "times.1", "2026-01-01T01:15:00Z"),
				),
			}},
		})
	})
}

// subscription_id places the resources; SCHEDULER_SUBSCRIPTION_ID does the same from the
// environment.
func TestAccProvider_subscription(t *testing.T) {
	const want = "/subscriptions/team-a/resourceGroups/default/providers/Microsoft.Scheduler/jobCollections/in-team-a"
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6Factories(),
		Steps: []resource.TestStep{{
			Config: `
provider "scheduler" {
  subscription_id = "team-a"
}

resource "scheduler_job_collection" "test" {
  name = "in-team-a"
}
`,
			Check: resource.TestCheckResourceAttr("scheduler_job_collection.test", "id", want),
		}},
	})
	t.Setenv(EnvSubscriptionID, "team-b")
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6Factories(),
		Steps: []resource.TestStep{{
			Config: `
resource "scheduler_job_collection" "test" {
  name = "in-team-b"
}
`,
			Check: resource.TestCheckResourceAttr("scheduler_job_collection.test", "id",
				"/subscriptions/team-b/resourceGroups/default/providers/Microsoft.Scheduler/jobCollections/in-team-b"),
		}},
	})
}

// writeServerCert writes a self-signed certificate for 127.0.0.1 and its key into dir.
func writeServerCert(t *testing.T, dir string) (certFile, keyFile, certPEM string) {
	t.Helper()
	c := testcert.New(t, testcert.Options{Subject: pkix.Name{CommonName: "schedulerd test"}, NotAfter: time.Now().Add(24 * time.Hour), Server: true})
	certFile, keyFile = c.WriteFiles(t, dir)
	return certFile, keyFile, string(c.PEM())
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
	const cfg = `
variable "endpoint" { type = string }
variable "token" { type = string }
variable "ca_cert_pem" {
  type    = string
  default = null
}
variable "insecure_skip_verify" {
  type    = bool
  default = null
}

provider "scheduler" {
  endpoint             = var.endpoint
  token                = var.token
  ca_cert_pem          = var.ca_cert_pem
  insecure_skip_verify = var.insecure_skip_verify
}

resource "scheduler_job_collection" "test" {
  name = "over-tls"
}
`
	vars := func(scheme string, tls config.Variables) config.Variables {
		v := config.Variables{"endpoint": config.StringVariable(scheme + "://" + addr), "token": config.StringVariable(accToken)}
		maps.Copy(v, tls)
		return v
	}
	trusted := config.Variables{"ca_cert_pem": config.StringVariable(certPEM)}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6Factories(),
		Steps: []resource.TestStep{
			{
				Config:          cfg,
				ConfigVariables: vars("https", trusted),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("scheduler_job_collection.test", tfjsonpath.New("id"),
						knownvalue.StringExact("/subscriptions/default/resourceGroups/default/providers/Microsoft.Scheduler/jobCollections/over-tls")),
				},
			},
			{ // the system roots do not trust it
				Config:          cfg,
				ConfigVariables: vars("https", nil),
				PlanOnly:        true,
				ExpectError:     messageRE("certificate signed by unknown authority"),
			},
			{ // unless verification is off
				Config:          cfg,
				ConfigVariables: vars("https", config.Variables{"insecure_skip_verify": config.BoolVariable(true)}),
				PlanOnly:        true,
			},
			{ // http against it: the API path as it is, and what to change
				Config:          cfg,
				ConfigVariables: vars("http", trusted),
				PlanOnly:        true,
				ExpectError: regexp.MustCompile(messageRE("Error: Use https:// in the provider's endpoint (SCHEDULER_ENDPOINT): the daemon serves HTTPS").String() +
					`(?s:.*)` + messageRE("GET /subscriptions/default/resourceGroups/default/providers/Microsoft.Scheduler/jobCollections/over-tls: 400:").String()),
			},
			{ // https again, so that the collection can be destroyed
				Config:          cfg,
				ConfigVariables: vars("https", trusted),
				PlanOnly:        true,
			},
		},
	})
}

func TestSchemasAreValid(t *testing.T) {
	ctx := context.Background()
	p := New("test")()
	var ps provider.SchemaResponse
	p.Schema(ctx, provider.SchemaRequest{}, &ps)
	if diags := ps.Schema.ValidateImplementation(ctx); diags.HasError() {
		t.Errorf("provider: %v", diags)
	}
	for _, f := range p.Resources(ctx) {
		r := f()
		var md fwresource.MetadataResponse
		r.Metadata(ctx, fwresource.MetadataRequest{ProviderTypeName: "scheduler"}, &md)
		var resp fwresource.SchemaResponse
		r.Schema(ctx, fwresource.SchemaRequest{}, &resp)
		if resp.Diagnostics.HasError() {
			t.Errorf("%s: %v", md.TypeName, resp.Diagnostics)
		}
		if diags := resp.Schema.ValidateImplementation(ctx); diags.HasError() {
			t.Errorf("%s: %v", md.TypeName, diags)
		}
	}
	for _, f := range p.DataSources(ctx) {
		d := f()
		var md datasource.MetadataResponse
		d.Metadata(ctx, datasource.MetadataRequest{ProviderTypeName: "scheduler"}, &md)
		var resp datasource.SchemaResponse
		d.Schema(ctx, datasource.SchemaRequest{}, &resp)
		if diags := resp.Schema.ValidateImplementation(ctx); diags.HasError() {
			t.Errorf("%s: %v", md.TypeName, diags)
		}
	}
}
