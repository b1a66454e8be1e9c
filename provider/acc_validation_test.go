package provider

import (
	"fmt"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
)

// planJob is a job whose plan is checked; the collection need not exist, since plan fails first.
// recurrence and retry are the recurrence and retry_policy blocks, or "".
func planJob(startTime, recurrence, retry string) string {
	return fmt.Sprintf(`
resource "scheduler_job" "test" {
  job_collection_id = "/subscriptions/default/resourceGroups/default/providers/Microsoft.Scheduler/jobCollections/plan-only"
  name              = "rule"
  start_time        = %q
  action {
    type = "http"
    request {
      uri    = "http://example.com/"
      method = "get"
    }
    %s
  }
  %s
}
`, startTime, retry, recurrence)
}

// Every rule of SPEC 4.1 fails plan, at the attribute, with the engine's message.
func TestAccJob_planRejectsEveryRule(t *testing.T) {
	const start = "2026-02-01T10:00:00Z"
	for _, tc := range []struct {
		rule, start, recurrence, retry string
		summary, detail                string
	}{
		{"interval Month above 18", start, `recurrence {
    frequency = "month"
    interval  = 19
  }`, "",
			"Invalid recurrence.interval: 19 is outside 1..18 for frequency Month", "recurrence.interval: 19 is outside 1..18 for frequency Month"},
		{"interval Week above 78", start, `recurrence {
    frequency = "week"
    interval  = 79
  }`, "",
			"Invalid recurrence.interval: 79 is outside 1..78 for frequency Week", "recurrence.interval: 79 is outside 1..78 for frequency Week"},
		{"interval Day above 548", start, `recurrence {
    frequency = "Day"
    interval  = 549
  }`, "",
			"Invalid recurrence.interval: 549 is outside 1..548 for frequency Day", "recurrence.interval: 549 is outside 1..548 for frequency Day"},
		{"interval Hour above 1000", start, `recurrence {
    frequency = "hour"
    interval  = 1001
  }`, "",
			"Invalid recurrence.interval: 1001 is outside 1..1000 for frequency Hour", "recurrence.interval: 1001 is outside 1..1000 for frequency Hour"},
		{"interval below 1", start, `recurrence {
    frequency = "minute"
    interval  = 0
  }`, "",
			"Invalid recurrence.interval: 0 is outside 1..1000 for frequency Minute", "recurrence.interval: 0 is outside 1..1000 for frequency Minute"},
		{"count below 1", start, `recurrence {
    frequency = "day"
    count     = 0
  }`, "",
			"Invalid recurrence.count: 0 is less than 1: count is the number of executions, at least 1", "recurrence.count: 0 is less than 1: count is the number of executions, at least 1"},
		{"endTime before startTime", start, `recurrence {
    frequency = "day"
    end_time  = "2026-01-01"
  }`, "",
			"Invalid recurrence.end_time: 2026-01-01T00:00:00Z is before start_time 2026-02-01T10:00:00Z", "recurrence.end_time: 2026-01-01T00:00:00Z is before start_time 2026-02-01T10:00:00Z"},
		{"minutes outside 0-59", start, `recurrence {
    frequency = "day"
    schedule {
      minutes = [0, 60]
    }
  }`, "",
			"Invalid recurrence.schedule.minutes[1]: 60 is outside 0..59", "recurrence.schedule.minutes[1]: 60 is outside 0..59"},
		{"hours outside 0-23", start, `recurrence {
    frequency = "day"
    schedule {
      hours = [24]
    }
  }`, "",
			"Invalid recurrence.schedule.hours[0]: 24 is outside 0..23", "recurrence.schedule.hours[0]: 24 is outside 0..23"},
		{"duplicate minutes", start, `recurrence {
    frequency = "day"
    schedule {
      minutes = [5, 5]
    }
  }`, "",
			"Invalid recurrence.schedule.minutes[1]: 5 is a duplicate of minutes[0]", "recurrence.schedule.minutes[1]: 5 is a duplicate of minutes[0]"},
		{"weekDays only with Week", start, `recurrence {
    frequency = "day"
    schedule {
      week_days = ["monday"]
    }
  }`, "",
			"Invalid recurrence.schedule.week_days: allowed only with frequency Week, not Day", "recurrence.schedule.week_days: allowed only with frequency Week, not Day"},
		{"at most 7 weekDays", start, `recurrence {
    frequency = "week"
    schedule {
      week_days = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday", "monday"]
    }
  }`, "",
			"Invalid recurrence.schedule.week_days: at most 7 days, got 8", "recurrence.schedule.week_days: at most 7 days, got 8"},
		{"monthDays above 31", start, `recurrence {
    frequency = "month"
    schedule {
      month_days = [1, 15, 32]
    }
  }`, "",
			"Invalid recurrence.schedule.month_days[2]: 32 is outside -31..-1, 1..31", "recurrence.schedule.month_days[2]: 32 is outside -31..-1, 1..31"},
		{"monthDays zero", start, `recurrence {
    frequency = "month"
    schedule {
      month_days = [0]
    }
  }`, "",
			"Invalid recurrence.schedule.month_days[0]: 0 is outside -31..-1, 1..31", "recurrence.schedule.month_days[0]: 0 is outside -31..-1, 1..31"},
		{"monthDays only with Month", start, `recurrence {
    frequency = "week"
    schedule {
      month_days = [1]
    }
  }`, "",
			"Invalid recurrence.schedule.month_days: allowed only with frequency Month, not Week", "recurrence.schedule.month_days: allowed only with frequency Month, not Week"},
		{"occurrence outside -5..5", start, `recurrence {
    frequency = "month"
    schedule {
      monthly_occurrences {
        day        = "friday"
        occurrence = 6
      }
    }
  }`, "",
			"Invalid recurrence.schedule.monthly_occurrences[0].occurrence: 6 is outside -5..-1, 1..5", "recurrence.schedule.monthly_occurrences[0].occurrence: 6 is outside -5..-1, 1..5"},
		{"monthlyOccurrences only with Month", start, `recurrence {
    frequency = "day"
    schedule {
      monthly_occurrences {
        day        = "friday"
        occurrence = -1
      }
    }
  }`, "",
			"Invalid recurrence.schedule.monthly_occurrences: allowed only with frequency Month, not Day", "recurrence.schedule.monthly_occurrences: allowed only with frequency Month, not Day"},
		{"a rule that can never fire", start, `recurrence {
    frequency = "month"
    interval  = 12
    schedule {
      month_days = [30]
    }
  }`, "",
			"Invalid recurrence.schedule: the rule can never fire: no month it reaches from 2026-02-01T10:00:00Z (every 12) has a matching day and time", "recurrence.schedule: the rule can never fire: no month it reaches from 2026-02-01T10:00:00Z (every 12) has a matching day and time"},
		{"unknown time zone", start, `recurrence {
    frequency = "day"
    time_zone = "Mars/Olympus"
  }`, "",
			`Invalid recurrence.time_zone: unknown time zone "Mars/Olympus": expected an IANA name such as Europe/Berlin`, `recurrence.time_zone: unknown time zone "Mars/Olympus": expected an IANA name such as Europe/Berlin`},
		{"startTime not ISO 8601", "yesterday", `recurrence {
    frequency = "day"
  }`, "",
			`Invalid start_time: "yesterday" is not an ISO 8601 date-time such as 2012-08-04T00:00:00Z or a date such as 2012-11-04`, `start_time: "yesterday" is not an ISO 8601 date-time such as 2012-08-04T00:00:00Z or a date such as 2012-11-04`},
		{"retryInterval below 15 s", start, "", `retry_policy {
    retry_type     = "fixed"
    retry_interval = "PT5S"
  }`,
			`Invalid action.retry_policy.retry_interval: "PT5S" is 5s, below the minimum of 15s`, `action.retry_policy.retry_interval: "PT5S" is 5s, below the minimum of 15s`},
		{"retryInterval above 18 months", start, "", `retry_policy {
    retry_type     = "fixed"
    retry_interval = "P19M"
  }`,
			`Invalid action.retry_policy.retry_interval: "P19M" is 13680h0m0s, above the maximum of 18 months (540 days)`, `action.retry_policy.retry_interval: "P19M" is 13680h0m0s, above the maximum of 18 months (540 days)`},
		{"retryCount above 20", start, "", `retry_policy {
    retry_type  = "fixed"
    retry_count = 21
  }`,
			"Invalid action.retry_policy.retry_count: 21 is outside 0..20", "action.retry_policy.retry_count: 21 is outside 0..20"},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			resource.Test(t, resource.TestCase{
				ProtoV6ProviderFactories: protoV6Factories(),
				Steps: []resource.TestStep{{
					Config:      planJob(tc.start, tc.recurrence, tc.retry),
					PlanOnly:    true,
					ExpectError: regexp.MustCompile(messageRE(tc.summary).String() + `(?s:.*)` + messageRE(tc.detail).String()),
				}},
			})
		})
	}
}

