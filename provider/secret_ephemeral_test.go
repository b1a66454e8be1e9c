package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
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

// ephemeralPasswordConfig is the flow of examples/ephemeral/random-password.tf with
// standinrandom_password in place of random_password (see standinRandom for why a stand-in),
// and the receiver's URL over plain HTTP.
const ephemeralPasswordConfig = `
variable "collection" { type = string }
variable "url" { type = string }
variable "password_version" { type = number }

ephemeral "standinrandom_password" "report" {
  length  = 32
  special = false
}

resource "scheduler_job_collection" "reports" {
  name = var.collection
}

resource "scheduler_job" "weekly_report" {
  job_collection_id = scheduler_job_collection.reports.id
  name              = "weekly-report"
  start_time        = "2040-12-03T06:00:00Z"

  action {
    type = "Http"
    request {
      uri    = "${var.url}/weekly"
      method = "POST"
      authentication {
        basic {
          username            = "scheduler"
          password_wo         = ephemeral.standinrandom_password.report.result
          password_wo_version = var.password_version
        }
      }
    }
  }

  recurrence {
    frequency = "Week"
    schedule {
      week_days = ["Monday"]
    }
  }
}
`

// A password from an ephemeral resource fed into password_wo reaches the receiver exactly as the
// ephemeral resource generated it at apply, and no password it ever generated is in a plan or
// the state. Unchanged password_wo_version: the next plan is empty although every open generates
// a new password; a new version sends the password generated at that apply.
func TestAccJob_ephemeralPasswordToWriteOnly(t *testing.T) {
	url, got := credentialsReceiver(t)
	coll := acctest.RandomWithPrefix("jc")
	id := client.JobID{CollectionID: client.CollectionID{Subscription: DefaultSubscriptionID, ResourceGroup: "default", Name: coll}, Name: "weekly-report"}
	generated := &generatedPasswords{}
	factories := map[string]func() (tfprotov6.ProviderServer, error){
		"scheduler":     providerserver.NewProtocol6WithError(New("test")()),
		"standinrandom": providerserver.NewProtocol6WithError(&standinRandom{generated: generated}),
	}
	vars := func(version int) config.Variables {
		return config.Variables{"collection": config.StringVariable(coll), "url": config.StringVariable(url), "password_version": config.IntegerVariable(version)}
	}
	basic := tfjsonpath.New("action").AtMapKey("request").AtMapKey("authentication").AtMapKey("basic")
	noPassword := noGeneratedPassword{generated}
	stateChecks := func(version int64) []statecheck.StateCheck {
		return []statecheck.StateCheck{
			noPassword,
			statecheck.ExpectKnownValue("scheduler_job.weekly_report", basic.AtMapKey("password_wo"), knownvalue.Null()),
			statecheck.ExpectKnownValue("scheduler_job.weekly_report", basic.AtMapKey("password"), knownvalue.Null()),
			statecheck.ExpectKnownValue("scheduler_job.weekly_report", basic.AtMapKey("password_wo_version"), knownvalue.Int64Exact(version)),
		}
	}
	var sent []string // the password the receiver got after each step
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: factories,
		CheckDestroy:             checkJobDestroyed(t, id),
		Steps: []resource.TestStep{
			{
				Config:          ephemeralPasswordConfig,
				ConfigVariables: vars(1),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply:             []plancheck.PlanCheck{plancheck.ExpectResourceAction("scheduler_job.weekly_report", plancheck.ResourceActionCreate), noPassword},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan(), noPassword},
				},
				ConfigStateChecks: stateChecks(1),
				Check:             receivesLastGenerated(t, id, got, generated, &sent),
			},
			{ // a new version: the password generated at this apply is sent
				Config:          ephemeralPasswordConfig,
				ConfigVariables: vars(2),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply:             []plancheck.PlanCheck{plancheck.ExpectResourceAction("scheduler_job.weekly_report", plancheck.ResourceActionUpdate), noPassword},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan(), noPassword},
				},
				ConfigStateChecks: stateChecks(2),
				Check: resource.ComposeTestCheckFunc(
					receivesLastGenerated(t, id, got, generated, &sent),
					func(*terraform.State) error {
						if len(sent) != 2 || sent[0] == sent[1] {
							return fmt.Errorf("the receiver got %d passwords, the same one twice: a new password_wo_version must send the new password", len(sent))
						}
						return nil
					},
				),
			},
		},
	})
}

// receivesLastGenerated runs the job now and checks that the receiver gets the password
// standinrandom_password generated last (at the apply just done), appending it to sent.
func receivesLastGenerated(t *testing.T, id client.JobID, got chan string, generated *generatedPasswords, sent *[]string) resource.TestCheckFunc {
	return func(s *terraform.State) error {
		all := generated.all()
		if len(all) == 0 {
			return fmt.Errorf("standinrandom_password was never opened")
		}
		want := "/weekly scheduler:" + all[len(all)-1]
		if err := runAndExpect(t, []client.JobID{id}, got, []string{want})(s); err != nil {
			// never quote the generated password in a failure
			return fmt.Errorf("the receiver did not get the password generated at apply (%d generated so far): %s",
				len(all), strings.ReplaceAll(err.Error(), all[len(all)-1], "<generated>"))
		}
		*sent = append(*sent, all[len(all)-1])
		return nil
	}
}

// noGeneratedPassword fails when a plan or the state holds any password standinrandom_password
// has generated so far.
type noGeneratedPassword struct {
	generated *generatedPasswords
}

func (c noGeneratedPassword) find(what string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("%s as JSON: %w", what, err)
	}
	all := c.generated.all()
	if len(all) == 0 {
		return fmt.Errorf("%s: standinrandom_password was never opened", what)
	}
	for i, p := range all {
		if strings.Contains(string(b), p) {
			return fmt.Errorf("the %s holds generated password #%d of %d", what, i+1, len(all))
		}
	}
	return nil
}

func (c noGeneratedPassword) CheckPlan(_ context.Context, req plancheck.CheckPlanRequest, resp *plancheck.CheckPlanResponse) {
	resp.Error = c.find("plan", req.Plan)
}

func (c noGeneratedPassword) CheckState(_ context.Context, req statecheck.CheckStateRequest, resp *statecheck.CheckStateResponse) {
	resp.Error = c.find("state", req.State)
}
