package provider

import (
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
)

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
