package provider

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/acctest"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/schedulerhq/terraform-provider-scheduler/internal/client"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"
)

// jobConfig is a collection and a weekly job written the way users write: enums in lower case,
// times without offset in the job's time zone, a date alone as end time, a time span as retry
// interval, a Basic password (write-only in the API).
type jobConfig struct {
	Collection, Name              string
	Type, URI, Method, HeaderName string
	Password                      string
	StartTime, EndTime            string
	Frequency, RetryInterval      string
	Hours                         string
	WeekDays                      string
	State, RetryType, ErrorType   string
}

func (c jobConfig) String() string {
	return fmt.Sprintf(`
resource "scheduler_job_collection" "test" {
  name = %q
}

resource "scheduler_job" "test" {
  job_collection_id = scheduler_job_collection.test.id
  name              = %q
  start_time        = %q
  state             = %q
  action {
    type = %q
    request {
      uri     = %q
      method  = %q
      body    = "{\"olderThanDays\":30}"
      headers = { %q = "application/json" }
      authentication {
        basic {
          username = "ops"
          password = %q
        }
      }
    }
    retry_policy {
      retry_type     = %q
      retry_interval = %q
      retry_count    = 3
    }
    error_action {
      type = %q
      request {
        uri    = "http://example.com/notify"
        method = "POST"
      }
    }
  }
  recurrence {
    frequency = %q
    end_time  = %q
    time_zone = "Europe/Berlin"
    schedule {
      week_days = %s
      hours     = %s
      minutes   = [30]
    }
  }
}
`, c.Collection, c.Name, c.StartTime, c.State, c.Type, c.URI, c.Method, c.HeaderName, c.Password, c.RetryType, c.RetryInterval, c.ErrorType, c.Frequency, c.EndTime, c.WeekDays, c.Hours)
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
		WeekDays: `["monday", "FRIDAY"]`, Hours: "[22, 9]",
		State: "enabled", RetryType: "fixed", ErrorType: "http",
	}
	updated := cfg
	updated.Hours, updated.Method = "[10]", "put"
	newSecret := updated
	newSecret.Password = "s3cret-2"
	// The same job in Azure's spelling, as the daemon answers: what an import reads.
	canonical := newSecret
	canonical.Type, canonical.Method, canonical.HeaderName = "Https", "PUT", "Content-Type"
	canonical.StartTime, canonical.EndTime = "2030-01-01T09:00:00+01:00", "2031-01-01T00:00:00+01:00"
	canonical.Frequency, canonical.WeekDays, canonical.RetryInterval = "Week", `["Monday", "Friday"]`, "PT1M"
	canonical.State, canonical.RetryType, canonical.ErrorType = "Enabled", "Fixed", "Http"

	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6Factories(),
		CheckDestroy:             checkJobDestroyed(t, id),
		Steps: []resource.TestStep{
			{
				Config: cfg.String(),
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
				Config: updated.String(),
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
				Config: newSecret.String(),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply:             []plancheck.PlanCheck{plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate)},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("action").AtMapKey("request").AtMapKey("authentication").AtMapKey("basic").AtMapKey("password"),
						knownvalue.StringExact("s3cret-2")),
				},
			},
			{ // the same job in Azure's spelling: an update, and then import reads exactly it
				Config: canonical.String(),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
			},
			{
				ResourceName:      addr,
				ImportState:       true,
				ImportStateId:     id.String(),
				ImportStateVerify: true,
				// Write-only in the API: an import cannot know them.
				ImportStateVerifyIgnore: []string{"action.request.authentication.basic.password"},
			},
			{ // disabled outside Terraform: planned back to the configured state
				PreConfig: func() {
					_, err := testClient(t).JobPatch(context.Background(), id, &wire.JobDefinition{Properties: &wire.JobProperties{State: "Disabled"}})
					if err != nil {
						t.Fatalf("disable outside Terraform: %v", err)
					}
				},
				Config: canonical.String(),
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
				Config: canonical.String(),
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
				Config: canonical.String(),
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
  name = %q
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
