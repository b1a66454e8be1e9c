package provider

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
	"github.com/hashicorp/terraform-plugin-testing/config"
	"github.com/hashicorp/terraform-plugin-testing/helper/acctest"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/schedulerhq/terraform-provider-scheduler/internal/client"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"
)

// signingSecret is a valid Standard Webhooks secret: "whsec_" and the base64 of n bytes of b.
func signingSecret(b byte, n int) string {
	return "whsec_" + base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{b}, n))
}

// Plan-time checks of how a job calls (timeout, Exponential retries, signing): the engine's
// rules at the attribute (the write-only form's when that is the one set), no secret in any
// diagnostic, and the sensitive forms' warnings.
func TestCallsAtPlanTime(t *testing.T) {
	good, short := signingSecret(1, 32), signingSecret(2, 16)
	null := tftypes.NewValue(tftypes.String, nil)
	request := func(signing map[string]any) map[string]any {
		r := map[string]any{"uri": tfStr("http://example.com/hook"), "method": tfStr("POST")}
		if signing != nil {
			r["signing"] = signing
		}
		return r
	}
	wo := func(secret string) map[string]any { return map[string]any{"secret_wo": tfStr(secret)} }
	action := at(`"action"`)
	for _, tc := range []struct {
		name             string
		action           map[string]any
		errors, warnings []string
	}{
		{"every extension, valid", map[string]any{"type": tfStr("http"), "timeout": tfStr("PT30M"), "request": request(map[string]any{
			"secret_wo": tfStr(good), "secret_wo_version": tftypes.NewValue(tftypes.Number, 1), "previous_secret_wo": tfStr(signingSecret(3, 64))}),
			"retry_policy": map[string]any{"retry_type": tfStr("exponential"), "retry_interval": tfStr("PT15S"), "max_retry_interval": tfStr("PT15S")},
			"error_action": map[string]any{"type": tfStr("Http"), "timeout": tfStr("PT1S"), "request": request(wo(good))}}, nil, nil},
		{"timeouts outside PT1S..PT30M", map[string]any{"type": tfStr("Http"), "timeout": tfStr("PT31M"), "request": request(nil),
			"error_action": map[string]any{"type": tfStr("Http"), "timeout": tfStr("PT0.5S"), "request": request(nil)}}, []string{
			`Invalid action.timeout: "PT31M" is 31m0s, outside PT1S..PT30M | ` + action + `.AttributeName("timeout")`,
			`Invalid action.error_action.timeout: "PT0.5S" is 500ms, outside PT1S..PT30M | ` + action + `.AttributeName("error_action").AttributeName("timeout")`,
		}, nil},
		{"max_retry_interval below retry_interval", map[string]any{"type": tfStr("Http"), "request": request(nil),
			"retry_policy": map[string]any{"retry_type": tfStr("Exponential"), "retry_interval": tfStr("PT10M"), "max_retry_interval": tfStr("PT5M")}}, []string{
			`Invalid action.retry_policy.max_retry_interval: "PT5M" is 5m0s, below the retry_interval of 10m0s | ` + action + `.AttributeName("retry_policy").AttributeName("max_retry_interval")`,
		}, nil},
		{"max_retry_interval with a Fixed policy", map[string]any{"type": tfStr("Http"), "request": request(nil),
			"retry_policy": map[string]any{"retry_type": tfStr("Fixed"), "max_retry_interval": tfStr("PT5M")}}, []string{
			`Invalid action.retry_policy.max_retry_interval: is allowed only with retry_type Exponential | ` + action + `.AttributeName("retry_policy").AttributeName("max_retry_interval")`,
		}, nil},
		{"a secret without whsec_", map[string]any{"type": tfStr("Http"), "request": request(wo(strings.TrimPrefix(good, "whsec_")))}, []string{
			`Invalid action.request.signing.secret_wo: must start with "whsec_" | ` + action + `.AttributeName("request").AttributeName("signing").AttributeName("secret_wo")`,
		}, nil},
		{"secrets of 16 bytes and not base64", map[string]any{"type": tfStr("Http"), "error_action": map[string]any{"type": tfStr("Http"),
			"request": request(map[string]any{"secret_wo": tfStr(short), "previous_secret_wo": tfStr("whsec_not base64!")})}, "request": request(nil)}, []string{
			`Invalid action.error_action.request.signing.secret_wo: decodes to 16 bytes; 24 to 64 are allowed | ` + action + `.AttributeName("error_action").AttributeName("request").AttributeName("signing").AttributeName("secret_wo")`,
			`Invalid action.error_action.request.signing.previous_secret_wo: must be whsec_ followed by standard base64 | ` + action + `.AttributeName("error_action").AttributeName("request").AttributeName("signing").AttributeName("previous_secret_wo")`,
		}, nil},
		{"signing without a secret", map[string]any{"type": tfStr("Http"), "request": request(map[string]any{"secret": null})}, []string{
			`Invalid action.request.signing.secret: is required for signing (or secret_wo) | ` + action + `.AttributeName("request").AttributeName("signing").AttributeName("secret")`,
		}, nil},
		{"signing on a storage queue action", map[string]any{"type": tfStr("StorageQueue"), "request": request(wo(good)),
			"queue_message": map[string]any{"storage_account": tfStr("acct"), "queue_name": tfStr("jobs"), "sas_token_wo": tfStr("sv=1&sig=s"), "message": tfStr("m")}}, []string{
			`Invalid action.request: is not allowed with a StorageQueue action (it takes queue_message) | ` + action + `.AttributeName("request")`,
			`Invalid action.request.signing: is allowed only on Http and Https actions (a StorageQueue action sends no HTTP request) | ` + action + `.AttributeName("request").AttributeName("signing")`,
		}, nil},
		{"the sensitive forms, warned", map[string]any{"type": tfStr("Http"), "request": request(map[string]any{"secret": tfStr(good), "previous_secret": tfStr(short)})}, []string{
			`Invalid action.request.signing.previous_secret: decodes to 16 bytes; 24 to 64 are allowed | ` + action + `.AttributeName("request").AttributeName("signing").AttributeName("previous_secret")`,
		}, []string{
			`Prefer secret_wo: secret is stored in the state | ` + action + `.AttributeName("request").AttributeName("signing").AttributeName("secret")`,
			`Prefer previous_secret_wo: previous_secret is stored in the state | ` + action + `.AttributeName("request").AttributeName("signing").AttributeName("previous_secret")`,
		}},
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
				for _, s := range []string{good, short, strings.TrimPrefix(good, "whsec_"), strings.TrimPrefix(short, "whsec_")} {
					if strings.Contains(d.Summary+d.Detail, s) {
						t.Errorf("a diagnostic quotes the secret: %s", d.Summary+d.Detail)
					}
				}
			}
		})
	}
}

