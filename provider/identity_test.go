package provider

import (
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/config"
	"github.com/hashicorp/terraform-plugin-testing/helper/acctest"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	"github.com/hashicorp/terraform-plugin-testing/tfversion"
)

const identityConfig = `
variable "collection" { type = string }
variable "resource_group" { type = string }

resource "scheduler_job_collection" "test" {
  name           = var.collection
  resource_group = var.resource_group
}

resource "scheduler_job" "test" {
  job_collection_id = scheduler_job_collection.test.id
  name              = "identified"
  start_time        = "2040-01-01T00:00:00Z"
  action {
    type = "Http"
    request {
      uri    = "http://127.0.0.1:1/identified"
      method = "GET"
    }
  }
  recurrence {
    frequency = "Day"
  }
}
`

// Both resources declare an identity (subscription, resource group, collection, job) and are
// imported by it and by their id, each import planning no change. Identity needs Terraform or
// OpenTofu 1.12 or later: with an older CLI the test is skipped, naming its version.
func TestAccIdentity_importByIdentityAndByID(t *testing.T) {
	coll := acctest.RandomWithPrefix("jc")
	vars := config.Variables{"collection": config.StringVariable(coll), "resource_group": config.StringVariable("identity-rg")}
	importStep := func(addr string, kind resource.ImportStateKind) resource.TestStep {
		return resource.TestStep{
			Config:          identityConfig,
			ConfigVariables: vars,
			ResourceName:    addr,
			ImportState:     true,
			ImportStateKind: kind,
			ImportPlanChecks: resource.ImportPlanChecks{
				PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction(addr, plancheck.ResourceActionNoop)},
			},
		}
	}
	resource.Test(t, resource.TestCase{
		TerraformVersionChecks:   []tfversion.TerraformVersionCheck{tfversion.SkipBelow(tfversion.Version1_12_0)},
		ProtoV6ProviderFactories: protoV6Factories(),
		Steps: []resource.TestStep{
			{
				Config:          identityConfig,
				ConfigVariables: vars,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectIdentity("scheduler_job_collection.test", map[string]knownvalue.Check{
						"subscription":   knownvalue.StringExact(DefaultSubscriptionID),
						"resource_group": knownvalue.StringExact("identity-rg"),
						"name":           knownvalue.StringExact(coll),
					}),
					statecheck.ExpectIdentity("scheduler_job.test", map[string]knownvalue.Check{
						"subscription":   knownvalue.StringExact(DefaultSubscriptionID),
						"resource_group": knownvalue.StringExact("identity-rg"),
						"job_collection": knownvalue.StringExact(coll),
						"name":           knownvalue.StringExact("identified"),
					}),
					statecheck.ExpectKnownValue("scheduler_job.test", tfjsonpath.New("id"),
						knownvalue.StringExact("/subscriptions/default/resourceGroups/identity-rg/providers/Microsoft.Scheduler/jobCollections/"+coll+"/jobs/identified")),
				},
			},
			importStep("scheduler_job_collection.test", resource.ImportBlockWithResourceIdentity),
			importStep("scheduler_job_collection.test", resource.ImportBlockWithID),
			importStep("scheduler_job.test", resource.ImportBlockWithResourceIdentity),
			importStep("scheduler_job.test", resource.ImportBlockWithID),
		},
	})
}
