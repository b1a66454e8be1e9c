package provider

import (
	"cmp"
	"context"
	"crypto/x509/pkix"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
	"github.com/hashicorp/terraform-plugin-testing/config"
	"github.com/hashicorp/terraform-plugin-testing/helper/acctest"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/schedulerhq/terraform-provider-scheduler/internal/client"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/clock"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/retry"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/testcert"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"
)

// jobConfig is a collection and a weekly job written the way users write: enums in lower case,
// times without offset in the job's time zone, a date alone as end time, a time span as retry
// interval, a Basic password (write-only in the API). Its fields are the variables of
// jobConfigHCL (vars).
type jobConfig struct {
	Collection, Name              string
	Type, URI, Method, HeaderName string
	Password                      string
	StartTime, EndTime            string
	Frequency, RetryInterval      string
	Hours                         []int
	WeekDays                      []string
	State, RetryType, ErrorType   string
}

const jobConfigHCL = `
variable "collection" { type = string }
variable "name" { type = string }
variable "start_time" { type = string }
variable "state" { type = string }
variable "type" { type = string }
variable "uri" { type = string }
variable "method" { type = string }
variable "header_name" { type = string }
variable "password" {
  type      = string
  sensitive = true
}
variable "retry_type" { type = string }
variable "retry_interval" { type = string }
variable "error_type" { type = string }
variable "frequency" { type = string }
variable "end_time" { type = string }
variable "week_days" { type = list(string) }
variable "hours" { type = list(number) }

resource "scheduler_job_collection" "test" {
  name = var.collection
}

resource "scheduler_job" "test" {
  job_collection_id = scheduler_job_collection.test.id
  name              = var.name
  start_time        = var.start_time
  state             = var.state
  action {
    type = var.type
    request {
      uri     = var.uri
      method  = var.method
      body    = "{\"olderThanDays\":30}"
      headers = { (var.header_name) = "application/json" }
      authentication {
        basic {
          username = "ops"
          password = var.password
        }
      }
    }
    retry_policy {
      retry_type     = var.retry_type
      retry_interval = var.retry_interval
      retry_count    = 3
    }
    error_action {
      type = var.error_type
      request {
        uri    = "http://example.com/notify"
        method = "POST"
      }
    }
  }
  recurrence {
    frequency = var.frequency
    end_time  = var.end_time
    time_zone = "Europe/Berlin"
    schedule {
      week_days = var.week_days
      hours     = var.hours
      minutes   = [30]
    }
  }
}
`

func (c jobConfig) vars() config.Variables {
	days := make([]config.Variable, len(c.WeekDays))
	for i, d := range c.WeekDays {
		days[i] = config.StringVariable(d)
	}
	hours := make([]config.Variable, len(c.Hours))
	for i, h := range c.Hours {
		hours[i] = config.IntegerVariable(h)
	}
	v := map[string]string{
		"collection": c.Collection, "name": c.Name, "start_time": c.StartTime, "state": c.State, "type": c.Type, "uri": c.URI,
		"method": c.Method, "header_name": c.HeaderName, "password": c.Password, "retry_type": c.RetryType,
		"retry_interval": c.RetryInterval, "error_type": c.ErrorType, "frequency": c.Frequency, "end_time": c.EndTime,
	}
	out := config.Variables{"week_days": config.ListVariable(days...), "hours": config.ListVariable(hours...)}
	for k, s := range v {
		out[k] = config.StringVariable(s)
	}
	return out
}

func TestAccJob_lifecycle(t *testing.T) {
	coll := acctest.RandomWithPrefix("jc")
	id := client.JobID{CollectionID: client.CollectionID{Subscription: DefaultSubscriptionID, ResourceGroup: "default", Name: coll}, Name: "nightly-cleanup"}
	addr := "scheduler_job.test"
	cfg := jobConfig{
		Collection: coll, Name: id.Name,
		Type: "https", URI: "https://example.com/cleanup", Method: "post", HeaderName: "content-type",
		Password:  "s3cret-1",
		StartTime: "2030-01-01T09:00:00", EndTime: "2031-01-01",
		Frequency: "week", RetryInterval: "00:01:00",
		WeekDays: []string{"monday", "FRIDAY"}, Hours: []int{22, 9},
		State: "enabled", RetryType: "fixed", ErrorType: "http",
	}
	updated := cfg
	updated.Hours, updated.Method = []int{10}, "put"
	newSecret := updated
	newSecret.Password = "s3cret-2"
	// The same job in Azure's spelling, as the daemon answers: what an import reads.
	canonical := newSecret
	canonical.Type, canonical.Method, canonical.HeaderName = "Https", "PUT", "Content-Type"
	canonical.StartTime, canonical.EndTime = "2030-01-01T09:00:00+01:00", "2031-01-01T00:00:00+01:00"
	canonical.Frequency, canonical.WeekDays, canonical.RetryInterval = "Week", []string{"Monday", "Friday"}, "PT1M"
	canonical.State, canonical.RetryType, canonical.ErrorType = "Enabled", "Fixed", "Http"

	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6Factories(),
		CheckDestroy:             checkJobDestroyed(t, id),
		Steps: []resource.TestStep{
			{
				Config:          jobConfigHCL,
				ConfigVariables: cfg.vars(),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("id"), knownvalue.StringExact(id.String())),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("start_time"), knownvalue.StringExact("2030-01-01T09:00:00")),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("state"), knownvalue.StringExact("enabled")),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("action").AtMapKey("type"), knownvalue.StringExact("https")),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("action").AtMapKey("request").AtMapKey("method"), knownvalue.StringExact("post")),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("action").AtMapKey("retry_policy").AtMapKey("retry_interval"), knownvalue.StringExact("00:01:00")),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("recurrence").AtMapKey("frequency"), knownvalue.StringExact("week")),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("recurrence").AtMapKey("end_time"), knownvalue.StringExact("2031-01-01")),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("recurrence").AtMapKey("schedule").AtMapKey("week_days"),
						knownvalue.ListExact([]knownvalue.Check{knownvalue.StringExact("monday"), knownvalue.StringExact("FRIDAY")})),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("action").AtMapKey("request").AtMapKey("authentication").AtMapKey("basic").AtMapKey("password"),
						knownvalue.StringExact("s3cret-1")),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("status").AtMapKey("state"), knownvalue.StringExact("Enabled")),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("status").AtMapKey("execution_count"), knownvalue.Int64Exact(0)),
					// 2030-01-01 is a Tuesday: the first Monday/Friday at 09:30 or 22:30 Berlin is Friday the 4th, 09:30 (08:30 UTC).
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("status").AtMapKey("next_execution_time"), knownvalue.StringExact("2030-01-04T08:30:00Z")),
				},
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply:             []plancheck.PlanCheck{plancheck.ExpectResourceAction(addr, plancheck.ResourceActionCreate)},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				Check: checkJob(t, id, func(p *wire.JobProperties) error {
					if p.Action.Request.Method != "POST" || p.Recurrence.Frequency != "Week" || fmt.Sprint(p.Recurrence.Schedule.Hours) != "[22 9]" {
						return fmt.Errorf("method %s, frequency %s, hours %v", p.Action.Request.Method, p.Recurrence.Frequency, p.Recurrence.Schedule.Hours)
					}
					if p.Action.Request.Authentication.Password != "" {
						return fmt.Errorf("the daemon returned the password")
					}
					return nil
				}),
			},
			{ // a schedule change is an update in place, and the next execution follows it
				Config:          jobConfigHCL,
				ConfigVariables: updated.vars(),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply:             []plancheck.PlanCheck{plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate)},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("status").AtMapKey("next_execution_time"), knownvalue.StringExact("2030-01-04T09:30:00Z")),
				},
				Check: checkJob(t, id, func(p *wire.JobProperties) error {
					if p.Action.Request.Method != "PUT" || fmt.Sprint(p.Recurrence.Schedule.Hours) != "[10]" {
						return fmt.Errorf("method %s, hours %v", p.Action.Request.Method, p.Recurrence.Schedule.Hours)
					}
					return nil
				}),
			},
			{ // the API never returns the password, yet changing it is detected and applied
				Config:          jobConfigHCL,
				ConfigVariables: newSecret.vars(),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply:             []plancheck.PlanCheck{plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate)},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("action").AtMapKey("request").AtMapKey("authentication").AtMapKey("basic").AtMapKey("password"),
						knownvalue.StringExact("s3cret-2")),
				},
			},
			{ // the same job in Azure's spelling: the enums and the retry interval are the same values
				// (the state keeps their first spelling), the times with their offset are an update
				Config:          jobConfigHCL,
				ConfigVariables: canonical.vars(),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate),
						plancheck.ExpectKnownValue(addr, tfjsonpath.New("action").AtMapKey("type"), knownvalue.StringExact("https")),
						plancheck.ExpectKnownValue(addr, tfjsonpath.New("recurrence").AtMapKey("frequency"), knownvalue.StringExact("week")),
						plancheck.ExpectKnownValue(addr, tfjsonpath.New("action").AtMapKey("retry_policy").AtMapKey("retry_interval"), knownvalue.StringExact("00:01:00")),
						plancheck.ExpectKnownValue(addr, tfjsonpath.New("start_time"), knownvalue.StringExact("2030-01-01T09:00:00+01:00")),
					},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
			},
			{
				Config:            jobConfigHCL,
				ConfigVariables:   canonical.vars(),
				ResourceName:      addr,
				ImportState:       true,
				ImportStateId:     id.String(),
				ImportStateVerify: true,
				// Write-only in the API: an import cannot know them. An import takes the API's spelling
				// of the enums and durations, the same values as the state's (no plan: they are
				// TestAccJob_importPlansCleanForSpellingsAndDefaults's).
				ImportStateVerifyIgnore: []string{"action.request.authentication.basic.password", "action.type", "action.request.method",
					"action.retry_policy.retry_type", "action.retry_policy.retry_interval", "action.error_action.type", "recurrence.frequency",
					"recurrence.schedule.week_days.", "state"},
			},
			{ // disabled outside Terraform: planned back to the configured state
				PreConfig: func() {
					_, err := testClient(t).JobPatch(context.Background(), id, &wire.JobDefinition{Properties: &wire.JobProperties{State: "Disabled"}})
					if err != nil {
						t.Fatalf("disable outside Terraform: %v", err)
					}
				},
				Config:          jobConfigHCL,
				ConfigVariables: canonical.vars(),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate),
						plancheck.ExpectKnownValue(addr, tfjsonpath.New("state"), knownvalue.StringExact("Enabled")),
					},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				Check: checkJob(t, id, func(p *wire.JobProperties) error {
					if p.State != "Enabled" {
						return fmt.Errorf("state %s, want Enabled", p.State)
					}
					return nil
				}),
			},
			{ // deleted outside Terraform: dropped from state and planned for creation
				PreConfig: func() {
					if err := testClient(t).JobDelete(context.Background(), id); err != nil {
						t.Fatalf("delete outside Terraform: %v", err)
					}
				},
				Config:          jobConfigHCL,
				ConfigVariables: canonical.vars(),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply:             []plancheck.PlanCheck{plancheck.ExpectResourceAction(addr, plancheck.ResourceActionCreate)},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				Check: checkJob(t, id, func(p *wire.JobProperties) error { return nil }),
			},
			{ // the whole collection deleted outside Terraform: both are created again
				PreConfig: func() {
					if err := testClient(t).CollectionDelete(context.Background(), id.CollectionID); err != nil {
						t.Fatalf("delete outside Terraform: %v", err)
					}
				},
				Config:          jobConfigHCL,
				ConfigVariables: canonical.vars(),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction("scheduler_job_collection.test", plancheck.ResourceActionCreate),
						plancheck.ExpectResourceAction(addr, plancheck.ResourceActionCreate),
					},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
			},
		},
	})
}