// at renders the attribute path step of name as the diagnostics do.
func at(name string) string { return "AttributeName(" + name + ")" }

// callsConfig is two jobs: signed, a POST to url/signed with a timeout, an Exponential retry
// policy and signing (var.secret_wo, and var.previous_wo while rotating), and failing, whose
// action gets a 500 from url/fail and whose error action, signed with var.secret_wo, calls
// url/error.
const callsConfig = `
variable "collection" { type = string }
variable "url" { type = string }
variable "timeout" { type = string }
variable "secret_wo" {
  type      = string
  sensitive = true
}
variable "secret_wo_version" { type = number }
variable "previous_wo" {
  type      = string
  default   = null
  sensitive = true
}
variable "previous_wo_version" {
  type    = number
  default = null
}

resource "scheduler_job_collection" "test" {
  name = var.collection
}

resource "scheduler_job" "signed" {
  job_collection_id = scheduler_job_collection.test.id
  name              = "signed"
  start_time        = "2040-01-01T00:00:00Z"
  action {
    type    = "Http"
    timeout = var.timeout
    request {
      uri    = "${var.url}/signed"
      method = "POST"
      body   = "{\"report\":\"nightly\"}"
      signing {
        secret_wo                  = var.secret_wo
        secret_wo_version          = var.secret_wo_version
        previous_secret_wo         = var.previous_wo
        previous_secret_wo_version = var.previous_wo_version
      }
    }
    retry_policy {
      retry_type         = "exponential"
      retry_interval     = "00:00:30"
      retry_count        = 3
      max_retry_interval = "PT2M"
    }
  }
}

resource "scheduler_job" "failing" {
  job_collection_id = scheduler_job_collection.test.id
  name              = "failing"
  start_time        = "2040-01-01T00:00:00Z"
  action {
    type = "Http"
    request {
      uri    = "${var.url}/fail"
      method = "GET"
    }
    retry_policy {
      retry_type = "None"
    }
    error_action {
      type    = "Http"
      timeout = "PT5S"
      request {
        uri    = "${var.url}/error"
        method = "POST"
        signing {
          secret_wo         = var.secret_wo
          secret_wo_version = var.secret_wo_version
        }
      }
    }
  }
}
`

