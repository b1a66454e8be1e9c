package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/acctest"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/schedulerhq/terraform-provider-scheduler/internal/client"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"
)

// importCase is a job created through the API (its action and recurrence as JSON) and the
// configuration a user writes for it (the body of its action and recurrence blocks): the same
// job, with enum values in another case, durations written another way, or defaults the API
// holds explicitly left out.
type importCase struct {
	name                      string
	action, recurrence, extra string // JSON of the API's job: its action, recurrence and other properties
	hclAction, hclOthers      string // HCL: the action block's body, and what follows it
}

var importCases = []importCase{
	{name: "enum-case",
		action:     `{"type":"Http","request":{"uri":"http://127.0.0.1:9/enum-case","method":"POST"}}`,
		recurrence: `{"frequency":"Week","schedule":{"weekDays":["Monday","Friday"],"hours":[7],"minutes":[30]}}`,
		hclAction: `type = "http"
    request {
      uri    = "http://127.0.0.1:9/enum-case"
      method = "post"
    }`,
		hclOthers: `state = "enabled"
  recurrence {
    frequency = "WEEK"
    schedule {
      week_days = ["friday", "MONDAY"]
      hours     = [7]
      minutes   = [30]
    }
  }`},
	{name: "occurrence-day-case",
		action:     `{"type":"Http","request":{"uri":"http://127.0.0.1:9/occurrence-day-case","method":"GET"}}`,
		recurrence: `{"frequency":"Month","schedule":{"monthlyOccurrences":[{"day":"Friday","occurrence":-1}],"hours":[7],"minutes":[30]}}`,
		hclAction: `type = "Http"
    request {
      uri    = "http://127.0.0.1:9/occurrence-day-case"
      method = "GET"
    }`,
		hclOthers: `recurrence {
    frequency = "Month"
    schedule {
      hours   = [7]
      minutes = [30]
      monthly_occurrences {
        day        = "friday"
        occurrence = -1
      }
    }
  }`},
	{name: "header-case",
		action: `{"type":"Http","request":{"uri":"http://127.0.0.1:9/header-case","method":"POST","headers":{"Content-Type":"application/json"}}}`,
		hclAction: `type = "Http"
    request {
      uri     = "http://127.0.0.1:9/header-case"
      method  = "POST"
      headers = { "content-type" = "application/json" }
    }`},
	{name: "duration-forms",
		action: `{"type":"Http","timeout":"PT90S","request":{"uri":"http://127.0.0.1:9/duration-forms","method":"GET"},` +
			`"retryPolicy":{"retryType":"Exponential","retryInterval":"PT1M","retryCount":3,"maxRetryInterval":"PT10M"}}`,
		hclAction: `type    = "Http"
    timeout = "PT1M30S"
    request {
      uri    = "http://127.0.0.1:9/duration-forms"
      method = "GET"
    }
    retry_policy {
      retry_type         = "exponential"
      retry_interval     = "00:01:00"
      retry_count        = 3
      max_retry_interval = "PT600S"
    }`},
	// The retry policy's fields equal to their defaults, left out of a block that is not the
	// default as a whole (a whole default policy is imported as no block: importForms'
	// retry-default, TestAccJob_importDefaultRetryWrittenExplicitly).
	{name: "default-retry-fields",
		action: `{"type":"Http","request":{"uri":"http://127.0.0.1:9/default-retry-fields","method":"GET"},` +
			`"retryPolicy":{"retryType":"Fixed","retryInterval":"PT30S","retryCount":5}}`,
		hclAction: `type = "Http"
    request {
      uri    = "http://127.0.0.1:9/default-retry-fields"
      method = "GET"
    }
    retry_policy {
      retry_count = 5
    }`},
	{name: "default-timeouts",
		action: `{"type":"Http","timeout":"PT60S","request":{"uri":"http://127.0.0.1:9/default-timeouts","method":"GET"},` +
			`"errorAction":{"type":"Http","timeout":"PT1M","request":{"uri":"http://127.0.0.1:9/error","method":"GET"}}}`,
		hclAction: `type = "Http"
    request {
      uri    = "http://127.0.0.1:9/default-timeouts"
      method = "GET"
    }
    error_action {
      type = "Http"
      request {
        uri    = "http://127.0.0.1:9/error"
        method = "GET"
      }
    }`},
	{name: "default-max-retry-interval",
		action: `{"type":"Http","request":{"uri":"http://127.0.0.1:9/default-max-retry-interval","method":"GET"},` +
			`"retryPolicy":{"retryType":"Exponential","retryInterval":"PT30S","retryCount":5,"maxRetryInterval":"PT1H"}}`,
		hclAction: `type = "Http"
    request {
      uri    = "http://127.0.0.1:9/default-max-retry-interval"
      method = "GET"
    }
    retry_policy {
      retry_type     = "Exponential"
      retry_interval = "PT30S"
      retry_count    = 5
    }`},
	{name: "when-extensions",
		action:     `{"type":"Http","request":{"uri":"http://127.0.0.1:9/when-extensions","method":"GET"}}`,
		recurrence: `{"frequency":"Hour","jitter":"PT1M"}`,
		extra:      `"overlap":"Skip","misfire":{"policy":"RunAll","threshold":"PT5M"}`,
		hclAction: `type = "Http"
    request {
      uri    = "http://127.0.0.1:9/when-extensions"
      method = "GET"
    }`,
		hclOthers: `overlap = "skip"
  misfire {
    policy    = "runall"
    threshold = "PT300S"
  }
  recurrence {
    frequency = "Hour"
    jitter    = "PT60S"
  }`},
	{name: "default-state-and-interval",
		action:     `{"type":"Http","request":{"uri":"http://127.0.0.1:9/default-state-and-interval","method":"GET"}}`,
		recurrence: `{"frequency":"Day","interval":1}`,
		hclAction: `type = "Http"
    request {
      uri    = "http://127.0.0.1:9/default-state-and-interval"
      method = "GET"
    }`,
		hclOthers: `recurrence {
    frequency = "Day"
  }`},
}