// A one-off job runs at once and becomes Completed: its plan stays empty, and a configuration
// change replaces it (the API refuses to update a Completed job). The data sources read it.
func TestAccJob_completedIsReplaced(t *testing.T) {
	var hits atomic.Int32
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		hits.Add(1)
		_, _ = io.WriteString(w, "done")
	}))
	defer target.Close()
	coll := acctest.RandomWithPrefix("jc")
	id := client.JobID{CollectionID: client.CollectionID{Subscription: DefaultSubscriptionID, ResourceGroup: "default", Name: coll}, Name: "once"}
	addr := "scheduler_job.test"
	config := func(body string, withData bool) string {
		s := fmt.Sprintf(`
resource "scheduler_job_collection" "test" {
  name = %q
}

resource "scheduler_job" "test" {
  job_collection_id = scheduler_job_collection.test.id
  name              = "once"
  action {
    type = "Http"
    request {
      uri    = %q
      method = "POST"
      body   = %q
    }
  }
}
`, coll, target.URL+"/run", body)
		if withData {
			s += `
data "scheduler_job_collection" "test" {
  name = scheduler_job_collection.test.name
}

data "scheduler_job" "test" {
  job_collection_id = scheduler_job_collection.test.id
  name              = scheduler_job.test.name
}

data "scheduler_job_history" "test" {
  job_id = scheduler_job.test.id
}
`
		}
		return s
	}
	completed := func() {
		waitForJob(t, id, "Completed", func(state string, n int) bool { return state == "Completed" && n == 1 })
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6Factories(),
		CheckDestroy:             checkJobDestroyed(t, id),
		Steps: []resource.TestStep{
			{
				Config: config("first", false),
			},
			{ // completed, same configuration: nothing to do
				PreConfig: completed,
				Config:    config("first", true),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction(addr, plancheck.ResourceActionNoop)},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("state"), knownvalue.StringExact("Enabled")),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("status").AtMapKey("state"), knownvalue.StringExact("Completed")),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("status").AtMapKey("execution_count"), knownvalue.Int64Exact(1)),
					statecheck.ExpectKnownValue("data.scheduler_job_collection.test", tfjsonpath.New("sku"), knownvalue.StringExact("Standard")),
					statecheck.ExpectKnownValue("data.scheduler_job_collection.test", tfjsonpath.New("id"), knownvalue.StringExact(id.CollectionID.String())),
					statecheck.ExpectKnownValue("data.scheduler_job.test", tfjsonpath.New("state"), knownvalue.StringExact("Completed")),
					statecheck.ExpectKnownValue("data.scheduler_job.test", tfjsonpath.New("action").AtMapKey("request").AtMapKey("body"), knownvalue.StringExact("first")),
					statecheck.ExpectKnownValue("data.scheduler_job_history.test", tfjsonpath.New("entries"), knownvalue.ListSizeExact(1)),
					statecheck.ExpectKnownValue("data.scheduler_job_history.test", tfjsonpath.New("entries").AtSliceIndex(0).AtMapKey("status"), knownvalue.StringExact("Completed")),
					statecheck.ExpectKnownValue("data.scheduler_job_history.test", tfjsonpath.New("entries").AtSliceIndex(0).AtMapKey("action_name"), knownvalue.StringExact("MainAction")),
				},
			},
			{ // completed, configuration changed: replaced, and the new job runs
				Config: config("second", false),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction(addr, plancheck.ResourceActionReplace)},
				},
				Check: func(*terraform.State) error {
					completed()
					if n := hits.Load(); n != 2 {
						return fmt.Errorf("the target was called %d times, want 2", n)
					}
					return nil
				},
			},
		},
	})
}

func checkJob(t *testing.T, id client.JobID, f func(p *wire.JobProperties) error) resource.TestCheckFunc {
	return func(*terraform.State) error {
		got, err := testClient(t).JobGet(context.Background(), id)
		if err != nil {
			return err
		}
		if got.Properties == nil {
			return fmt.Errorf("job %s has no properties", id)
		}
		return f(got.Properties)
	}
}

func checkJobDestroyed(t *testing.T, id client.JobID) resource.TestCheckFunc {
	return func(*terraform.State) error {
		_, err := testClient(t).JobGet(context.Background(), id)
		if client.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("job %s still exists after destroy (err %v)", id, err)
	}
}

// A job that already exists is not overwritten by a create: the error says to import it.
func TestAccJob_existingJobMustBeImported(t *testing.T) {
	coll := acctest.RandomWithPrefix("jc")
	id := client.JobID{CollectionID: client.CollectionID{Subscription: DefaultSubscriptionID, ResourceGroup: "default", Name: coll}, Name: "taken"}
	collection := fmt.Sprintf(`
resource "scheduler_job_collection" "test" {
  name          = %q
  force_destroy = true # it holds a job made through the API
}
`, coll)
	job := collection + `
resource "scheduler_job" "test" {
  job_collection_id = scheduler_job_collection.test.id
  name              = "taken"
  start_time        = "2030-01-01T00:00:00Z"
  action {
    type = "Http"
    request {
      uri    = "http://example.com/mine"
      method = "GET"
    }
  }
}
`
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6Factories(),
		Steps: []resource.TestStep{
			{Config: collection},
			{
				PreConfig: func() {
					_, err := testClient(t).JobPut(context.Background(), id, &wire.JobDefinition{Properties: &wire.JobProperties{
						StartTime: "2030-01-01T00:00:00Z",
						Action:    &wire.JobAction{Type: "Http", Request: &wire.HTTPRequest{URI: "http://example.com/theirs", Method: "GET"}},
					}})
					if err != nil {
						t.Fatalf("create outside Terraform: %v", err)
					}
				},
				Config:      job,
				ExpectError: messageRE("Import the existing job instead of creating it"),
			},
			{ // and it was left as it was
				Config: collection,
				Check: checkJob(t, id, func(p *wire.JobProperties) error {
					if p.Action.Request.URI != "http://example.com/theirs" {
						return fmt.Errorf("uri %s: the existing job was overwritten", p.Action.Request.URI)
					}
					return nil
				}),
			},
		},
	})
}

