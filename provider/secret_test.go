package provider

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

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
)

// basicJobsConfig is two jobs, a and b, calling url/a and url/b with HTTP Basic credentials,
// each password in its sensitive form (var.X_password) or its write-only form
// (var.X_password_wo, var.X_password_wo_version): a variable left null leaves its attribute unset.
const basicJobsConfig = `
variable "collection" { type = string }
variable "url" { type = string }
variable "body" { type = string }
variable "a_password" {
  type      = string
  default   = null
  sensitive = true
}
variable "a_password_wo" {
  type      = string
  default   = null
  sensitive = true
}
variable "a_password_wo_version" {
  type    = number
  default = null
}
variable "b_password" {
  type      = string
  default   = null
  sensitive = true
}
variable "b_password_wo" {
  type      = string
  default   = null
  sensitive = true
}
variable "b_password_wo_version" {
  type    = number
  default = null
}

resource "scheduler_job_collection" "test" {
  name = var.collection
}

resource "scheduler_job" "a" {
  job_collection_id = scheduler_job_collection.test.id
  name              = "a"
  start_time        = "2040-01-01T00:00:00Z"
  action {
    type = "Http"
    request {
      uri    = "${var.url}/a"
      method = "POST"
      authentication {
        basic {
          username            = "reporter"
          password            = var.a_password
          password_wo         = var.a_password_wo
          password_wo_version = var.a_password_wo_version
        }
      }
    }
  }
}

resource "scheduler_job" "b" {
  job_collection_id = scheduler_job_collection.test.id
  name              = "b"
  start_time        = "2040-01-01T00:00:00Z"
  action {
    type = "Http"
    request {
      uri    = "${var.url}/b"
      method = "POST"
      body   = var.body
      authentication {
        basic {
          username            = "reporter"
          password            = var.b_password
          password_wo         = var.b_password_wo
          password_wo_version = var.b_password_wo_version
        }
      }
    }
  }
}
`

// credentialsReceiver is an HTTP server that hands each request's path and Basic credentials
// ("/a reporter:password", or "/a none") to got.
func credentialsReceiver(t *testing.T) (url string, got chan string) {
	got = make(chan string, 16)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		creds := "none"
		if user, pass, ok := r.BasicAuth(); ok {
			creds = user + ":" + pass
		}
		got <- r.URL.Path + " " + creds
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(srv.Close)
	return srv.URL, got
}

// runAndExpect checks that the secrets named are nowhere in the state, runs the jobs now and
// checks the requests the receiver gets (one per job, in any order). The collection's
// maxRecurrence (one minute) applies to manual runs too: a run refused for it is asked again
// until the daemon allows it.
func runAndExpect(t *testing.T, ids []client.JobID, got chan string, want []string, notInState ...string) resource.TestCheckFunc {
	return func(s *terraform.State) error {
		for _, m := range s.Modules {
			for addr, r := range m.Resources {
				for k, v := range r.Primary.Attributes {
					for _, secret := range notInState {
						if strings.Contains(v, secret) {
							return fmt.Errorf("%s: state attribute %s holds the write-only secret %q", addr, k, secret)
						}
					}
				}
			}
		}
		c := testClient(t)
		for _, id := range ids {
			deadline := time.Now().Add(90 * time.Second)
			for {
				err := c.JobRun(context.Background(), id)
				if err == nil {
					break
				}
				if !strings.Contains(err.Error(), "allows its next run from") || time.Now().After(deadline) {
					return fmt.Errorf("run %s: %w", id, err)
				}
				time.Sleep(time.Second)
			}
		}
		var gotten []string
		for range want {
			select {
			case r := <-got:
				gotten = append(gotten, r)
			case <-time.After(30 * time.Second):
				return fmt.Errorf("the receiver got %q, then nothing for 30s; want %q", gotten, want)
			}
		}
		slices.Sort(gotten)
		if !slices.Equal(gotten, want) {
			return fmt.Errorf("the receiver got %q, want %q", gotten, want)
		}
		return nil
	}
}

