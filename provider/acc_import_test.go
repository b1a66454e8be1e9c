package provider

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/acctest"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/schedulerhq/terraform-provider-scheduler/internal/client"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"
)

// importForm is a job created through the API with its times in one of the forms the API
// accepts, and the configuration a user writes for it (the same spelling).
type importForm struct {
	name             string
	start, end, zone string
}

var importForms = []importForm{
	{"offset", "2030-12-01T07:30:00-05:00", "2031-01-01T00:00:00-05:00", ""},
	{"utc", "2030-12-01T12:30:00Z", "2031-01-01T05:00:00+00:00", ""},
	{"no-offset", "2030-12-01T07:30:00", "2031-01-01T00:00", ""},
	{"date-only", "2030-12-01", "2031-01-01", ""},
	{"fraction", "2030-12-01t07:30:00.250z", "2031-01-01T00:00:00.5+01:00", ""},
	{"time-zone", "2030-12-01T07:30:00", "2031-01-01", "America/New_York"},
}

func (f importForm) job() *wire.JobDefinition {
	return &wire.JobDefinition{Properties: &wire.JobProperties{
		StartTime: f.start,
		Action:    &wire.JobAction{Type: "Http", Request: &wire.HTTPRequest{URI: "http://127.0.0.1:9/" + f.name, Method: "GET"}},
		Recurrence: &wire.JobRecurrence{Frequency: "Week", EndTime: f.end, TimeZone: f.zone,
			Schedule: &wire.JobRecurrenceSchedule{WeekDays: []string{"Monday", "Friday"}, Hours: []int{7}, Minutes: []int{30}}},
	}}
}

func (f importForm) hcl() string {
	zone := ""
	if f.zone != "" {
		zone = fmt.Sprintf("\n    time_zone = %q", f.zone)
	}
	return fmt.Sprintf(`
resource "scheduler_job" %q {
  job_collection_id = scheduler_job_collection.test.id
  name              = %q
  start_time        = %q
  action {
    type = "Http"
    request {
      uri    = "http://127.0.0.1:9/%s"
      method = "GET"
    }
  }
  recurrence {
    frequency = "Week"
    end_time  = %q%s
    schedule {
      week_days = ["Monday", "Friday"]
      hours     = [7]
      minutes   = [30]
    }
  }
}
`, f.name, f.name, f.start, f.name, f.end, zone)
}

// The first plan after importing a job created through the API is empty, whatever form its
// times were written in (offset, Z, no offset, date only, fraction and lower case, time zone):
// the daemon answers the provider the times as they were written. Then the configuration of an
// imported job is generated (plan -generate-config-out with an import block, which crashed
// OpenTofu 1.10.6) and plans clean.
func TestAccJob_importPlansClean(t *testing.T) {
	coll := acctest.RandomWithPrefix("import")
	collID := client.CollectionID{Subscription: DefaultSubscriptionID, ResourceGroup: "default", Name: coll}
	collection := fmt.Sprintf("resource \"scheduler_job_collection\" \"test\" {\n  name = %q\n}\n", coll)
	var all strings.Builder
	all.WriteString(collection)
	for _, f := range importForms {
		all.WriteString(f.hcl())
	}
	steps := []resource.TestStep{{
		Config: collection,
		Check: func(*terraform.State) error {
			for _, f := range importForms {
				if _, err := testClient(t).JobPut(context.Background(), client.JobID{CollectionID: collID, Name: f.name}, f.job()); err != nil {
					return fmt.Errorf("create job %s through the API: %w", f.name, err)
				}
			}
			return nil
		},
	}}
	for _, f := range importForms {
		steps = append(steps, resource.TestStep{
			Config:             all.String(),
			ResourceName:       "scheduler_job." + f.name,
			ImportState:        true,
			ImportStateId:      client.JobID{CollectionID: collID, Name: f.name}.String(),
			ImportStatePersist: true,
		})
	}
	steps = append(steps,
		resource.TestStep{Config: all.String(), PlanOnly: true}, // fails on any change
		resource.TestStep{
			Config:          collection,
			ResourceName:    "scheduler_job.offset",
			ImportState:     true,
			ImportStateKind: resource.ImportBlockWithID,
			ImportStateId:   client.JobID{CollectionID: collID, Name: "offset"}.String(),
			GenerateConfig:  true, // plan -generate-config-out: the import must be a no-op
		},
	)
	resource.Test(t, resource.TestCase{ProtoV6ProviderFactories: protoV6Factories(), Steps: steps})
}