// testPfx makes a self-signed client certificate as a base64 PKCS#12 file; it returns the file
// and the certificate's thumbprint.
func testPfx(t *testing.T, cn, password string, notAfter time.Time) (pfx, thumbprint string) {
	t.Helper()
	c := testcert.New(t, testcert.Options{Subject: pkix.Name{CommonName: cn}, Serial: time.Now().UnixNano(),
		NotBefore: notAfter.AddDate(-1, 0, 0), NotAfter: notAfter})
	return c.PFX(t, password), c.Thumbprint()
}

// authConfigHCL is a collection, a job with a client certificate and one with an OAuth secret
// (authVars).
const authConfigHCL = `
variable "collection" { type = string }
variable "pfx" {
  type      = string
  sensitive = true
}
variable "pfx_password" {
  type      = string
  sensitive = true
}
variable "oauth_secret" {
  type      = string
  sensitive = true
}

resource "scheduler_job_collection" "test" {
  name = var.collection
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
          pfx      = var.pfx
          password = var.pfx_password
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
          secret    = var.oauth_secret
        }
      }
    }
  }
  recurrence {
    frequency = "Day"
  }
}
`

func authVars(coll, pfx, pfxPassword, oauthSecret string) config.Variables {
	return config.Variables{"collection": config.StringVariable(coll), "pfx": config.StringVariable(pfx),
		"pfx_password": config.StringVariable(pfxPassword), "oauth_secret": config.StringVariable(oauthSecret)}
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
				Config:          authConfigHCL,
				ConfigVariables: authVars(coll, pfx1, "pfx-pass-1", "oauth-secret-1"),
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
				Config:          authConfigHCL,
				ConfigVariables: authVars(coll, pfx2, "pfx-pass-2", "oauth-secret-2"),
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
				Config:                  authConfigHCL,
				ConfigVariables:         authVars(coll, pfx2, "pfx-pass-2", "oauth-secret-2"),
				ResourceName:            "scheduler_job.cert",
				ImportState:             true,
				ImportStateVerify:       true,
				ImportStateVerifyIgnore: []string{"action.request.authentication.client_certificate.pfx", "action.request.authentication.client_certificate.password"},
			},
			{
				Config:                  authConfigHCL,
				ConfigVariables:         authVars(coll, pfx2, "pfx-pass-2", "oauth-secret-2"),
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
			Config:          authConfigHCL,
			ConfigVariables: authVars(acctest.RandomWithPrefix("jc"), pfx, "wrong", "oauth-secret"),
			PlanOnly:        true,
			ExpectError:     messageRE("action.request.authentication.client_certificate.pfx: cannot be opened: the password is incorrect"),
		}},
	})
}

// describedJob is a job in the collection var.collection (describedVars) whose schedule is given
// as HCL (start_time line included): the schedule stays text because the blocks written, their
// spelling and an expression (unknownStart) are what each step tests.
func describedJob(schedule string) string {
	return fmt.Sprintf(`
variable "collection" { type = string }

resource "scheduler_job_collection" "test" {
  name = var.collection
}

resource "scheduler_job" "test" {
  job_collection_id = scheduler_job_collection.test.id
  name              = "described"
  action {
    type = "http"
    request {
      uri    = "http://127.0.0.1:9/"
      method = "get"
    }
  }
  %s
}
`, schedule)
}

// describedVars names describedJob's collection.
func describedVars(collection string) config.Variables {
	return config.Variables{"collection": config.StringVariable(collection)}
}

// anchorJob is a job whose id the described job's start_time waits for.
const anchorJob = `
resource "scheduler_job" "anchor" {
  job_collection_id = scheduler_job_collection.test.id
  name              = "anchor"
  start_time        = "2030-01-01T00:00:00Z"
  action {
    type = "Http"
    request {
      uri    = "http://127.0.0.1:9/"
      method = "GET"
    }
  }
}
`

// recurrence_description is the rule in words: known at plan time when the schedule is, the
// same after apply and on refresh (no diff), and following a change of the schedule.
func TestAccJob_recurrenceDescription(t *testing.T) {
	const addr = "scheduler_job.test"
	name := acctest.RandomWithPrefix("describe")
	words := tfjsonpath.New("recurrence_description")
	weekdays := `start_time = "2030-01-07T08:00:00"
  recurrence {
    frequency = "week"
    time_zone = "Europe/Berlin"
    schedule {
      week_days = ["monday", "TUESDAY", "wednesday", "thursday", "friday"]
      hours     = [17, 9]
      minutes   = [0]
    }
  }`
	lastFriday := `start_time = "2030-01-01T00:00:00Z"
  recurrence {
    frequency = "month"
    schedule {
      hours   = [5]
      minutes = [15]
      monthly_occurrences {
        day        = "friday"
        occurrence = -1
      }
    }
  }`
	// A job's id is known only after apply (a collection's is planned).
	unknownStart := `start_time = scheduler_job.anchor.id == "" ? "" : "2030-01-01T00:00:00Z"
  recurrence {
    frequency = "minute"
    interval  = 15
    count     = 5
  }`
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6Factories(),
		Steps: []resource.TestStep{
			{
				Config:          describedJob(weekdays),
				ConfigVariables: describedVars(name),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectKnownValue(addr, words, knownvalue.StringExact("at 09:00 and 17:00, Monday to Friday, from 2030-01-07 08:00, Europe/Berlin")),
					},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(addr, words, knownvalue.StringExact("at 09:00 and 17:00, Monday to Friday, from 2030-01-07 08:00, Europe/Berlin")),
				},
			},
			{
				Config:          describedJob(lastFriday),
				ConfigVariables: describedVars(name),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate),
						plancheck.ExpectKnownValue(addr, words, knownvalue.StringExact("at 05:15 on the last Friday of every month, from 2030-01-01 00:00, UTC")),
					},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
			},
			{
				Config:          describedJob(unknownStart) + anchorJob,
				ConfigVariables: describedVars(name + "-2"),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectUnknownValue(addr, words)},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(addr, words, knownvalue.StringExact("every 15 minutes, 5 times, from 2030-01-01 00:00, UTC")),
				},
			},
			{ // interval left out again: planned away (1 is the default), not kept from the state
				Config: describedJob(`start_time = "2030-01-01T00:00:00Z"
  recurrence {
    frequency = "minute"
    count     = 5
  }`) + anchorJob,
				ConfigVariables: describedVars(name + "-2"),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate),
						plancheck.ExpectKnownValue(addr, tfjsonpath.New("recurrence").AtMapKey("interval"), knownvalue.Null()),
					},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				Check: checkJob(t, client.JobID{CollectionID: client.CollectionID{Subscription: DefaultSubscriptionID, ResourceGroup: "default", Name: name + "-2"}, Name: "described"},
					func(p *wire.JobProperties) error {
						if p.Recurrence.Interval != nil && *p.Recurrence.Interval != 1 {
							return fmt.Errorf("interval %d is still stored", *p.Recurrence.Interval)
						}
						return nil
					}),
			},
			{ // a one-shot whose start_time has passed runs at once: the words say so, and keep it
				Config:          describedJob(`start_time = "2025-06-01T08:00:00"`),
				ConfigVariables: describedVars(name + "-3"),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply:             []plancheck.PlanCheck{plancheck.ExpectKnownValue(addr, words, knownvalue.StringExact("once, immediately (start_time is in the past)"))},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
			},
			{ // without start_time a recurring job runs first when it is created
				Config: describedJob(`recurrence {
    frequency = "week"
    schedule {
      week_days = ["monday"]
      hours     = [9]
    }
  }`),
				ConfigVariables: describedVars(name + "-4"),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectKnownValue(addr, words,
						knownvalue.StringExact("once when the job is created, then at the minute it was created past the hour 09, Monday, UTC"))},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
			},
		},
	})
}

// importForm is a job created through the API with its times in one of the forms the API
// accepts, and the configuration a user writes for it: the same spelling, or another one of the
// same instant (cfgStart, cfgEnd); interval is set explicitly through the API when not 0 (the
// configuration leaves it out: 1 is the default), and so is retry (the configuration leaves the
// retry_policy block out: the policy is the default, importedFromWire).
type importForm struct {
	name             string
	start, end, zone string
	cfgStart, cfgEnd string
	interval         int
	retry            *wire.RetryPolicy // the action's, through the API; the configuration leaves it out
}

func (f importForm) configStart() string { return cmp.Or(f.cfgStart, f.start) }
func (f importForm) configEnd() string   { return cmp.Or(f.cfgEnd, f.end) }