// An enum outside the allowed values is rejected by the schema, in any case.
func TestAccJob_planRejectsUnknownEnum(t *testing.T) {
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6Factories(),
		Steps: []resource.TestStep{{
			Config: planJob("2026-02-01T10:00:00Z", `recurrence {
    frequency = "fortnight"
  }`, ""),
			PlanOnly:    true,
			ExpectError: messageRE(`Attribute recurrence.frequency value must be one of: ["Minute" "Hour" "Day" "Week" "Month"], got: "fortnight"`),
		}},
	})
}

// A value known only after apply is not guessed: the rules that depend on it are skipped at
// plan time (the daemon still checks them at apply).
func TestAccJob_planSkipsUnknownValues(t *testing.T) {
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6Factories(),
		Steps: []resource.TestStep{{
			Config: `
resource "scheduler_job_collection" "test" {
  name = "unknown-values"
}

resource "scheduler_job" "test" {
  job_collection_id = scheduler_job_collection.test.id
  name              = "later"
  # Unknown until the collection exists; with end_time before it, the job would be invalid.
  start_time = scheduler_job_collection.test.id == "" ? "" : "2026-02-01T10:00:00Z"
  action {
    type = "http"
    request {
      uri    = "http://example.com/"
      method = "get"
    }
  }
  recurrence {
    frequency = "day"
    end_time  = "2026-01-01"
  }
}
`,
			PlanOnly:           true,
			ExpectNonEmptyPlan: true,
		}},
	})
}