// signatureReceiver is an HTTP server that verifies each request with the Standard Webhooks Go
// library under each of secrets and hands "path verified-by" to got ("/signed s1 s2": the
// request verifies under secrets[0] and secrets[1]; "/fail none"). It answers 500 on /fail.
func signatureReceiver(t *testing.T, secrets ...string) (url string, got chan string) {
	got = make(chan string, 16)
	hooks := make([]*standardwebhooks.Webhook, len(secrets))
	for i, s := range secrets {
		wh, err := standardwebhooks.NewWebhook(s)
		if err != nil {
			t.Fatal(err)
		}
		hooks[i] = wh
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var by []string
		for i, wh := range hooks {
			if wh.Verify(body, r.Header) == nil {
				by = append(by, fmt.Sprintf("s%d", i+1))
			}
		}
		if len(by) == 0 {
			by = []string{"none"}
		}
		got <- r.URL.Path + " " + strings.Join(by, " ")
		if r.URL.Path == "/fail" {
			w.WriteHeader(http.StatusInternalServerError)
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL, got
}

// How a job calls, through Terraform: the timeouts, the Exponential policy and signing reach the
// daemon; a real receiver verifies the signatures of the daemon's requests (main and error
// action) with the specification's library, under the new and the previous secret while
// rotating; the secrets are never in the state; a timeout changed outside Terraform shows as
// drift and is set back; an import reads the same job.
func TestAccJob_calls(t *testing.T) {
	s1, s2 := signingSecret(0x11, 32), signingSecret(0x22, 48)
	url, got := signatureReceiver(t, s1, s2)
	coll := acctest.RandomWithPrefix("jc")
	collID := client.CollectionID{Subscription: DefaultSubscriptionID, ResourceGroup: "default", Name: coll}
	signed, failing := client.JobID{CollectionID: collID, Name: "signed"}, client.JobID{CollectionID: collID, Name: "failing"}
	vars := func(timeout string, extra config.Variables) config.Variables {
		v := config.Variables{"collection": config.StringVariable(coll), "url": config.StringVariable(url), "timeout": config.StringVariable(timeout)}
		maps.Copy(v, extra)
		return v
	}
	first := config.Variables{"secret_wo": config.StringVariable(s1), "secret_wo_version": config.IntegerVariable(1)}
	rotating := config.Variables{"secret_wo": config.StringVariable(s2), "secret_wo_version": config.IntegerVariable(2),
		"previous_wo": config.StringVariable(s1), "previous_wo_version": config.IntegerVariable(1)}
	// Fresh paths each time: a tfjsonpath.Path's At* append to its steps, so two paths made from
	// one shared prefix may share (and overwrite) their last step.
	ended := config.Variables{"secret_wo": config.StringVariable(s2), "secret_wo_version": config.IntegerVariable(2)}
	action := func(steps ...string) tfjsonpath.Path {
		p := tfjsonpath.New("action")
		for _, s := range steps {
			p = p.AtMapKey(s)
		}
		return p
	}
	signing := func(name string) tfjsonpath.Path { return action("request", "signing", name) }
	keys := []string{s1, s2, strings.TrimPrefix(s1, "whsec_"), strings.TrimPrefix(s2, "whsec_")}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6Factories(),
		CheckDestroy:             checkJobDestroyed(t, signed),
		Steps: []resource.TestStep{
			{ // created: every extension reaches the daemon, and both requests are signed with s1
				Config:          callsConfig,
				ConfigVariables: vars("PT10S", first),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("scheduler_job.signed", action("timeout"), knownvalue.StringExact("PT10S")),
					statecheck.ExpectKnownValue("scheduler_job.signed", action("retry_policy", "retry_type"), knownvalue.StringExact("exponential")),
					statecheck.ExpectKnownValue("scheduler_job.signed", action("retry_policy", "retry_interval"), knownvalue.StringExact("00:00:30")),
					statecheck.ExpectKnownValue("scheduler_job.signed", action("retry_policy", "max_retry_interval"), knownvalue.StringExact("PT2M")),
					statecheck.ExpectKnownValue("scheduler_job.signed", signing("secret_wo"), knownvalue.Null()),
					statecheck.ExpectKnownValue("scheduler_job.signed", signing("secret"), knownvalue.Null()),
					statecheck.ExpectKnownValue("scheduler_job.signed", signing("secret_wo_version"), knownvalue.Int64Exact(1)),
					statecheck.ExpectKnownValue("scheduler_job.signed", signing("previous_secret_wo_version"), knownvalue.Null()),
					statecheck.ExpectKnownValue("scheduler_job.failing", action("error_action", "timeout"), knownvalue.StringExact("PT5S")),
				},
				Check: resource.ComposeTestCheckFunc(
					checkJob(t, signed, func(p *wire.JobProperties) error {
						a := p.Action
						if a.Timeout != "PT10S" || a.RetryPolicy.RetryType != "Exponential" || a.RetryPolicy.MaxRetryInterval != "PT2M" ||
							a.Request.Signing == nil || *a.Request.Signing != (wire.HTTPSigning{}) {
							return fmt.Errorf("timeout %q, retry policy %+v, signing %+v (want {} : never returned)", a.Timeout, a.RetryPolicy, a.Request.Signing)
						}
						return nil
					}),
					checkJob(t, failing, func(p *wire.JobProperties) error {
						if e := p.Action.ErrorAction; e.Timeout != "PT5S" || e.Request.Signing == nil {
							return fmt.Errorf("error action timeout %q, signing %+v", e.Timeout, e.Request.Signing)
						}
						return nil
					}),
					runAndExpect(t, []client.JobID{signed, failing}, got, []string{"/error s1", "/fail none", "/signed s1"}, keys...),
				),
			},
			{ // rotation: s2 with s1 as the previous secret; the request carries a signature under each
				Config:          callsConfig,
				ConfigVariables: vars("PT10S", rotating),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply:             []plancheck.PlanCheck{plancheck.ExpectResourceAction("scheduler_job.signed", plancheck.ResourceActionUpdate)},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("scheduler_job.signed", signing("secret_wo_version"), knownvalue.Int64Exact(2)),
					statecheck.ExpectKnownValue("scheduler_job.signed", signing("previous_secret_wo"), knownvalue.Null()),
					statecheck.ExpectKnownValue("scheduler_job.signed", signing("previous_secret_wo_version"), knownvalue.Int64Exact(1)),
				},
				Check: runAndExpect(t, []client.JobID{signed}, got, []string{"/signed s1 s2"}, keys...),
			},
			{ // the timeout and the retry cap changed outside Terraform: drift, planned back
				PreConfig: func() {
					c := testClient(t)
					def, err := c.JobGet(context.Background(), signed)
					if err != nil {
						t.Fatal(err)
					}
					a := def.Properties.Action
					a.Timeout, a.RetryPolicy.MaxRetryInterval = "PT20S", "PT5M"
					if _, err := c.JobPatch(context.Background(), signed, &wire.JobDefinition{Properties: &wire.JobProperties{Action: a}}); err != nil {
						t.Fatalf("change outside Terraform: %v", err)
					}
				},
				Config:          callsConfig,
				ConfigVariables: vars("PT10S", rotating),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction("scheduler_job.signed", plancheck.ResourceActionUpdate),
						plancheck.ExpectResourceAction("scheduler_job.failing", plancheck.ResourceActionNoop),
					},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				Check: checkJob(t, signed, func(p *wire.JobProperties) error {
					if a := p.Action; a.Timeout != "PT10S" || a.RetryPolicy.MaxRetryInterval != "PT2M" {
						return fmt.Errorf("timeout %q, max retry interval %q after apply", a.Timeout, a.RetryPolicy.MaxRetryInterval)
					}
					return nil
				}),
			},
			{ // the same duration written another way (the same value: the state keeps PT10S), and the
				// rotation ended: only s2 signs
				Config:          callsConfig,
				ConfigVariables: vars("PT0H0M10S", config.Variables{"secret_wo": config.StringVariable(s2), "secret_wo_version": config.IntegerVariable(2)}),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply:             []plancheck.PlanCheck{plancheck.ExpectResourceAction("scheduler_job.signed", plancheck.ResourceActionUpdate)},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("scheduler_job.signed", action("timeout"), knownvalue.StringExact("PT10S")),
					statecheck.ExpectKnownValue("scheduler_job.signed", signing("previous_secret_wo_version"), knownvalue.Null()),
				},
				Check: runAndExpect(t, []client.JobID{signed}, got, []string{"/signed s2"}, keys...),
			},
			{
				Config:            callsConfig,
				ConfigVariables:   vars("PT0H0M10S", ended),
				ResourceName:      "scheduler_job.signed",
				ImportState:       true,
				ImportStateId:     signed.String(),
				ImportStateVerify: true,
				// Write-only: an import cannot know which version of the secret was sent. An import
				// takes the API's spelling; status has counted the runs since the last refresh.
				ImportStateVerifyIgnore: []string{"action.request.signing.secret_wo_version", "action.retry_policy.retry_type", "status."},
			},
		},
	})
}