var importForms = []importForm{
	{"offset", "2030-12-01T07:30:00-05:00", "2031-01-01T00:00:00-05:00", "", "", "", 0, nil},
	{"utc", "2030-12-01T12:30:00Z", "2031-01-01T05:00:00+00:00", "", "", "", 0, nil},
	{"no-offset", "2030-12-01T07:30:00", "2031-01-01T00:00", "", "", "", 0, nil},
	{"date-only", "2030-12-01", "2031-01-01", "", "", "", 0, nil},
	{"fraction", "2030-12-01t07:30:00.250z", "2031-01-01T00:00:00.5+01:00", "", "", "", 0, nil},
	{"time-zone", "2030-12-01T07:30:00", "2031-01-01", "America/New_York", "", "", 0, nil},
	// The configuration writes the instants the API holds with other offsets.
	// (start_time's offset is the schedule's zone when there is no time_zone: another offset is another schedule.)
	{"other-offset", "2030-12-01T12:30:00Z", "2032-06-01T05:00:00Z", "", "", "2032-06-01T00:00:00-05:00", 0, nil},
	{"other-offset-zone", "2030-12-01T07:30:00", "2031-01-01T05:00:00Z", "America/New_York", "", "2031-01-01T00:00:00", 0, nil},
	// The API holds interval 1 explicitly; the configuration leaves it out.
	{"interval-one", "2030-12-01T07:30:00Z", "2031-01-01T00:00:00Z", "", "", "", 1, nil},
	// The API holds the default retry policy explicitly, in any spelling; the configuration leaves it out.
	{"retry-default", "2030-12-01T07:30:00Z", "2031-01-01T00:00:00Z", "", "", "", 0,
		&wire.RetryPolicy{RetryType: "fixed", RetryInterval: "00:00:30", RetryCount: new(4)}},
	{"retry-type-only", "2030-12-01T07:30:00Z", "2031-01-01T00:00:00Z", "", "", "", 0, &wire.RetryPolicy{RetryType: "Fixed"}},
}

func (f importForm) job() *wire.JobDefinition {
	var interval *int
	if f.interval != 0 {
		interval = &f.interval
	}
	return &wire.JobDefinition{Properties: &wire.JobProperties{
		StartTime: f.start,
		Action:    &wire.JobAction{Type: "Http", Request: &wire.HTTPRequest{URI: "http://127.0.0.1:9/" + f.name, Method: "GET"}, RetryPolicy: f.retry},
		Recurrence: &wire.JobRecurrence{Frequency: "Week", Interval: interval, EndTime: f.end, TimeZone: f.zone,
			Schedule: &wire.JobRecurrenceSchedule{WeekDays: []string{"Monday", "Friday"}, Hours: []int{7}, Minutes: []int{30}}},
	}}
}

// importFormsConfig is the collection (force_destroy: it holds jobs made through the API that a
// step does not import) and one job per entry of var.forms (count, not for_each:
// terraform-plugin-testing imports by command only into a numeric index): the configuration a
// user writes for each (importForm.variable).
const importFormsConfig = `
variable "collection" { type = string }
variable "forms" {
  type = list(object({
    name       = string
    start_time = string
    end_time   = string
    time_zone  = optional(string)
  }))
  default = []
}

resource "scheduler_job_collection" "test" {
  name          = var.collection
  force_destroy = true
}

resource "scheduler_job" "form" {
  count             = length(var.forms)
  job_collection_id = scheduler_job_collection.test.id
  name              = var.forms[count.index].name
  start_time        = var.forms[count.index].start_time
  action {
    type = "Http"
    request {
      uri    = "http://127.0.0.1:9/${var.forms[count.index].name}"
      method = "GET"
    }
  }
  recurrence {
    frequency = "Week"
    end_time  = var.forms[count.index].end_time
    time_zone = var.forms[count.index].time_zone
    schedule {
      week_days = ["Monday", "Friday"]
      hours     = [7]
      minutes   = [30]
    }
  }
}
`

// variable is f's entry of importFormsConfig's var.forms.
func (f importForm) variable() config.Variable {
	v := map[string]config.Variable{
		"name":       config.StringVariable(f.name),
		"start_time": config.StringVariable(f.configStart()),
		"end_time":   config.StringVariable(f.configEnd()),
	}
	if f.zone != "" {
		v["time_zone"] = config.StringVariable(f.zone)
	}
	return config.ObjectVariable(v)
}

// The first plan after importing a job created through the API is empty, whatever form its
// times were written in (offset, Z, no offset, date only, fraction and lower case, time zone):
// the daemon answers the provider the times as they were written. Then the configuration of an
// imported job is generated (plan -generate-config-out with an import block, which crashed
// OpenTofu 1.10.6) and plans clean.
func TestAccJob_importPlansClean(t *testing.T) {
	coll := acctest.RandomWithPrefix("import")
	collID := client.CollectionID{Subscription: DefaultSubscriptionID, ResourceGroup: "default", Name: coll}
	var forms []config.Variable
	for _, f := range importForms {
		forms = append(forms, f.variable())
	}
	vars := func(forms ...config.Variable) config.Variables {
		v := config.Variables{"collection": config.StringVariable(coll)}
		if len(forms) > 0 { // config.ListVariable() is null
			v["forms"] = config.ListVariable(forms...)
		}
		return v
	}
	steps := []resource.TestStep{{
		Config:          importFormsConfig,
		ConfigVariables: vars(), // the collection alone
		Check: func(*terraform.State) error {
			for _, f := range importForms {
				if _, err := testClient(t).JobPut(context.Background(), client.JobID{CollectionID: collID, Name: f.name}, f.job()); err != nil {
					return fmt.Errorf("create job %s through the API: %w", f.name, err)
				}
			}
			return nil
		},
	}}
	for i, f := range importForms {
		steps = append(steps, resource.TestStep{
			Config:             importFormsConfig,
			ConfigVariables:    vars(forms...),
			ResourceName:       fmt.Sprintf("scheduler_job.form[%d]", i),
			ImportState:        true,
			ImportStateId:      client.JobID{CollectionID: collID, Name: f.name}.String(),
			ImportStatePersist: true,
		})
	}
	steps = append(steps,
		resource.TestStep{Config: importFormsConfig, ConfigVariables: vars(forms...), PlanOnly: true}, // fails on any change
		resource.TestStep{
			Config:          importFormsConfig,
			ConfigVariables: vars(),
			ResourceName:    "scheduler_job.offset",
			ImportState:     true,
			ImportStateKind: resource.ImportBlockWithID,
			ImportStateId:   client.JobID{CollectionID: collID, Name: "offset"}.String(),
			GenerateConfig:  true, // plan -generate-config-out: the import must be a no-op
		},
	)
	resource.Test(t, resource.TestCase{ProtoV6ProviderFactories: protoV6Factories(), Steps: steps})
}

// count and end_time together are allowed, and an empty schedule is no schedule: both apply and
// plan nothing afterwards.
func TestAccJob_countWithEndTimeAndEmptySchedule(t *testing.T) {
	coll := acctest.RandomWithPrefix("jc")
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6Factories(),
		Steps: []resource.TestStep{{
			Config: fmt.Sprintf(`
resource "scheduler_job_collection" "test" {
  name = %q
}

resource "scheduler_job" "test" {
  job_collection_id = scheduler_job_collection.test.id
  name              = "bounded"
  start_time        = "2030-01-01T00:00:00Z"
  action {
    type = "http"
    request {
      uri    = "http://example.com/"
      method = "get"
      body   = ""
    }
  }
  recurrence {
    frequency = "hour"
    interval  = 6
    count     = 5
    end_time  = "2030-01-01T12:00:00Z"
    schedule {}
  }
}
`, coll),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue("scheduler_job.test", tfjsonpath.New("recurrence").AtMapKey("count"), knownvalue.Int64Exact(5)),
				statecheck.ExpectKnownValue("scheduler_job.test", tfjsonpath.New("status").AtMapKey("next_execution_time"), knownvalue.StringExact("2030-01-01T00:00:00Z")),
			},
			ConfigPlanChecks: resource.ConfigPlanChecks{
				PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
			},
		}},
	})
}