// Moving a job from password to password_wo never sends an empty or stale secret: the receiver
// gets the right credentials after every step. Job a moves from password to password_wo, then
// gets a new one with a new version; job b keeps its password_wo through another change (sent
// again, not emptied), then moves back to password. The write-only values are never in the state.
func TestAccJob_passwordToWriteOnly(t *testing.T) {
	url, got := credentialsReceiver(t)
	coll := acctest.RandomWithPrefix("jc")
	collID := client.CollectionID{Subscription: DefaultSubscriptionID, ResourceGroup: "default", Name: coll}
	ids := []client.JobID{{CollectionID: collID, Name: "a"}, {CollectionID: collID, Name: "b"}}
	basic := tfjsonpath.New("action").AtMapKey("request").AtMapKey("authentication").AtMapKey("basic")
	vars := func(body string, extra config.Variables) config.Variables {
		v := config.Variables{"collection": config.StringVariable(coll), "url": config.StringVariable(url), "body": config.StringVariable(body)}
		maps.Copy(v, extra)
		return v
	}
	update := resource.ConfigPlanChecks{
		PreApply: []plancheck.PlanCheck{
			plancheck.ExpectResourceAction("scheduler_job.a", plancheck.ResourceActionUpdate),
			plancheck.ExpectResourceAction("scheduler_job.b", plancheck.ResourceActionUpdate),
		},
		PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6Factories(),
		CheckDestroy:             checkJobDestroyed(t, ids[0]),
		Steps: []resource.TestStep{
			{ // a: the sensitive form, in the state; b: the write-only form, nowhere in the state
				Config: basicJobsConfig,
				ConfigVariables: vars("one", config.Variables{
					"a_password":    config.StringVariable("pw-a-sensitive-1"),
					"b_password_wo": config.StringVariable("pw-b-wo-1"), "b_password_wo_version": config.IntegerVariable(1),
				}),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("scheduler_job.a", basic.AtMapKey("password"), knownvalue.StringExact("pw-a-sensitive-1")),
					statecheck.ExpectKnownValue("scheduler_job.a", basic.AtMapKey("password_wo"), knownvalue.Null()),
					statecheck.ExpectKnownValue("scheduler_job.b", basic.AtMapKey("password"), knownvalue.Null()),
					statecheck.ExpectKnownValue("scheduler_job.b", basic.AtMapKey("password_wo"), knownvalue.Null()),
					statecheck.ExpectKnownValue("scheduler_job.b", basic.AtMapKey("password_wo_version"), knownvalue.Int64Exact(1)),
				},
				Check: runAndExpect(t, ids, got, []string{"/a reporter:pw-a-sensitive-1", "/b reporter:pw-b-wo-1"}, "pw-b-wo-1"),
			},
			{ // a: moved to password_wo; b: another change, the same password_wo
				Config: basicJobsConfig,
				ConfigVariables: vars("two", config.Variables{
					"a_password_wo": config.StringVariable("pw-a-wo-2"), "a_password_wo_version": config.IntegerVariable(1),
					"b_password_wo": config.StringVariable("pw-b-wo-1"), "b_password_wo_version": config.IntegerVariable(1),
				}),
				ConfigPlanChecks: update,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("scheduler_job.a", basic.AtMapKey("password"), knownvalue.Null()),
					statecheck.ExpectKnownValue("scheduler_job.a", basic.AtMapKey("password_wo"), knownvalue.Null()),
					statecheck.ExpectKnownValue("scheduler_job.a", basic.AtMapKey("password_wo_version"), knownvalue.Int64Exact(1)),
				},
				Check: runAndExpect(t, ids, got, []string{"/a reporter:pw-a-wo-2", "/b reporter:pw-b-wo-1"}, "pw-a-wo-2", "pw-b-wo-1"),
			},
			{ // a: a new password_wo with a new version; b: back to the sensitive form
				Config: basicJobsConfig,
				ConfigVariables: vars("two", config.Variables{
					"a_password_wo": config.StringVariable("pw-a-wo-3"), "a_password_wo_version": config.IntegerVariable(2),
					"b_password": config.StringVariable("pw-b-sensitive-2"),
				}),
				ConfigPlanChecks: update,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("scheduler_job.a", basic.AtMapKey("password_wo_version"), knownvalue.Int64Exact(2)),
					statecheck.ExpectKnownValue("scheduler_job.b", basic.AtMapKey("password"), knownvalue.StringExact("pw-b-sensitive-2")),
					statecheck.ExpectKnownValue("scheduler_job.b", basic.AtMapKey("password_wo_version"), knownvalue.Null()),
				},
				Check: runAndExpect(t, ids, got, []string{"/a reporter:pw-a-wo-3", "/b reporter:pw-b-sensitive-2"}, "pw-a-wo-3"),
			},
		},
	})
}

