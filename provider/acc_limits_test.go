package provider

import (
	"fmt"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/acctest"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
)

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
  quota = { max_job_count = %d }
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
				ExpectError: regexp.MustCompile(`Resolve the conflict reported while creating job(?s:.*)409\s+Conflict:\s+the\s+collection's\s+sku\s+\(Free\)\s+does\s+not\s+allow\s+outbound(?s:.*)use\s+a\s+Standard\s+or\s+Premium\s+collection`),
			}},
		})
	})
}