// The collection's limits are the daemon's to enforce at apply (a 409 naming the limit): the job
// count of the quota, and no outbound authentication in a Free collection.
func TestAccJob_collectionLimits(t *testing.T) {
	job := func(name, auth string) string {
		return fmt.Sprintf(`
resource "scheduler_job" %q {
  job_collection_id = scheduler_job_collection.test.id
  name              = %q
  start_time        = "2030-01-01T00:00:00Z"
  action {
    type = "Https"
    request {
      uri    = "https://example.com/"
      method = "GET"
      %s
    }
  }
  recurrence {
    frequency = "Day"
  }
}
`, name, name, auth)
	}
	collection := func(sku string, maxJobs int) string {
		return fmt.Sprintf(`
resource "scheduler_job_collection" "test" {
  name  = %q
  sku   = %q
  quota {
    max_job_count = %d
  }
}
`, acctest.RandomWithPrefix("jc"), sku, maxJobs)
	}
	t.Run("max_job_count", func(t *testing.T) {
		resource.Test(t, resource.TestCase{
			ProtoV6ProviderFactories: protoV6Factories(),
			Steps: []resource.TestStep{{
				Config:      collection("Standard", 1) + job("one", "") + job("two", "") + "\n# two jobs, quota 1\n",
				ExpectError: regexp.MustCompile(`Resolve the conflict reported while creating job(?s:.*)409\s+Conflict:\s+job\s+collection\s+jc-\d+\s+already\s+holds\s+its\s+maxJobCount\s+of\s+1\s+jobs`),
			}},
		})
	})
	t.Run("Free rejects authentication", func(t *testing.T) {
		resource.Test(t, resource.TestCase{
			ProtoV6ProviderFactories: protoV6Factories(),
			Steps: []resource.TestStep{{
				Config: collection("Free", 5) + job("one", `authentication {
        basic {
          username = "u"
          password = "p"
        }
      }`),
				// at plan time: the collection is in the configuration
				PlanOnly: true,
				ExpectError: regexp.MustCompile(messageRE("The job does not fit its collection").String() + `\s+jc-\d+:\s+` +
					messageRE("the collection's sku (Free) does not allow outbound authentication: use a Standard or Premium collection").String()),
			}},
		})
	})
	t.Run("a recurrence faster than the collection's quota, at plan time", func(t *testing.T) {
		resource.Test(t, resource.TestCase{
			ProtoV6ProviderFactories: protoV6Factories(),
			Steps: []resource.TestStep{{
				Config: collection("Standard", 5) + strings.Replace(job("one", ""), `frequency = "Day"`, `frequency = "Minute"
    interval  = 15`, 1) + `
resource "scheduler_job_collection" "hourly" {
  name = "${scheduler_job_collection.test.name}-hourly"
  quota {
    max_recurrence {
      frequency = "Hour"
    }
  }
}

resource "scheduler_job" "fast" {
  job_collection_id = scheduler_job_collection.hourly.id
  name              = "fast"
  start_time        = "2030-01-01T00:00:00Z"
  action {
    type = "Http"
    request {
      uri    = "http://127.0.0.1:9/"
      method = "GET"
    }
  }
  recurrence {
    frequency = "Minute"
    interval  = 30
  }
}
`,
				PlanOnly: true,
				ExpectError: regexp.MustCompile(messageRE("The job does not fit its collection").String() + `\s+jc-\d+-hourly:\s+` +
					messageRE("the job recurs faster than the collection's maxRecurrence (1 Hour)").String()),
			}},
		})
	})
}

// linesHeader makes the test harness write a configuration as it is: without a terraform block
// it puts its own before it, which moves every line.
const linesHeader = `terraform {
  required_providers {
    scheduler = { source = "hashicorp/scheduler" }
  }
}
`

// lineError is a diagnostic the CLI must show on a line of the configuration: its summary, and
// the line holding text (the source line the CLI quotes).
type lineError struct {
	summary, line string
}

// checkLines returns an ErrorCheck that accepts the CLI's error output only when it holds
// exactly the diagnostics want, one per mistake, each rendered on the line of cfg that holds
// its line text ("on <file> line N" and the quoted source line "N: <text>").
func checkLines(cfg string, want []lineError) func(error) error {
	lines := strings.Split(cfg, "\n")
	lineOf := func(text string) int {
		n := 0
		for i, l := range lines {
			if strings.TrimSpace(l) == text {
				if n != 0 {
					panic(fmt.Sprintf("%q is on lines %d and %d of the configuration", text, n, i+1))
				}
				n = i + 1
			}
		}
		if n == 0 {
			panic(fmt.Sprintf("%q is on no line of the configuration", text))
		}
		return n
	}
	return func(err error) error {
		if err == nil {
			return fmt.Errorf("plan succeeded, want %d errors", len(want))
		}
		out := err.Error()
		if got := strings.Count(out, "Error: "); got != len(want) {
			return fmt.Errorf("%d diagnostics, want %d (one per mistake):\n%s", got, len(want), out)
		}
		// Each diagnostic: its summary, then where it is, then the quoted line.
		for _, w := range want {
			n := lineOf(w.line)
			re := regexp.MustCompile(messageRE("Error: "+w.summary).String() +
				fmt.Sprintf(`\s+with (?:data\.)?scheduler_\w+\.\w+,\s+on terraform_plugin_test\.tf line %d, in \w+ "scheduler_\w+" "\w+":\s+%d:\s+%s\n`,
					n, n, regexp.QuoteMeta(w.line)))
			if !re.MatchString(out) {
				return fmt.Errorf("no %q on line %d (%s) in:\n%s", w.summary, n, w.line, out)
			}
		}
		return nil
	}
}

// The plan-time errors of a schedule point at the offending line: OpenTofu and Terraform locate
// a diagnostic inside nested blocks (and an element of a list attribute), so recurrence,
// schedule and monthly_occurrences are blocks. One diagnostic per mistake.
func TestAccJob_planErrorsOnTheirLines(t *testing.T) {
	cfg := linesHeader + `
resource "scheduler_job" "test" {
  job_collection_id = "/subscriptions/default/resourceGroups/default/providers/Microsoft.Scheduler/jobCollections/plan-only"
  name              = "lines"
  start_time        = "2026-02-01T10:00:00Z"
  action {
    type = "http"
    request {
      uri    = "http://example.com/"
      method = "get"
    }
    retry_policy {
      retry_type  = "fixed"
      retry_count = 21
    }
  }
  recurrence {
    frequency = "month"
    schedule {
      month_days = [1, 2, 32]
      monthly_occurrences {
        day        = "friday"
        occurrence = -1
      }
      monthly_occurrences {
        day = "fryday"
      }
    }
  }
}
`
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6Factories(),
		ErrorCheck: checkLines(cfg, []lineError{
			{"Invalid action.retry_policy.retry_count: 21 is outside 0..20", "retry_count = 21"},
			{"Invalid recurrence.schedule.month_days[2]: 32 is outside -31..-1, 1..31", "month_days = [1, 2, 32]"},
			{`Invalid recurrence.schedule.monthly_occurrences[1].day: "fryday" is not a day of the week: one of Monday, Tuesday, Wednesday, Thursday, Friday, Saturday, Sunday`,
				`day = "fryday"`},
		}),
		Steps: []resource.TestStep{{Config: cfg, PlanOnly: true}},
	})
}

// planJob is a job whose plan is checked; the collection need not exist, since plan fails first.
// recurrence and retry are the recurrence and retry_policy blocks, or "": text, because the
// block as written is what each rule case tests; start_time is var.start_time (planVars).
func planJob(recurrence, retry string) string {
	return fmt.Sprintf(`
variable "start_time" { type = string }

resource "scheduler_job" "test" {
  job_collection_id = "/subscriptions/default/resourceGroups/default/providers/Microsoft.Scheduler/jobCollections/plan-only"
  name              = "rule"
  start_time        = var.start_time
  action {
    type = "http"
    request {
      uri    = "http://example.com/"
      method = "get"
    }
    %s
  }
  %s
}
`, retry, recurrence)
}

// planVars sets planJob's start_time.
func planVars(startTime string) config.Variables {
	return config.Variables{"start_time": config.StringVariable(startTime)}
}