// Both forms of one secret, or a version without the write-only value, are refused at plan time.
func TestAccJob_writeOnlyConflicts(t *testing.T) {
	coll := acctest.RandomWithPrefix("jc")
	vars := config.Variables{"collection": config.StringVariable(coll), "url": config.StringVariable("http://127.0.0.1:1"), "body": config.StringVariable("b")}
	with := func(extra config.Variables) config.Variables {
		v := maps.Clone(vars)
		maps.Copy(v, extra)
		return v
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6Factories(),
		Steps: []resource.TestStep{
			{
				Config:          basicJobsConfig,
				ConfigVariables: with(config.Variables{"a_password": config.StringVariable("a"), "a_password_wo": config.StringVariable("b")}),
				PlanOnly:        true,
				ExpectError:     regexp.MustCompile(`(?s)Invalid Attribute Combination.*basic.password_wo"\s+cannot\s+be\s+specified\s+when\s+"action.request.authentication.basic.password"`),
			},
			{
				Config:          basicJobsConfig,
				ConfigVariables: with(config.Variables{"a_password": config.StringVariable("a"), "a_password_wo_version": config.IntegerVariable(1)}),
				PlanOnly:        true,
				ExpectError:     regexp.MustCompile(`(?s)Invalid Attribute Combination.*basic.password_wo"\s+must\s+be\s+specified\s+when\s+"action.request.authentication.basic.password_wo_version"`),
			},
		},
	})
}

// A secret's sensitive form draws one warning recommending its write-only form; the write-only
// form none; a problem with the write-only value is reported at it; a missing secret names both.
func TestSecretFormsAtPlanTime(t *testing.T) {
	queue := func(sas, sasWO tftypes.Value) map[string]any {
		return map[string]any{"type": tfStr("StorageQueue"), "queue_message": map[string]any{
			"storage_account": tfStr("acct"), "queue_name": tfStr("jobs"), "message": tfStr("m"), "sas_token": sas, "sas_token_wo": sasWO}}
	}
	null := tftypes.NewValue(tftypes.String, nil)
	at := `AttributeName("action").AttributeName("queue_message").AttributeName(`
	for _, tc := range []struct {
		name             string
		action           map[string]any
		errors, warnings []string
	}{
		{"sensitive", queue(tfStr("sv=1&sig=s3cr3t"), null), nil,
			[]string{`Prefer sas_token_wo: sas_token is stored in the state | ` + at + `"sas_token")`}},
		{"write-only", queue(null, tfStr("sv=1&sig=s3cr3t")), nil, nil},
		{"bad write-only", queue(null, tfStr("s3cr3t")),
			[]string{`Invalid action.queue_message.sas_token_wo: is not a shared access signature (a query string with sig=...) | ` + at + `"sas_token_wo")`}, nil},
		{"neither", queue(null, null),
			[]string{`Invalid action.queue_message.sas_token: is required (or sas_token_wo) | ` + at + `"sas_token")`}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ds := validateActionThroughServer(t, tc.action)
			if got := diagnosticsOf(ds, tfprotov6.DiagnosticSeverityError); !slices.Equal(got, tc.errors) {
				t.Errorf("errors:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.errors, "\n"))
			}
			if got := diagnosticsOf(ds, tfprotov6.DiagnosticSeverityWarning); !slices.Equal(got, tc.warnings) {
				t.Errorf("warnings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.warnings, "\n"))
			}
			for _, d := range ds {
				if strings.Contains(d.Summary+d.Detail, "s3cr3t") {
					t.Errorf("a diagnostic quotes the secret: %s", d.Summary+d.Detail)
				}
			}
		})
	}
}
