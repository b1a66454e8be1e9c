package provider

import (
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/acctest"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
)

// describedJob is a job whose schedule is given as HCL (start_time line included).
func describedJob(collection, schedule string) string {
	return fmt.Sprintf(`
resource "scheduler_job_collection" "test" {
  name = %q
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
`, collection, schedule)
}

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
	unknownStart := `start_time = scheduler_job_collection.test.id == "" ? "" : "2030-01-01T00:00:00Z"
  recurrence {
    frequency = "minute"
    interval  = 15
    count     = 5
  }`
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6Factories(),
		Steps: []resource.TestStep{
			{
				Config: describedJob(name, weekdays),
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
				Config: describedJob(name, lastFriday),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate),
						plancheck.ExpectKnownValue(addr, words, knownvalue.StringExact("at 05:15 on the last Friday of every month, from 2030-01-01 00:00")),
					},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
			},
			{
				Config: describedJob(name+"-2", unknownStart),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectUnknownValue(addr, words)},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(addr, words, knownvalue.StringExact("every 15 minutes, 5 times, from 2030-01-01 00:00")),
				},
			},
		},
	})
}