// With an unknown start time, the rules that do not depend on it are still checked at plan time.
func TestAccJob_planChecksWhatIsKnown(t *testing.T) {
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6Factories(),
		Steps: []resource.TestStep{{
			Config: `
resource "scheduler_job_collection" "test" {
  name = "known-values"
}

resource "scheduler_job" "test" {
  job_collection_id = scheduler_job_collection.test.id
  name              = "later"
  start_time        = scheduler_job_collection.test.id == "" ? "" : "2026-02-01T10:00:00Z"
  action {
    type = "http"
    request {
      uri    = "http://example.com/"
      method = "get"
    }
  }
  recurrence {
    frequency = "month"
    schedule {
      month_days = [1, 32]
    }
  }
}
`,
			PlanOnly:    true,
			ExpectError: messageRE("recurrence.schedule.month_days[1]: 32 is outside -31..-1, 1..31"),
		}},
	})
}

// job_collection_id must be a collection's ARM id: plan says what to use.
func TestAccJob_planRejectsBadCollectionID(t *testing.T) {
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6Factories(),
		Steps: []resource.TestStep{{
			Config: `
resource "scheduler_job" "test" {
  job_collection_id = "ops"
  name              = "x"
  action {
    type = "http"
    request {
      uri    = "http://example.com/"
      method = "get"
    }
  }
}
`,
			PlanOnly:    true,
			ExpectError: messageRE(`Fix job_collection_id: use scheduler_job_collection.<name>.id`),
		}},
	})
}

// Exactly one authentication block: two is a plan error.
func TestAccJob_planRejectsTwoAuthentications(t *testing.T) {
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6Factories(),
		Steps: []resource.TestStep{{
			Config: `
resource "scheduler_job" "test" {
  job_collection_id = "/subscriptions/default/resourceGroups/default/providers/Microsoft.Scheduler/jobCollections/plan-only"
  name              = "x"
  action {
    type = "https"
    request {
      uri    = "https://example.com/"
      method = "get"
      authentication {
        basic {
          username = "u"
          password = "p"
        }
        active_directory_oauth {
          tenant    = "t"
          audience  = "a"
          client_id = "c"
          secret    = "s"
        }
      }
    }
  }
}
`,
			PlanOnly: true,
			ExpectError: regexp.MustCompile(messageRE(`Invalid action.request.authentication: set only one of basic, client_certificate, active_directory_oauth`).String() +
				`(?s:.*)` + messageRE(`action.request.authentication holds 2 blocks (basic, active_directory_oauth); it takes exactly one.`).String()),
		}},
	})
}
