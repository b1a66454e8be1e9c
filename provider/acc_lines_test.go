package provider

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
)

// linesHeader makes the test harness write a configuration as it is: without a terraform block
// it puts its own before it, which moves every line.
const linesHeader = `terraform {
  required_providers {
    scheduler = { source = "hashicorp/scheduler" }
  }
}
`

// lineError is a diagnostic the CLI must show on a line of the configuration: its summary, and
// the line holding text (the source line the CLI quotes).
type lineError struct {
	summary, line string
}

// checkLines returns an ErrorCheck that accepts the CLI's error output only when it holds
// exactly the diagnostics want, one per mistake, each rendered on the line of cfg that holds
// its line text ("on <file> line N" and the quoted source line "N: <text>").
func checkLines(cfg string, want []lineError) func(error) error {
	lines := strings.Split(cfg, "\n")
	lineOf := func(text string) int {
		n := 0
		for i, l := range lines {
			if strings.TrimSpace(l) == text {
				if n != 0 {
					panic(fmt.Sprintf("%q is on lines %d and %d of the configuration", text, n, i+1))
				}
				n = i + 1
			}
		}
		if n == 0 {
			panic(fmt.Sprintf("%q is on no line of the configuration", text))
		}
		return n
	}
	return func(err error) error {
		if err == nil {
			return fmt.Errorf("plan succeeded, want %d errors", len(want))
		}
		out := err.Error()
		if got := strings.Count(out, "Error: "); got != len(want) {
			return fmt.Errorf("%d diagnostics, want %d (one per mistake):\n%s", got, len(want), out)
		}
		// Each diagnostic: its summary, then where it is, then the quoted line.
		for _, w := range want {
			n := lineOf(w.line)
			re := regexp.MustCompile(messageRE("Error: "+w.summary).String() +
				fmt.Sprintf(`\s+with (?:data\.)?scheduler_\w+\.\w+,\s+on terraform_plugin_test\.tf line %d, in \w+ "scheduler_\w+" "\w+":\s+%d:\s+%s\n`,
					n, n, regexp.QuoteMeta(w.line)))
			if !re.MatchString(out) {
				return fmt.Errorf("no %q on line %d (%s) in:\n%s", w.summary, n, w.line, out)
			}
		}
		return nil
	}
}

// The plan-time errors of a schedule point at the offending line: OpenTofu and Terraform locate
// a diagnostic inside nested blocks (and an element of a list attribute), so recurrence,
// schedule and monthly_occurrences are blocks. One diagnostic per mistake.
func TestAccJob_planErrorsOnTheirLines(t *testing.T) {
	cfg := linesHeader + `
resource "scheduler_job" "test" {
  job_collection_id = "/subscriptions/default/resourceGroups/default/providers/Microsoft.Scheduler/jobCollections/plan-only"
  name              = "lines"
  start_time        = "2026-02-01T10:00:00Z"
  action {
    type = "http"
    request {
      uri    = "http://example.com/"
      method = "get"
    }
    retry_policy {
      retry_type  = "fixed"
      retry_count = 21
    }
  }
  recurrence {
    frequency = "month"
    schedule {
      month_days = [1, 2, 32]
      monthly_occurrences {
        day        = "friday"
        occurrence = -1
      }
      monthly_occurrences {
        day = "fryday"
      }
    }
  }
}
`
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6Factories(),
		ErrorCheck: checkLines(cfg, []lineError{
			{"Invalid action.retry_policy.retry_count: 21 is outside 0..20", "retry_count = 21"},
			{"Invalid recurrence.schedule.month_days[2]: 32 is outside -31..-1, 1..31", "month_days = [1, 2, 32]"},
			{`Invalid recurrence.schedule.monthly_occurrences[1].day: "fryday" is not a day of the week: one of Monday, Tuesday, Wednesday, Thursday, Friday, Saturday, Sunday`,
				`day = "fryday"`},
		}),
		Steps: []resource.TestStep{{Config: cfg, PlanOnly: true}},
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