// Every rule of SPEC 4.1 fails plan, at the attribute, with the engine's message.
func TestAccJob_planRejectsEveryRule(t *testing.T) {
	const start = "2026-02-01T10:00:00Z"
	for _, tc := range []struct {
		rule, start, recurrence, retry string
		summary, detail                string
	}{
		{"interval Month above 18", start, `recurrence {
    frequency = "month"
    interval  = 19
  }`, "",
			"Invalid recurrence.interval: 19 is outside 1..18 for frequency Month", "recurrence.interval: 19 is outside 1..18 for frequency Month"},
		{"interval Week above 78", start, `recurrence {
    frequency = "week"
    interval  = 79
  }`, "",
			"Invalid recurrence.interval: 79 is outside 1..78 for frequency Week", "recurrence.interval: 79 is outside 1..78 for frequency Week"},
		{"interval Day above 548", start, `recurrence {
    frequency = "Day"
    interval  = 549
  }`, "",
			"Invalid recurrence.interval: 549 is outside 1..548 for frequency Day", "recurrence.interval: 549 is outside 1..548 for frequency Day"},
		{"interval Hour above 1000", start, `recurrence {
    frequency = "hour"
    interval  = 1001
  }`, "",
			"Invalid recurrence.interval: 1001 is outside 1..1000 for frequency Hour", "recurrence.interval: 1001 is outside 1..1000 for frequency Hour"},
		{"interval below 1", start, `recurrence {
    frequency = "minute"
    interval  = 0
  }`, "",
			"Invalid recurrence.interval: 0 is outside 1..1000 for frequency Minute", "recurrence.interval: 0 is outside 1..1000 for frequency Minute"},
		{"count below 1", start, `recurrence {
    frequency = "day"
    count     = 0
  }`, "",
			"Invalid recurrence.count: 0 is less than 1: count is the number of executions, at least 1", "recurrence.count: 0 is less than 1: count is the number of executions, at least 1"},
		{"endTime before startTime", start, `recurrence {
    frequency = "day"
    end_time  = "2026-01-01"
  }`, "",
			"Invalid recurrence.end_time: 2026-01-01T00:00:00Z is before start_time 2026-02-01T10:00:00Z", "recurrence.end_time: 2026-01-01T00:00:00Z is before start_time 2026-02-01T10:00:00Z"},
		{"minutes outside 0-59", start, `recurrence {
    frequency = "day"
    schedule {
      minutes = [0, 60]
    }
  }`, "",
			"Invalid recurrence.schedule.minutes[1]: 60 is outside 0..59", "recurrence.schedule.minutes[1]: 60 is outside 0..59"},
		{"hours outside 0-23", start, `recurrence {
    frequency = "day"
    schedule {
      hours = [24]
    }
  }`, "",
			"Invalid recurrence.schedule.hours[0]: 24 is outside 0..23", "recurrence.schedule.hours[0]: 24 is outside 0..23"},
		{"duplicate minutes", start, `recurrence {
    frequency = "day"
    schedule {
      minutes = [5, 5]
    }
  }`, "",
			"Invalid recurrence.schedule.minutes[1]: 5 is a duplicate of minutes[0]", "recurrence.schedule.minutes[1]: 5 is a duplicate of minutes[0]"},
		{"weekDays only with Week", start, `recurrence {
    frequency = "day"
    schedule {
      week_days = ["monday"]
    }
  }`, "",
			"Invalid recurrence.schedule.week_days: allowed only with frequency Week, not Day", "recurrence.schedule.week_days: allowed only with frequency Week, not Day"},
		{"at most 7 weekDays", start, `recurrence {
    frequency = "week"
    schedule {
      week_days = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday", "monday"]
    }
  }`, "",
			"Invalid recurrence.schedule.week_days: at most 7 days, got 8", "recurrence.schedule.week_days: at most 7 days, got 8"},
		{"monthDays above 31", start, `recurrence {
    frequency = "month"
    schedule {
      month_days = [1, 15, 32]
    }
  }`, "",
			"Invalid recurrence.schedule.month_days[2]: 32 is outside -31..-1, 1..31", "recurrence.schedule.month_days[2]: 32 is outside -31..-1, 1..31"},
		{"monthDays zero", start, `recurrence {
    frequency = "month"
    schedule {
      month_days = [0]
    }
  }`, "",
			"Invalid recurrence.schedule.month_days[0]: 0 is outside -31..-1, 1..31", "recurrence.schedule.month_days[0]: 0 is outside -31..-1, 1..31"},
		{"monthDays only with Month", start, `recurrence {
    frequency = "week"
    schedule {
      month_days = [1]
    }
  }`, "",
			"Invalid recurrence.schedule.month_days: allowed only with frequency Month, not Week", "recurrence.schedule.month_days: allowed only with frequency Month, not Week"},
		{"occurrence outside -5..5", start, `recurrence {
    frequency = "month"
    schedule {
      monthly_occurrences {
        day        = "friday"
        occurrence = 6
      }
    }
  }`, "",
			"Invalid recurrence.schedule.monthly_occurrences[0].occurrence: 6 is outside -5..-1, 1..5", "recurrence.schedule.monthly_occurrences[0].occurrence: 6 is outside -5..-1, 1..5"},
		{"monthlyOccurrences only with Month", start, `recurrence {
    frequency = "day"
    schedule {
      monthly_occurrences {
        day        = "friday"
        occurrence = -1
      }
    }
  }`, "",
			"Invalid recurrence.schedule.monthly_occurrences: allowed only with frequency Month, not Day", "recurrence.schedule.monthly_occurrences: allowed only with frequency Month, not Day"},
		{"a rule that can never fire", start, `recurrence {
    frequency = "month"
    interval  = 12
    schedule {
      month_days = [30]
    }
  }`, "",
			"Invalid recurrence.schedule: the rule can never fire: no month it reaches from 2026-02-01T10:00:00Z (every 12) has a matching day and time", "recurrence.schedule: the rule can never fire: no month it reaches from 2026-02-01T10:00:00Z (every 12) has a matching day and time"},
		{"unknown time zone", start, `recurrence {
    frequency = "day"
    time_zone = "Mars/Olympus"
  }`, "",
			`Invalid recurrence.time_zone: unknown time zone "Mars/Olympus": expected an IANA name such as Europe/Berlin`, `recurrence.time_zone: unknown time zone "Mars/Olympus": expected an IANA name such as Europe/Berlin`},
		{"startTime not ISO 8601", "yesterday", `recurrence {
    frequency = "day"
  }`, "",
			`Invalid start_time: "yesterday" is not an ISO 8601 date-time such as 2012-08-04T00:00:00Z or a date such as 2012-11-04`, `start_time: "yesterday" is not an ISO 8601 date-time such as 2012-08-04T00:00:00Z or a date such as 2012-11-04`},
		{"retryInterval below 15 s", start, "", `retry_policy {
    retry_type     = "fixed"
    retry_interval = "PT5S"
  }`,
			`Invalid action.retry_policy.retry_interval: "PT5S" is 5s, below the minimum of 15s`, `action.retry_policy.retry_interval: "PT5S" is 5s, below the minimum of 15s`},
		{"retryInterval above 18 months", start, "", `retry_policy {
    retry_type     = "fixed"
    retry_interval = "P19M"
  }`,
			`Invalid action.retry_policy.retry_interval: "P19M" is 13680h0m0s, above the maximum of 18 months (540 days)`, `action.retry_policy.retry_interval: "P19M" is 13680h0m0s, above the maximum of 18 months (540 days)`},
		{"retryCount above 20", start, "", `retry_policy {
    retry_type  = "fixed"
    retry_count = 21
  }`,
			"Invalid action.retry_policy.retry_count: 21 is outside 0..20", "action.retry_policy.retry_count: 21 is outside 0..20"},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			resource.Test(t, resource.TestCase{
				ProtoV6ProviderFactories: protoV6Factories(),
				Steps: []resource.TestStep{{
					Config:          planJob(tc.recurrence, tc.retry),
					ConfigVariables: planVars(tc.start),
					PlanOnly:        true,
					ExpectError:     regexp.MustCompile(messageRE(tc.summary).String() + `(?s:.*)` + messageRE(tc.detail).String()),
				}},
			})
		})
	}
}

// An enum outside the allowed values is rejected by the schema, in any case.
func TestAccJob_planRejectsUnknownEnum(t *testing.T) {
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6Factories(),
		Steps: []resource.TestStep{{
			Config: planJob(`recurrence {
    frequency = "fortnight"
  }`, ""),
			ConfigVariables: planVars("2026-02-01T10:00:00Z"),
			PlanOnly:        true,
			ExpectError:     messageRE(`Attribute recurrence.frequency value must be one of: ["Minute" "Hour" "Day" "Week" "Month"], got: "fortnight"`),
		}},
	})
}

// A value known only after apply is not guessed: the rules that depend on it are skipped at
// plan time (the daemon still checks them at apply).
func TestAccJob_planSkipsUnknownValues(t *testing.T) {
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6Factories(),
		Steps: []resource.TestStep{{
			Config: `
resource "scheduler_job_collection" "test" {
  name = "unknown-values"
}

resource "scheduler_job" "test" {
  job_collection_id = scheduler_job_collection.test.id
  name              = "later"
  # Unknown until apply (timestamp()); with end_time before it, the job would be invalid.
  start_time = timestamp() == "" ? "" : "2026-02-01T10:00:00Z"
  action {
    type = "http"
    request {
      uri    = "http://example.com/"
      method = "get"
    }
  }
  recurrence {
    frequency = "day"
    end_time  = "2026-01-01"
  }
}
`,
			PlanOnly:           true,
			ExpectNonEmptyPlan: true,
		}},
	})
}

// With an unknown start time, the rules that do not depend on it are still checked at plan time.
func TestAccJob_planChecksWhatIsKnown(t *testing.T) {
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6Factories(),
		Steps: []resource.TestStep{{
			Config: `
resource "scheduler_job_collection" "test" {
  name = "known-values"
}

resource "scheduler_job" "test" {
  job_collection_id = scheduler_job_collection.test.id
  name              = "later"
  start_time        = timestamp() == "" ? "" : "2026-02-01T10:00:00Z" # unknown until apply
  action {
    type = "http"
    request {
      uri    = "http://example.com/"
      method = "get"
    }
  }
  recurrence {
    frequency = "month"
    schedule {
      month_days = [1, 32]
    }
  }
}
`,
			PlanOnly:    true,
			ExpectError: messageRE("recurrence.schedule.month_days[1]: 32 is outside -31..-1, 1..31"),
		}},
	})
}

