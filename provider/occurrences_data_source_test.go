package provider

import (
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/schedulerhq/terraform-provider-scheduler/internal/clock"
)

func exactTimes(ts ...string) knownvalue.Check {
	checks := make([]knownvalue.Check, len(ts))
	for i, s := range ts {
		checks[i] = knownvalue.StringExact(s)
	}
	return knownvalue.ListExact(checks)
}

// The preview computes locally what the daemon will run, with the seeds' worked example
// (SPEC 4.3: now 2015-04-08 13:00, start 2015-04-07 14:00, every 2 days) and the last Friday
// of the month.
func TestAccOccurrences_dataSourceAndFunction(t *testing.T) {
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6Factories(),
		Steps: []resource.TestStep{{
			Config: `
terraform {
  required_providers {
    scheduler = { source = "hashicorp/scheduler" }
  }
}

data "scheduler_occurrences" "seed" {
  start_time = "2015-04-07T14:00:00Z"
  recurrence {
    frequency = "day"
    interval  = 2
  }
  now   = "2015-04-08T13:00:00Z"
  limit = 3
}

data "scheduler_occurrences" "last_friday" {
  start_time = "2026-01-01T17:00:00"
  recurrence {
    frequency = "month"
    time_zone = "Europe/Paris"
    schedule {
      monthly_occurrences {
        day        = "friday"
        occurrence = -1
      }
    }
  }
  now   = "2026-01-01T00:00:00Z"
  limit = 3
}

output "seed" {
  value = provider::scheduler::occurrences("2015-04-07T14:00:00Z", { frequency = "Day", interval = 2 }, 3, "2015-04-08T13:00:00Z")
}

output "weekdays" {
  value = provider::scheduler::occurrences("2026-01-05T09:00:00Z", {
    frequency = "week"
    schedule  = { week_days = ["monday", "wednesday"], hours = [9, 17], minutes = [0] }
  }, 5, "2026-01-05T10:00:00Z")
}

output "once" {
  value = provider::scheduler::occurrences("", {}, 5, "2026-01-05T10:00:00Z")
}
`,
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue("data.scheduler_occurrences.seed", tfjsonpath.New("times"),
					exactTimes("2015-04-09T14:00:00Z", "2015-04-11T14:00:00Z", "2015-04-13T14:00:00Z")),
				statecheck.ExpectKnownValue("data.scheduler_occurrences.last_friday", tfjsonpath.New("times"),
					exactTimes("2026-01-30T17:00:00+01:00", "2026-02-27T17:00:00+01:00", "2026-03-27T17:00:00+01:00")),
				statecheck.ExpectKnownValue("data.scheduler_occurrences.seed", tfjsonpath.New("recurrence_description"),
					knownvalue.StringExact("at 14:00 every 2 days, from 2015-04-07 14:00, UTC")),
				statecheck.ExpectKnownValue("data.scheduler_occurrences.last_friday", tfjsonpath.New("recurrence_description"),
					knownvalue.StringExact("at 17:00 on the last Friday of every month, from 2026-01-01 17:00, Europe/Paris")),
				statecheck.ExpectKnownOutputValue("seed", exactTimes("2015-04-09T14:00:00Z", "2015-04-11T14:00:00Z", "2015-04-13T14:00:00Z")),
				statecheck.ExpectKnownOutputValue("weekdays", exactTimes(
					"2026-01-05T17:00:00Z", "2026-01-07T09:00:00Z", "2026-01-07T17:00:00Z", "2026-01-12T09:00:00Z", "2026-01-12T17:00:00Z")),
				// No start time, no recurrence: once, immediately.
				statecheck.ExpectKnownOutputValue("once", exactTimes("2026-01-05T10:00:00Z")),
			},
		}},
	})
}

func TestAccOccurrences_invalidSchedule(t *testing.T) {
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6Factories(),
		Steps: []resource.TestStep{
			{
				Config: `
data "scheduler_occurrences" "bad" {
  start_time = "2026-01-01T00:00:00Z"
  recurrence {
    frequency = "month"
    schedule {
      month_days = [1, 32]
    }
  }
}
`,
				ExpectError: messageRE("recurrence.schedule.month_days[1]: 32 is outside -31..-1, 1..31"),
			},
			{
				Config: `
terraform {
  required_providers {
    scheduler = { source = "hashicorp/scheduler" }
  }
}

output "bad" {
  value = provider::scheduler::occurrences("2026-01-01T00:00:00Z", { frequency = "week", schedule = { month_days = [1] } }, 3)
}
`,
				ExpectError: messageRE("recurrence.schedule.month_days: allowed only with frequency Month, not Week"),
			},
		},
	})
}

// Without "now", the preview asks the provider's clock (injected here: a fake at a fixed time).
func TestAccOccurrences_injectedClock(t *testing.T) {
	fake := clock.NewFake(time.Date(2026, 1, 7, 11, 45, 30, 0, time.UTC)) // a Wednesday
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: map[string]func() (tfprotov6.ProviderServer, error){
			"scheduler": providerserver.NewProtocol6WithError(NewWithClock("test", fake)()),
		},
		Steps: []resource.TestStep{{
			Config: `
terraform {
  required_providers {
    scheduler = { source = "hashicorp/scheduler" }
  }
}

data "scheduler_occurrences" "sundays" {
  recurrence {
    frequency = "week"
    schedule {
      week_days = ["sunday"]
    }
  }
  limit = 3
}

output "sundays" {
  value = provider::scheduler::occurrences("", { frequency = "week", schedule = { week_days = ["sunday"] } }, 3)
}
`,
			ConfigStateChecks: []statecheck.StateCheck{
				// No start time: once at "now", then Sundays at now's time of day.
				statecheck.ExpectKnownValue("data.scheduler_occurrences.sundays", tfjsonpath.New("times"),
					exactTimes("2026-01-07T11:45:30Z", "2026-01-11T11:45:30Z", "2026-01-18T11:45:30Z")),
				statecheck.ExpectKnownOutputValue("sundays", exactTimes("2026-01-07T11:45:30Z", "2026-01-11T11:45:30Z", "2026-01-18T11:45:30Z")),
			},
		}},
	})
}

// The same for the scheduler_occurrences data source's recurrence.
func TestAccOccurrences_errorsOnTheirLines(t *testing.T) {
	cfg := linesHeader + `
data "scheduler_occurrences" "bad" {
  start_time = "2026-01-01T00:00:00Z"
  recurrence {
    frequency = "month"
    schedule {
      month_days = [1, 2, 32]
    }
  }
}
`
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6Factories(),
		ErrorCheck: checkLines(cfg, []lineError{
			{"Invalid recurrence.schedule.month_days[2]: 32 is outside -31..-1, 1..31", "month_days = [1, 2, 32]"},
		}),
		Steps: []resource.TestStep{{Config: cfg, PlanOnly: true}},
	})
}