func (c importCase) job(t *testing.T) *wire.JobDefinition {
	t.Helper()
	js := `{"properties":{"startTime":"2030-12-01T07:30:00Z","state":"Enabled","action":` + c.action
	if c.recurrence != "" {
		js += `,"recurrence":` + c.recurrence
	}
	if c.extra != "" {
		js += "," + c.extra
	}
	var def wire.JobDefinition
	if err := json.Unmarshal([]byte(js+`}}`), &def); err != nil {
		t.Fatalf("%s: %v", c.name, err)
	}
	return &def
}

func (c importCase) hcl() string {
	return fmt.Sprintf(`
resource "scheduler_job" %q {
  job_collection_id = scheduler_job_collection.test.id
  name              = %q
  start_time        = "2030-12-01T07:30:00Z"
  action {
    %s
  }
  %s
}
`, c.name, c.name, c.hclAction, c.hclOthers)
}

// A job created through the API imports with an empty plan when the configuration writes its
// enum values in another case (type, method, frequency, week_days, a monthly occurrence's day,
// state, retry_type), its header names in another case, its durations in another form (timeout,
// retry_interval, max_retry_interval), or leaves out what the API holds equal to its default
// (retry_type Fixed, retry_interval 30 s, retry_count 4, timeout 60 s, max_retry_interval 1 h,
// state Enabled, interval 1), and so for the extensions of when a job runs (overlap, misfire's
// policy and threshold, jitter). A step per case: the import, then a plan that must be empty.
func TestAccJob_importPlansCleanForSpellingsAndDefaults(t *testing.T) {
	coll := acctest.RandomWithPrefix("import")
	collID := client.CollectionID{Subscription: DefaultSubscriptionID, ResourceGroup: "default", Name: coll}
	// force_destroy: it holds jobs made through the API that are imported one by one
	collection := fmt.Sprintf("resource \"scheduler_job_collection\" \"test\" {\n  name          = %q\n  force_destroy = true\n}\n", coll)
	steps := []resource.TestStep{{
		Config: collection,
		Check: func(*terraform.State) error {
			for _, c := range importCases {
				if _, err := testClient(t).JobPut(context.Background(), client.JobID{CollectionID: collID, Name: c.name}, c.job(t)); err != nil {
					return fmt.Errorf("create job %s through the API: %w", c.name, err)
				}
			}
			return nil
		},
	}}
	var cfg strings.Builder
	cfg.WriteString(collection)
	for _, c := range importCases {
		cfg.WriteString(c.hcl())
		steps = append(steps,
			resource.TestStep{
				Config:             cfg.String(),
				ResourceName:       "scheduler_job." + c.name,
				ImportState:        true,
				ImportStateId:      client.JobID{CollectionID: collID, Name: c.name}.String(),
				ImportStatePersist: true,
			},
			resource.TestStep{Config: cfg.String(), PlanOnly: true}, // fails on any change
		)
	}
	resource.Test(t, resource.TestCase{ProtoV6ProviderFactories: protoV6Factories(), Steps: steps})
}