// job_collection_id must be a collection's ARM id: plan says what to use.
func TestAccJob_planRejectsBadCollectionID(t *testing.T) {
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6Factories(),
		Steps: []resource.TestStep{{
			Config: `
resource "scheduler_job" "test" {
  job_collection_id = "ops"
  name              = "x"
  action {
    type = "http"
    request {
      uri    = "http://example.com/"
      method = "get"
    }
  }
}
`,
			PlanOnly:    true,
			ExpectError: messageRE(`Fix job_collection_id: use scheduler_job_collection.<name>.id`),
		}},
	})
}

// Exactly one authentication block: two is a plan error.
func TestAccJob_planRejectsTwoAuthentications(t *testing.T) {
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6Factories(),
		Steps: []resource.TestStep{{
			Config: `
resource "scheduler_job" "test" {
  job_collection_id = "/subscriptions/default/resourceGroups/default/providers/Microsoft.Scheduler/jobCollections/plan-only"
  name              = "x"
  action {
    type = "https"
    request {
      uri    = "https://example.com/"
      method = "get"
      authentication {
        basic {
          username = "u"
          password = "p"
        }
        active_directory_oauth {
          tenant    = "t"
          audience  = "a"
          client_id = "c"
          secret    = "s"
        }
      }
    }
  }
}
`,
			PlanOnly: true,
			ExpectError: regexp.MustCompile(messageRE(`Invalid action.request.authentication: set only one of basic, client_certificate, active_directory_oauth`).String() +
				`(?s:.*)` + messageRE(`action.request.authentication holds 2 blocks (basic, active_directory_oauth); it takes exactly one.`).String()),
		}},
	})
}

func ints(vs ...attr.Value) types.List { return types.ListValueMust(types.Int64Type, vs) }

// errorsOf renders attribute errors as "path: detail", one per line, in order.
func errorsOf(diags diag.Diagnostics) string {
	var lines []string
	for _, d := range diags.Errors() {
		line := d.Detail()
		if wp, ok := d.(diag.DiagnosticWithPath); ok {
			line = wp.Path().String() + " | " + line
		}
		lines = append(lines, line)
	}
	return strings.Join(lines, "\n")
}

func monthlyJob() *jobModel {
	m := benchJob()
	m.StartTime = types.StringValue("2026-02-01T10:00:00Z")
	m.Recurrence = &recurrenceModel{
		Frequency: enumOf("month"), Interval: types.Int64Null(), Count: types.Int64Null(),
		EndTime: types.StringValue("2026-01-01"), TimeZone: types.StringNull(),
		Schedule: &scheduleModel{
			Minutes: ints(types.Int64Value(60)), Hours: types.ListNull(types.Int64Type),
			WeekDays: types.ListNull(types.StringType), MonthDays: ints(types.Int64Value(1), types.Int64Value(32)),
		},
	}
	return m
}

func TestValidateJobReportsEveryProblemAtItsAttribute(t *testing.T) {
	var diags diag.Diagnostics
	validateJob(&diags, monthlyJob(), clock.NewFake(time.Date(2026, 1, 15, 0, 0, 0, 0, time.UTC)))
	want := strings.Join([]string{
		"recurrence.end_time | recurrence.end_time: 2026-01-01T00:00:00Z is before start_time 2026-02-01T10:00:00Z",
		"recurrence.schedule.minutes[0] | recurrence.schedule.minutes[0]: 60 is outside 0..59",
		"recurrence.schedule.month_days[1] | recurrence.schedule.month_days[1]: 32 is outside -31..-1, 1..31",
	}, "\n")
	if got := sortedLines(errorsOf(diags)); got != want {
		t.Errorf("errors\n got:\n%s\nwant:\n%s", got, want)
	}
}

// Unknown values are skipped, not guessed: problems that may depend on them are not reported,
// the others are.
func TestValidateJobSkipsWhatDependsOnUnknownValues(t *testing.T) {
	now := clock.NewFake(time.Date(2026, 1, 15, 0, 0, 0, 0, time.UTC))
	for _, tc := range []struct {
		name   string
		modify func(m *jobModel)
		want   []string
	}{
		{"unknown start_time: the end time and the never-fires check wait", func(m *jobModel) { m.StartTime = types.StringUnknown() }, []string{
			"recurrence.schedule.minutes[0] | recurrence.schedule.minutes[0]: 60 is outside 0..59",
			"recurrence.schedule.month_days[1] | recurrence.schedule.month_days[1]: 32 is outside -31..-1, 1..31",
		}},
		{"an unknown month day: that list waits", func(m *jobModel) {
			m.Recurrence.Schedule.MonthDays = ints(types.Int64Unknown(), types.Int64Value(32))
		}, []string{
			"recurrence.end_time | recurrence.end_time: 2026-01-01T00:00:00Z is before start_time 2026-02-01T10:00:00Z",
			"recurrence.schedule.minutes[0] | recurrence.schedule.minutes[0]: 60 is outside 0..59",
		}},
		{"unknown frequency: the whole schedule waits", func(m *jobModel) { m.Recurrence.Frequency = enumValue{types.StringUnknown()} }, nil},
		{"unknown uri: the schedule is still checked", func(m *jobModel) { m.Action.Request.URI = types.StringUnknown() }, []string{
			"recurrence.end_time | recurrence.end_time: 2026-01-01T00:00:00Z is before start_time 2026-02-01T10:00:00Z",
			"recurrence.schedule.minutes[0] | recurrence.schedule.minutes[0]: 60 is outside 0..59",
			"recurrence.schedule.month_days[1] | recurrence.schedule.month_days[1]: 32 is outside -31..-1, 1..31",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := monthlyJob()
			tc.modify(m)
			var diags diag.Diagnostics
			validateJob(&diags, m, now)
			if got, want := sortedLines(errorsOf(diags)), strings.Join(tc.want, "\n"); got != want {
				t.Errorf("errors\n got:\n%s\nwant:\n%s", got, want)
			}
		})
	}
}

func TestUnknownsCovers(t *testing.T) {
	u := unknowns{"startTime", "action.request.authentication.password"}
	for path, want := range map[string]bool{
		"":                                  true,
		"startTime":                         true,
		"recurrence.endTime":                true,
		"recurrence.schedule":               true,
		"recurrence.schedule.monthDays[2]":  false,
		"action.request.authentication.pfx": true,
		"action.request.uri":                false,
		"action.errorAction.request.uri":    false,
	} {
		if got := u.covers(path); got != want {
			t.Errorf("covers(%q) = %v, want %v", path, got, want)
		}
	}
}

func sortedLines(s string) string {
	if s == "" {
		return ""
	}
	lines := strings.Split(s, "\n")
	for i := 1; i < len(lines); i++ {
		for j := i; j > 0 && lines[j] < lines[j-1]; j-- {
			lines[j], lines[j-1] = lines[j-1], lines[j]
		}
	}
	return strings.Join(lines, "\n")
}

// benchJob is the job of tools/bench-plan.sh.
func benchJob() *jobModel {
	return &jobModel{
		StartTime: types.StringValue("2030-01-01T00:00:00"),
		State:     enumOf("Enabled"),
		Action: &actionModel{
			Type: enumOf("Https"),
			Request: &requestModel{
				URI: types.StringValue("https://example.com/hooks/1"), Method: enumOf("POST"),
				Body:    types.StringValue(`{"job":1}`),
				Headers: types.MapValueMust(types.StringType, map[string]attr.Value{"Content-Type": types.StringValue("application/json")}),
			},
			RetryPolicy: &retryPolicyModel{RetryType: enumOf("Fixed"), RetryInterval: durationOf("PT1M"), RetryCount: types.Int64Value(3)},
		},
		Recurrence: &recurrenceModel{
			Frequency: enumOf("Week"), Interval: types.Int64Null(), Count: types.Int64Null(), EndTime: types.StringNull(),
			TimeZone: types.StringValue("Europe/Berlin"),
			Schedule: &scheduleModel{
				WeekDays:  types.ListValueMust(types.StringType, []attr.Value{types.StringValue("Monday"), types.StringValue("Wednesday"), types.StringValue("Friday")}),
				Hours:     types.ListValueMust(types.Int64Type, []attr.Value{types.Int64Value(2)}),
				Minutes:   types.ListValueMust(types.Int64Type, []attr.Value{types.Int64Value(1)}),
				MonthDays: types.ListNull(types.Int64Type),
			},
		},
	}
}

// BenchmarkValidateJob is the plan-time check of one job (ValidateConfig without the framework).
func BenchmarkValidateJob(b *testing.B) {
	m := benchJob()
	c := clock.Real{}
	for b.Loop() {
		var diags diag.Diagnostics
		validateJob(&diags, m, c)
		if diags.HasError() {
			b.Fatal(diags)
		}
	}
}