// The plan-time errors of how a job calls are shown on their lines, one per mistake (the CLI
// quotes the line, and so the bad secret; the provider's own words never do: TestCallsAtPlanTime).
func TestAccJob_callsErrorsOnTheirLines(t *testing.T) {
	cfg := linesHeader + `
resource "scheduler_job" "test" {
  job_collection_id = "/subscriptions/default/resourceGroups/default/providers/Microsoft.Scheduler/jobCollections/plan-only"
  name              = "calls"
  start_time        = "2040-01-01T00:00:00Z"
  action {
    type    = "http"
    timeout = "PT45M"
    request {
      uri    = "http://example.com/"
      method = "post"
      signing {
        secret_wo = "s3cr3t-without-prefix"
      }
    }
    retry_policy {
      retry_type         = "exponential"
      retry_interval     = "PT10M"
      max_retry_interval = "PT1M"
    }
    error_action {
      type = "storageQueue"
      queue_message {
        storage_account = "acct"
        queue_name      = "jobs"
        sas_token_wo    = "sv=1&sig=x"
        message         = "failed"
      }
      request { # a queue sends no request
        uri    = "http://example.com/error"
        method = "post"
        signing { # nor signs one
          secret_wo = "` + signingSecret(7, 32) + `"
        }
      }
    }
  }
}
`
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6Factories(),
		ErrorCheck: checkLines(cfg, []lineError{
			{`Invalid action.timeout: "PT45M" is 45m0s, outside PT1S..PT30M`, `timeout = "PT45M"`},
			{`Invalid action.request.signing.secret_wo: must start with "whsec_"`, `secret_wo = "s3cr3t-without-prefix"`},
			{`Invalid action.retry_policy.max_retry_interval: "PT1M" is 1m0s, below the retry_interval of 10m0s`, `max_retry_interval = "PT1M"`},
			{`Invalid action.error_action.request: is not allowed with a StorageQueue action (it takes queue_message)`, `request { # a queue sends no request`},
			{`Invalid action.error_action.request.signing: is allowed only on Http and Https actions (a StorageQueue action sends no HTTP request)`, `signing { # nor signs one`},
		}),
		Steps: []resource.TestStep{{Config: cfg, PlanOnly: true}},
	})
}