// planCompletedJob plans, through the provider server with the clock at now, a change of URI of
// a Completed job whose start_time is startTime ("" for none): it returns what the plan replaces
// and its warnings.
func planCompletedJob(t *testing.T, now time.Time, startTime string) (replaced []string, warnings []string) {
	t.Helper()
	ctx := context.Background()
	server, err := providerserver.NewProtocol6WithError(NewWithClock("test", clock.NewFake(now))())()
	if err != nil {
		t.Fatal(err)
	}
	schemas, err := server.GetProviderSchema(ctx, &tfprotov6.GetProviderSchemaRequest{})
	if err != nil {
		t.Fatal(err)
	}
	typ := schemas.ResourceSchemas["scheduler_job"].ValueType()
	obj, ok := typ.(tftypes.Object)
	if !ok {
		t.Fatalf("scheduler_job's type %s is not an object", typ)
	}
	statusType := obj.AttributeTypes["status"]
	start := tftypes.NewValue(tftypes.String, nil)
	if startTime != "" {
		start = tfStr(startTime)
	}
	job := func(uri string, withComputed bool) map[string]any {
		m := map[string]any{
			"job_collection_id": tfStr("/subscriptions/default/resourceGroups/default/providers/Microsoft.Scheduler/jobCollections/c"),
			"name":              tfStr("once"),
			"start_time":        start,
			"action":            map[string]any{"type": tfStr("Http"), "request": map[string]any{"uri": tfStr(uri), "method": tfStr("POST")}},
		}
		if withComputed {
			one := tftypes.NewValue(tftypes.Number, big.NewFloat(1))
			zero := tftypes.NewValue(tftypes.Number, big.NewFloat(0))
			m["id"] = tfStr("/subscriptions/default/resourceGroups/default/providers/Microsoft.Scheduler/jobCollections/c/jobs/once")
			m["state"] = tfStr("Enabled")
			m["recurrence_description"] = tfStr("as it was")
			m["status"] = objectOf(t, statusType, map[string]any{"state": tfStr("Completed"), "execution_count": one,
				"failure_count": zero, "faulted_count": zero, "last_execution_time": tfStr("2026-01-01T08:00:00Z")})
		}
		return m
	}
	dv := func(v map[string]any) *tfprotov6.DynamicValue {
		d, err := tfprotov6.NewDynamicValue(typ, objectOf(t, typ, v))
		if err != nil {
			t.Fatal(err)
		}
		return &d
	}
	resp, err := server.PlanResourceChange(ctx, &tfprotov6.PlanResourceChangeRequest{
		TypeName:         "scheduler_job",
		PriorState:       dv(job("http://e.com/a", true)),
		ProposedNewState: dv(job("http://e.com/b", true)),
		Config:           dv(job("http://e.com/b", false)),
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range resp.Diagnostics {
		if d.Severity == tfprotov6.DiagnosticSeverityError {
			t.Fatalf("plan: %s: %s", d.Summary, d.Detail)
		}
		warnings = append(warnings, d.Summary+" | "+d.Detail)
	}
	for _, p := range resp.RequiresReplace {
		replaced = append(replaced, p.String())
	}
	return replaced, warnings
}

// Replacing a Completed one-shot whose start_time has passed (or that has none) runs it again at
// once: the plan warns. One whose start_time is still ahead is replaced without a warning.
func TestPlanWarnsWhenAReplacementRunsAgain(t *testing.T) {
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	const detail = ", so the new job runs once, immediately, when it is created, although the old one already ran. " +
		"To avoid the run, set start_time to a future time (or remove the job from the configuration)."
	for _, tc := range []struct {
		name, start string
		warnings    []string
	}{
		{"start_time past", "2026-01-01T08:00:00Z", []string{"Replacing the Completed job once runs it again now | " +
			"The job is Completed, so the API cannot update it: this plan replaces it. Its start_time is in the past" + detail}},
		{"no start_time", "", []string{"Replacing the Completed job once runs it again now | " +
			"The job is Completed, so the API cannot update it: this plan replaces it. It has no start_time" + detail}},
		{"start_time ahead", "2030-01-01T08:00:00Z", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			replaced, warnings := planCompletedJob(t, now, tc.start)
			if want := []string{`AttributeName("action")`}; !slices.Equal(replaced, want) {
				t.Errorf("replaced %q, want %q", replaced, want)
			}
			if !slices.Equal(warnings, tc.warnings) {
				t.Errorf("warnings:\n%q\nwant:\n%q", warnings, tc.warnings)
			}
		})
	}
}

// A job without its action block fails plan through the CLI with the block named with the right
// article ("An action", not "A action": issue 25's small things).
func TestAccJob_missingActionBlock(t *testing.T) {
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6Factories(),
		Steps: []resource.TestStep{{
			Config: `
variable "collection_id" { type = string }

resource "scheduler_job" "test" {
  job_collection_id = var.collection_id
  name              = "no-action"
  start_time        = "2030-01-01T00:00:00Z"
}
`,
			ConfigVariables: config.Variables{"collection_id": config.StringVariable(
				"/subscriptions/default/resourceGroups/default/providers/Microsoft.Scheduler/jobCollections/plan-only")},
			PlanOnly:    true,
			ExpectError: regexp.MustCompile(`(?s)` + messageRE(`Error: Missing action`).String() + `.*` + messageRE(`An action { ... } block is required.`).String()),
		}},
	})
}

// The other side of importing the default retry policy as no block (importedFromWire): a
// configuration that writes the default block explicitly plans adding it once after the import,
// an in-place update that leaves the API's policy the default, then nothing.
func TestAccJob_importDefaultRetryWrittenExplicitly(t *testing.T) {
	coll := acctest.RandomWithPrefix("import")
	id := client.JobID{CollectionID: client.CollectionID{Subscription: DefaultSubscriptionID, ResourceGroup: "default", Name: coll}, Name: "retry"}
	const cfg = `
variable "collection" { type = string }
variable "with_job" { type = bool }

resource "scheduler_job_collection" "test" {
  name          = var.collection
  force_destroy = true
}

resource "scheduler_job" "test" {
  count             = var.with_job ? 1 : 0
  job_collection_id = scheduler_job_collection.test.id
  name              = "retry"
  start_time        = "2030-12-01T07:30:00Z"
  action {
    type = "Http"
    request {
      uri    = "http://127.0.0.1:9/retry"
      method = "GET"
    }
    retry_policy {
      retry_type     = "Fixed"
      retry_interval = "PT30S"
      retry_count    = 4
    }
  }
}
`
	vars := func(withJob bool) config.Variables {
		return config.Variables{"collection": config.StringVariable(coll), "with_job": config.BoolVariable(withJob)}
	}
	retryPolicy := tfjsonpath.New("action").AtMapKey("retry_policy")
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6Factories(),
		Steps: []resource.TestStep{
			{
				Config:          cfg,
				ConfigVariables: vars(false),
				Check: func(*terraform.State) error {
					job := &wire.JobDefinition{Properties: &wire.JobProperties{StartTime: "2030-12-01T07:30:00Z", Action: &wire.JobAction{
						Type: "Http", Request: &wire.HTTPRequest{URI: "http://127.0.0.1:9/retry", Method: "GET"},
						RetryPolicy: &wire.RetryPolicy{RetryType: "Fixed", RetryInterval: "00:00:30", RetryCount: new(4)}}}}
					_, err := testClient(t).JobPut(context.Background(), id, job)
					return err
				},
			},
			{
				Config:             cfg,
				ConfigVariables:    vars(true),
				ResourceName:       "scheduler_job.test[0]",
				ImportState:        true,
				ImportStateId:      id.String(),
				ImportStatePersist: true,
				ImportStateCheck: func(s []*terraform.InstanceState) error {
					for _, is := range s {
						if is.ID == id.String() {
							if v, ok := is.Attributes["action.retry_policy.retry_type"]; ok {
								return fmt.Errorf("imported with retry_policy (retry_type %q), want none", v)
							}
							return nil
						}
					}
					return fmt.Errorf("the job is not among the imported states")
				},
			},
			{
				Config:          cfg,
				ConfigVariables: vars(true),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction("scheduler_job.test[0]", plancheck.ResourceActionUpdate),
						plancheck.ExpectKnownValue("scheduler_job.test[0]", retryPolicy.AtMapKey("retry_type"), knownvalue.StringExact("Fixed")),
					},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				Check: checkJob(t, id, func(p *wire.JobProperties) error {
					if pol, ps := retry.Parse("action.retryPolicy", p.Action.RetryPolicy); len(ps) > 0 || pol != retry.Default() {
						return fmt.Errorf("retry policy %+v (%v), want the default", p.Action.RetryPolicy, ps)
					}
					return nil
				}),
			},
		},
	})
}
