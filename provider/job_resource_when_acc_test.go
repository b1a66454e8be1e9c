package provider

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-testing/config"
	"github.com/hashicorp/terraform-plugin-testing/helper/acctest"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	"github.com/hashicorp/terraform-plugin-testing/tfversion"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/client"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/clock"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/jobstate"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/recurrence"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"
)

// whenConfig is a daily job at 00:00 Berlin with every argument of when it runs set from a
// variable (null: not set), and a second job sharing its holiday list from a locals block.
const whenConfig = `
variable "collection" { type = string }
variable "state" {
  type    = string
  default = null
}
variable "overlap" {
  type    = string
  default = null
}
variable "misfire_policy" {
  type    = string
  default = null
}
variable "misfire_threshold" {
  type    = string
  default = null
}
variable "resume_at" {
  type    = string
  default = null
}
variable "note" {
  type    = string
  default = null
}
variable "jitter" {
  type    = string
  default = null
}
variable "holidays" {
  type    = list(string)
  default = null
}

locals {
  holidays = var.holidays
}

resource "scheduler_job_collection" "test" {
  name = var.collection
}

resource "scheduler_job" "test" {
  job_collection_id = scheduler_job_collection.test.id
  name              = "when"
  start_time        = "2040-12-23T00:00:00"
  state             = var.state
  overlap           = var.overlap
  resume_at         = var.resume_at
  note              = var.note
  action {
    type = "Http"
    request {
      uri    = "http://127.0.0.1:1/when"
      method = "POST"
    }
  }
  recurrence {
    frequency     = "Day"
    time_zone     = "Europe/Berlin"
    jitter        = var.jitter
    exclude_dates = local.holidays
  }
  dynamic "misfire" {
    for_each = var.misfire_policy == null && var.misfire_threshold == null ? [] : [1]
    content {
      policy    = var.misfire_policy
      threshold = var.misfire_threshold
    }
  }
}

resource "scheduler_job" "other" {
  job_collection_id = scheduler_job_collection.test.id
  name              = "other"
  start_time        = "2040-12-23T06:00:00"
  action {
    type = "Http"
    request {
      uri    = "http://127.0.0.1:1/other"
      method = "POST"
    }
  }
  recurrence {
    frequency     = "Day"
    time_zone     = "Europe/Berlin"
    exclude_dates = local.holidays
  }
}
`

const whenAddr = "scheduler_job.test"

// whenVars are the variables of whenConfig: the collection and the values given.
func whenVars(coll string, kv ...string) config.Variables {
	v := config.Variables{"collection": config.StringVariable(coll)}
	for i := 0; i+1 < len(kv); i += 2 {
		v[kv[i]] = config.StringVariable(kv[i+1])
	}
	return v
}

// withHolidays adds the holiday list to vars.
func withHolidays(vars config.Variables, dates ...string) config.Variables {
	out := maps.Clone(vars)
	list := make([]config.Variable, len(dates))
	for i, d := range dates {
		list[i] = config.StringVariable(d)
	}
	out["holidays"] = config.ListVariable(list...)
	return out
}

// patchJob changes a job outside Terraform.
func patchJob(t *testing.T, id client.JobID, p *wire.JobProperties) func() {
	return func() {
		if _, err := testClient(t).JobPatch(context.Background(), id, &wire.JobDefinition{Properties: p}); err != nil {
			t.Fatalf("change outside Terraform: %v", err)
		}
	}
}

// planned is the checks of a step that updates the job in place and then plans nothing, with the
// planned values given.
func planned(checks ...plancheck.PlanCheck) resource.ConfigPlanChecks {
	return resource.ConfigPlanChecks{
		PreApply:             append([]plancheck.PlanCheck{plancheck.ExpectResourceAction(whenAddr, plancheck.ResourceActionUpdate)}, checks...),
		PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
	}
}

// importNoOp imports the job into a configuration that writes it as the API holds it: the import
// plans no change.
func importNoOp(id client.JobID, vars config.Variables) resource.TestStep {
	return resource.TestStep{
		Config: whenConfig, ConfigVariables: vars,
		ResourceName: whenAddr, ImportState: true, ImportStateKind: resource.ImportBlockWithID, ImportStateId: id.String(),
	}
}

// importVerify imports the job by id: the state read equals the state applied.
func importVerify(id client.JobID, vars config.Variables) resource.TestStep {
	return resource.TestStep{
		Config: whenConfig, ConfigVariables: vars,
		ResourceName: whenAddr, ImportState: true, ImportStateId: id.String(), ImportStateVerify: true,
	}
}

func whenJobID(coll, name string) client.JobID {
	return client.JobID{CollectionID: client.CollectionID{Subscription: DefaultSubscriptionID, ResourceGroup: "default", Name: coll}, Name: name}
}

// overlap and misfire: sent in Azure's spelling, kept as written, changed or added outside
// Terraform is drift planned back, removed is sent absent, and an import plans no change.
func TestAccJob_overlapAndMisfire(t *testing.T) {
	coll := acctest.RandomWithPrefix("when")
	id := whenJobID(coll, "when")
	set := whenVars(coll, "overlap", "skip", "misfire_policy", "runall", "misfire_threshold", "PT2M")
	canonical := whenVars(coll, "overlap", "Skip", "misfire_policy", "RunAll", "misfire_threshold", "PT2M")
	none := whenVars(coll)
	misfire := tfjsonpath.New("misfire")
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6Factories(),
		CheckDestroy:             checkJobDestroyed(t, id),
		Steps: []resource.TestStep{
			{
				Config: whenConfig, ConfigVariables: set,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(whenAddr, tfjsonpath.New("overlap"), knownvalue.StringExact("skip")),
					statecheck.ExpectKnownValue(whenAddr, misfire.AtMapKey("policy"), knownvalue.StringExact("runall")),
					statecheck.ExpectKnownValue(whenAddr, misfire.AtMapKey("threshold"), knownvalue.StringExact("PT2M")),
					statecheck.ExpectKnownValue("scheduler_job.other", tfjsonpath.New("overlap"), knownvalue.Null()),
					statecheck.ExpectKnownValue("scheduler_job.other", misfire, knownvalue.Null()),
				},
				ConfigPlanChecks: resource.ConfigPlanChecks{PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
				Check: resource.ComposeTestCheckFunc(
					checkJob(t, id, func(p *wire.JobProperties) error {
						if p.Overlap != "Skip" || p.Misfire == nil || *p.Misfire != (wire.JobMisfire{Policy: "RunAll", Threshold: "PT2M"}) {
							return fmt.Errorf("overlap %q misfire %+v", p.Overlap, p.Misfire)
						}
						return nil
					}),
					checkJob(t, whenJobID(coll, "other"), func(p *wire.JobProperties) error {
						if p.Overlap != "" || p.Misfire != nil {
							return fmt.Errorf("a job without them: overlap %q misfire %+v", p.Overlap, p.Misfire)
						}
						return nil
					}),
				),
			},
			{ // changed outside Terraform: planned back
				PreConfig: patchJob(t, id, &wire.JobProperties{Overlap: "BufferOne", Misfire: &wire.JobMisfire{Policy: "Skip", Threshold: "PT5M"}}),
				Config:    whenConfig, ConfigVariables: set,
				ConfigPlanChecks: planned(
					plancheck.ExpectKnownValue(whenAddr, tfjsonpath.New("overlap"), knownvalue.StringExact("skip")),
					plancheck.ExpectKnownValue(whenAddr, misfire.AtMapKey("policy"), knownvalue.StringExact("runall")),
					plancheck.ExpectKnownValue(whenAddr, misfire.AtMapKey("threshold"), knownvalue.StringExact("PT2M")),
				),
				Check: checkJob(t, id, func(p *wire.JobProperties) error {
					if p.Overlap != "Skip" || p.Misfire == nil || *p.Misfire != (wire.JobMisfire{Policy: "RunAll", Threshold: "PT2M"}) {
						return fmt.Errorf("overlap %q misfire %+v", p.Overlap, p.Misfire)
					}
					return nil
				}),
			},
			{ // removed from the configuration: the job is sent without them
				Config: whenConfig, ConfigVariables: none,
				ConfigPlanChecks: planned(
					plancheck.ExpectKnownValue(whenAddr, tfjsonpath.New("overlap"), knownvalue.Null()),
					plancheck.ExpectKnownValue(whenAddr, misfire, knownvalue.Null()),
				),
				Check: checkJob(t, id, func(p *wire.JobProperties) error {
					if p.Overlap != "" || p.Misfire != nil {
						return fmt.Errorf("overlap %q misfire %+v", p.Overlap, p.Misfire)
					}
					return nil
				}),
			},
			{ // overlap added outside Terraform: drift, planned away
				PreConfig: patchJob(t, id, &wire.JobProperties{Overlap: "BufferOne"}),
				Config:    whenConfig, ConfigVariables: none,
				ConfigPlanChecks: planned(plancheck.ExpectKnownValue(whenAddr, tfjsonpath.New("overlap"), knownvalue.Null())),
				Check: checkJob(t, id, func(p *wire.JobProperties) error {
					if p.Overlap != "" || p.Misfire != nil {
						return fmt.Errorf("overlap %q misfire %+v", p.Overlap, p.Misfire)
					}
					return nil
				}),
			},
			{ // misfire added outside Terraform: drift, planned away
				PreConfig: patchJob(t, id, &wire.JobProperties{Misfire: &wire.JobMisfire{Policy: "Skip"}}),
				Config:    whenConfig, ConfigVariables: none,
				ConfigPlanChecks: planned(plancheck.ExpectKnownValue(whenAddr, misfire, knownvalue.Null())),
				Check: checkJob(t, id, func(p *wire.JobProperties) error {
					if p.Overlap != "" || p.Misfire != nil {
						return fmt.Errorf("overlap %q misfire %+v", p.Overlap, p.Misfire)
					}
					return nil
				}),
			},
			{
				Config: whenConfig, ConfigVariables: canonical,
				ConfigPlanChecks: planned(),
			},
			importNoOp(id, canonical),
			importVerify(id, canonical),
		},
	})
}

// jitter and exclude_dates: one holiday list in a locals block shared by two jobs; the words say
// them; the previews (data source with and without job_id, function) honour them as the daemon
// does; drift is planned back, dates in another order are no change, and an import plans none.
func TestAccJob_jitterAndExcludeDates(t *testing.T) {
	coll := acctest.RandomWithPrefix("when")
	id, other := whenJobID(coll, "when"), whenJobID(coll, "other")
	holidays := []string{"2040-12-25", "2040-12-26", "2041-01-01"}
	vars := withHolidays(whenVars(coll, "jitter", "PT5M"), holidays...)
	rec := tfjsonpath.New("recurrence")
	previews := whenConfig + `
data "scheduler_occurrences" "job" {
  job_id     = scheduler_job.test.id
  start_time = scheduler_job.test.start_time
  now        = "2040-12-01T00:00:00Z"
  limit      = 4
  recurrence {
    frequency     = "Day"
    time_zone     = "Europe/Berlin"
    jitter        = var.jitter
    exclude_dates = local.holidays
  }
}

data "scheduler_occurrences" "window" {
  start_time = scheduler_job.test.start_time
  now        = "2040-12-01T00:00:00Z"
  limit      = 4
  recurrence {
    frequency     = "Day"
    time_zone     = "Europe/Berlin"
    jitter        = var.jitter
    exclude_dates = local.holidays
  }
}

output "function" {
  value = provider::scheduler::occurrences("2040-12-23T00:00:00", {
    frequency = "Day", time_zone = "Europe/Berlin", jitter = var.jitter, exclude_dates = local.holidays
  }, 4, "2040-12-01T00:00:00Z")
}
`
	scheduled := []string{"2040-12-23T00:00:00+01:00", "2040-12-24T00:00:00+01:00", "2040-12-27T00:00:00+01:00", "2040-12-28T00:00:00+01:00"}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6Factories(),
		CheckDestroy:             checkJobDestroyed(t, id),
		Steps: []resource.TestStep{
			{
				Config: previews, ConfigVariables: vars,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(whenAddr, rec.AtMapKey("jitter"), knownvalue.StringExact("PT5M")),
					statecheck.ExpectKnownValue(whenAddr, rec.AtMapKey("exclude_dates"), stringsExact(holidays...)),
					statecheck.ExpectKnownValue("scheduler_job.other", rec.AtMapKey("exclude_dates"), stringsExact(holidays...)),
					statecheck.ExpectKnownValue(whenAddr, tfjsonpath.New("recurrence_description"),
						knownvalue.StringExact("at 00:00 every day, up to 5 minutes later, except 3 dates, from 2040-12-23 00:00, Europe/Berlin")),
					statecheck.ExpectKnownValue("data.scheduler_occurrences.window", tfjsonpath.New("times"), stringsExact(scheduled...)),
					statecheck.ExpectKnownValue("data.scheduler_occurrences.job", tfjsonpath.New("times"), stringsExact(jitteredStarts(t, id, scheduled)...)),
					statecheck.ExpectKnownOutputValue("function", stringsExact(scheduled...)),
				},
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectKnownValue(whenAddr, tfjsonpath.New("recurrence_description"),
						knownvalue.StringExact("at 00:00 every day, up to 5 minutes later, except 3 dates, from 2040-12-23 00:00, Europe/Berlin"))},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				Check: resource.ComposeTestCheckFunc(
					checkJob(t, id, func(p *wire.JobProperties) error {
						if p.Recurrence.Jitter != "PT5M" || strings.Join(p.Recurrence.ExcludeDates, " ") != strings.Join(holidays, " ") {
							return fmt.Errorf("jitter %q excludeDates %v", p.Recurrence.Jitter, p.Recurrence.ExcludeDates)
						}
						return nil
					}),
					checkJob(t, other, func(p *wire.JobProperties) error {
						if p.Recurrence.Jitter != "" || strings.Join(p.Recurrence.ExcludeDates, " ") != strings.Join(holidays, " ") {
							return fmt.Errorf("other: jitter %q excludeDates %v", p.Recurrence.Jitter, p.Recurrence.ExcludeDates)
						}
						return nil
					}),
					// The daemon's first run skips nothing it should not: 12-23 is not excluded.
					checkNextExecution(t, other, "2040-12-23T05:00:00Z"),
				),
			},
			{ // changed outside Terraform: planned back
				PreConfig: patchJob(t, id, &wire.JobProperties{Recurrence: &wire.JobRecurrence{
					Frequency: "Day", TimeZone: "Europe/Berlin", Jitter: "PT1M", ExcludeDates: []string{"2040-12-25"}}}),
				Config: whenConfig, ConfigVariables: vars,
				ConfigPlanChecks: planned(
					plancheck.ExpectKnownValue(whenAddr, rec.AtMapKey("jitter"), knownvalue.StringExact("PT5M")),
					plancheck.ExpectKnownValue(whenAddr, rec.AtMapKey("exclude_dates"), stringsExact(holidays...)),
				),
				Check: checkJob(t, id, func(p *wire.JobProperties) error {
					if p.Recurrence.Jitter != "PT5M" || strings.Join(p.Recurrence.ExcludeDates, " ") != strings.Join(holidays, " ") {
						return fmt.Errorf("jitter %q excludeDates %v", p.Recurrence.Jitter, p.Recurrence.ExcludeDates)
					}
					return nil
				}),
			},
			{ // the same dates in another order outside Terraform: no change
				PreConfig: patchJob(t, id, &wire.JobProperties{Recurrence: &wire.JobRecurrence{
					Frequency: "Day", TimeZone: "Europe/Berlin", Jitter: "PT300S", ExcludeDates: []string{"2041-01-01", "2040-12-25", "2040-12-26"}}}),
				Config: whenConfig, ConfigVariables: vars,
				PlanOnly: true,
			},
			{ // removed: sent without them
				Config: whenConfig, ConfigVariables: whenVars(coll),
				ConfigPlanChecks: planned(
					plancheck.ExpectKnownValue(whenAddr, rec.AtMapKey("jitter"), knownvalue.Null()),
					plancheck.ExpectKnownValue(whenAddr, rec.AtMapKey("exclude_dates"), knownvalue.Null()),
				),
				Check: checkJob(t, id, func(p *wire.JobProperties) error {
					if p.Recurrence.Jitter != "" || p.Recurrence.ExcludeDates != nil {
						return fmt.Errorf("jitter %q excludeDates %v", p.Recurrence.Jitter, p.Recurrence.ExcludeDates)
					}
					return nil
				}),
			},
			{ // added outside Terraform: drift, planned away
				PreConfig: patchJob(t, id, &wire.JobProperties{Recurrence: &wire.JobRecurrence{
					Frequency: "Day", TimeZone: "Europe/Berlin", Jitter: "PT1M", ExcludeDates: []string{"2040-12-25"}}}),
				Config: whenConfig, ConfigVariables: whenVars(coll),
				ConfigPlanChecks: planned(
					plancheck.ExpectKnownValue(whenAddr, rec.AtMapKey("jitter"), knownvalue.Null()),
					plancheck.ExpectKnownValue(whenAddr, rec.AtMapKey("exclude_dates"), knownvalue.Null()),
				),
			},
			{Config: whenConfig, ConfigVariables: vars, ConfigPlanChecks: planned()},
			importNoOp(id, vars),
			importVerify(id, vars),
		},
	})
}

// resume_at and note: a pause sent and read back; the API's refusals are plan-time errors on
// the attribute; drift of the note is planned back; an import plans no change; once resume_at
// has passed and the job is Enabled again (as the daemon resumes it), the plan is empty, and a
// later change sends the job Enabled.
func TestAccJob_pauseWithResumeAt(t *testing.T) {
	coll := acctest.RandomWithPrefix("when")
	id := whenJobID(coll, "when")
	now := time.Now().UTC().Truncate(time.Second)
	fake := clock.NewFake(now)
	factories := map[string]func() (tfprotov6.ProviderServer, error){
		"scheduler": providerserver.NewProtocol6WithError(NewWithClock("test", fake)()),
	}
	resumeAt := now.Add(time.Hour).Format(time.RFC3339)
	paused := whenVars(coll, "state", "Disabled", "resume_at", resumeAt, "note", "database migration")
	with := func(kv ...string) config.Variables {
		v := maps.Clone(paused)
		maps.Copy(v, whenVars(coll, kv...))
		return v
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: factories,
		CheckDestroy:             checkJobDestroyed(t, id),
		Steps: []resource.TestStep{
			{
				Config: whenConfig, ConfigVariables: paused,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(whenAddr, tfjsonpath.New("resume_at"), knownvalue.StringExact(resumeAt)),
					statecheck.ExpectKnownValue(whenAddr, tfjsonpath.New("note"), knownvalue.StringExact("database migration")),
					statecheck.ExpectKnownValue(whenAddr, tfjsonpath.New("status").AtMapKey("state"), knownvalue.StringExact("Disabled")),
					statecheck.ExpectKnownValue("scheduler_job.other", tfjsonpath.New("resume_at"), knownvalue.Null()),
					statecheck.ExpectKnownValue("scheduler_job.other", tfjsonpath.New("note"), knownvalue.Null()),
				},
				ConfigPlanChecks: resource.ConfigPlanChecks{PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
				Check: checkJob(t, id, func(p *wire.JobProperties) error {
					if p.State != "Disabled" || !sameInstant(time.UTC)(p.ResumeAt, resumeAt) || p.Note != "database migration" {
						return fmt.Errorf("state %s resumeAt %q note %q", p.State, p.ResumeAt, p.Note)
					}
					return nil
				}),
			},
			{
				Config: whenConfig, ConfigVariables: with("state", "Enabled"),
				ExpectError: messageRE("resume_at: is allowed only on a Disabled job (this one is written Enabled)"),
			},
			{
				Config: whenConfig, ConfigVariables: with("resume_at", now.Add(-time.Hour).Format(time.RFC3339)),
				ExpectError: messageRE("resume_at: " + now.Add(-time.Hour).Format(time.RFC3339) + " is not in the future (now is " + now.Format(time.RFC3339) + ")"),
			},
			{
				Config: whenConfig, ConfigVariables: with("note", strings.Repeat("n", 513)),
				ExpectError: messageRE("note: is 513 characters long; at most 512 are allowed"),
			},
			{
				Config: whenConfig, ConfigVariables: with("overlap", "sometimes", "misfire_policy", "later"),
				ExpectError: messageRE(`overlap: "sometimes" is not one of Allow, Skip, BufferOne`),
			},
			{ // the note changed outside Terraform: planned back
				PreConfig: patchJob(t, id, &wire.JobProperties{Note: "something else"}),
				Config:    whenConfig, ConfigVariables: paused,
				ConfigPlanChecks: planned(plancheck.ExpectKnownValue(whenAddr, tfjsonpath.New("note"), knownvalue.StringExact("database migration"))),
				Check: checkJob(t, id, func(p *wire.JobProperties) error {
					if p.Note != "database migration" || !sameInstant(time.UTC)(p.ResumeAt, resumeAt) {
						return fmt.Errorf("note %q resumeAt %q", p.Note, p.ResumeAt)
					}
					return nil
				}),
			},
			importNoOp(id, paused),
			importVerify(id, paused),
			{ // enabled outside Terraform before resume_at: drift, paused again
				PreConfig: patchJob(t, id, &wire.JobProperties{State: "Enabled"}),
				Config:    whenConfig, ConfigVariables: paused,
				ConfigPlanChecks: planned(plancheck.ExpectKnownValue(whenAddr, tfjsonpath.New("resume_at"), knownvalue.StringExact(resumeAt))),
				Check: checkJob(t, id, func(p *wire.JobProperties) error {
					if p.State != "Disabled" || !sameInstant(time.UTC)(p.ResumeAt, resumeAt) {
						return fmt.Errorf("state %s resumeAt %q", p.State, p.ResumeAt)
					}
					return nil
				}),
			},
			{ // resume_at passed and the job Enabled again, as the daemon resumes it: no change
				PreConfig: func() {
					patchJob(t, id, &wire.JobProperties{State: "Enabled"})()
					fake.Set(now.Add(2 * time.Hour))
				},
				Config: whenConfig, ConfigVariables: paused,
				PlanOnly: true,
			},
			{ // a later change is sent with the job Enabled (the pause is over)
				Config: whenConfig, ConfigVariables: with("note", "migrated"),
				ConfigPlanChecks: planned(),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(whenAddr, tfjsonpath.New("state"), knownvalue.StringExact("Disabled")),
					statecheck.ExpectKnownValue(whenAddr, tfjsonpath.New("status").AtMapKey("state"), knownvalue.StringExact("Enabled")),
				},
				Check: checkJob(t, id, func(p *wire.JobProperties) error {
					if p.State != "Enabled" || p.ResumeAt != "" || p.Note != "migrated" {
						return fmt.Errorf("state %s resumeAt %q note %q", p.State, p.ResumeAt, p.Note)
					}
					return nil
				}),
			},
			{ // a new pause
				Config: whenConfig, ConfigVariables: with("resume_at", now.Add(3*time.Hour).Format(time.RFC3339)),
				ConfigPlanChecks: planned(),
				Check: checkJob(t, id, func(p *wire.JobProperties) error {
					if p.State != "Disabled" || !sameInstant(time.UTC)(p.ResumeAt, now.Add(3*time.Hour).Format(time.RFC3339)) {
						return fmt.Errorf("state %s resumeAt %q", p.State, p.ResumeAt)
					}
					return nil
				}),
			},
		},
	})
}

// stringsExact checks a list of strings.
func stringsExact(ss ...string) knownvalue.Check {
	checks := make([]knownvalue.Check, len(ss))
	for i, s := range ss {
		checks[i] = knownvalue.StringExact(s)
	}
	return knownvalue.ListExact(checks)
}

// jitteredStarts are the starts the daemon's dispatcher gives the job's occurrences scheduled at
// the RFC 3339 times given (its store key's canonical id, jobstate.StartAt).
func jitteredStarts(t *testing.T, id client.JobID, scheduled []string) []string {
	t.Helper()
	rule, err := recurrence.Compile("2040-12-23T00:00:00", &wire.JobRecurrence{Frequency: "Day", TimeZone: "Europe/Berlin", Jitter: "PT5M",
		ExcludeDates: []string{"2040-12-25", "2040-12-26", "2041-01-01"}}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	key := store.JobKey{CollectionKey: store.CollectionKey{Subscription: id.Subscription, ResourceGroup: id.ResourceGroup, Name: id.CollectionID.Name}, Name: id.Name}.CanonicalID()
	out := make([]string, len(scheduled))
	for i, s := range scheduled {
		at, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = jobstate.StartAt(rule, key, at).In(rule.Location()).Format(time.RFC3339Nano)
	}
	return out
}

// checkNextExecution checks the job's next execution as the daemon reports it.
func checkNextExecution(t *testing.T, id client.JobID, want string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		j, err := testClient(t).JobGet(context.Background(), id)
		if err != nil {
			return err
		}
		if s := j.Properties.Status; s == nil || s.NextExecutionTime != want {
			return fmt.Errorf("next execution %+v, want %s", s, want)
		}
		return nil
	}
}

// The plan-time errors of when a job runs point at the offending line, one per mistake, with the
// daemon's message (the allowed names in it): an element of exclude_dates at its own range,
// misfire's attributes inside their block.
func TestAccJob_whenErrorsOnTheirLines(t *testing.T) {
	cfg := linesHeader + `
resource "scheduler_job" "test" {
  job_collection_id = "/subscriptions/default/resourceGroups/default/providers/Microsoft.Scheduler/jobCollections/plan-only"
  name              = "when-lines"
  start_time        = "2040-01-01T00:00:00Z"
  overlap           = "sometimes"
  action {
    type = "Http"
    request {
      uri    = "http://example.com/"
      method = "GET"
    }
  }
  recurrence {
    frequency     = "Hour"
    jitter        = "PT13H"
    exclude_dates = ["2040-12-25", "2040-13-01", "2040-12-24"]
  }
  misfire {
    policy    = "later"
    threshold = "P8D"
  }
}
`
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6Factories(),
		ErrorCheck: checkLines(cfg, []lineError{
			{`Invalid overlap: "sometimes" is not one of Allow, Skip, BufferOne`, `overlap           = "sometimes"`},
			{"Invalid recurrence.jitter: PT13H is more than PT12H", `jitter        = "PT13H"`},
			{`Invalid recurrence.exclude_dates[1]: "2040-13-01" is not a date YYYY-MM-DD such as 2026-12-25`, `exclude_dates = ["2040-12-25", "2040-13-01", "2040-12-24"]`},
			{`Invalid misfire.policy: "later" is not one of RunOnce, Skip, RunAll`, `policy    = "later"`},
			{"Invalid misfire.threshold: P8D is outside PT1S..P7D", `threshold = "P8D"`},
		}),
		Steps: []resource.TestStep{{Config: cfg, PlanOnly: true}},
	})
}

// resume_at refused by the API's rule is a plan error on its line: on a job written Enabled, and
// a new one in the past.
func TestAccJob_resumeAtErrorsOnTheirLines(t *testing.T) {
	cfg := func(state, at string) string {
		return linesHeader + fmt.Sprintf(`
resource "scheduler_job" "test" {
  job_collection_id = "/subscriptions/default/resourceGroups/default/providers/Microsoft.Scheduler/jobCollections/plan-only"
  name              = "resume-lines"
  start_time        = "2040-01-01T00:00:00Z"
  state             = %q
  resume_at         = %q
  action {
    type = "Http"
    request {
      uri    = "http://example.com/"
      method = "GET"
    }
  }
}
`, state, at)
	}
	enabled, past := cfg("Enabled", "2040-01-01T00:00:00Z"), cfg("Disabled", "2020-01-01T00:00:00Z")
	for name, tc := range map[string]struct {
		cfg  string
		want lineError
	}{
		"enabled": {enabled, lineError{"Invalid resume_at: is allowed only on a Disabled job (this one is written Enabled)", `resume_at         = "2040-01-01T00:00:00Z"`}},
		"past":    {past, lineError{"Invalid resume_at: 2020-01-01T00:00:00Z is not in the future (now is 2030-01-01T00:00:00Z)", `resume_at         = "2020-01-01T00:00:00Z"`}},
	} {
		t.Run(name, func(t *testing.T) {
			resource.Test(t, resource.TestCase{
				ProtoV6ProviderFactories: map[string]func() (tfprotov6.ProviderServer, error){
					"scheduler": providerserver.NewProtocol6WithError(NewWithClock("test", clock.NewFake(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)))()),
				},
				ErrorCheck: checkLines(tc.cfg, []lineError{tc.want}),
				Steps:      []resource.TestStep{{Config: tc.cfg, PlanOnly: true}},
			})
		})
	}
}

// A job with every argument of when it runs imports by identity (Terraform or OpenTofu 1.12 and
// later; skipped with an older CLI) and by id, each planning no change.
func TestAccJob_whenImportByIdentity(t *testing.T) {
	coll := acctest.RandomWithPrefix("when")
	vars := withHolidays(whenVars(coll, "state", "Disabled", "resume_at", "2040-01-01T00:00:00Z", "note", "audit freeze",
		"overlap", "BufferOne", "misfire_policy", "Skip", "misfire_threshold", "PT90S", "jitter", "PT30M"), "2040-12-25", "2040-12-26")
	importStep := func(kind resource.ImportStateKind) resource.TestStep {
		return resource.TestStep{
			Config: whenConfig, ConfigVariables: vars,
			ResourceName: whenAddr, ImportState: true, ImportStateKind: kind,
			ImportPlanChecks: resource.ImportPlanChecks{
				PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction(whenAddr, plancheck.ResourceActionNoop)},
			},
		}
	}
	resource.Test(t, resource.TestCase{
		TerraformVersionChecks:   []tfversion.TerraformVersionCheck{tfversion.SkipBelow(tfversion.Version1_12_0)},
		ProtoV6ProviderFactories: protoV6Factories(),
		CheckDestroy:             checkJobDestroyed(t, whenJobID(coll, "when")),
		Steps: []resource.TestStep{
			{
				Config: whenConfig, ConfigVariables: vars,
				ConfigPlanChecks: resource.ConfigPlanChecks{PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
			},
			importStep(resource.ImportBlockWithResourceIdentity),
			importStep(resource.ImportBlockWithID),
		},
	})
}

// The provider and the API cannot disagree: for each bad input, the plan-time errors are the
// daemon's 400 problems, one for one, at the same fields (in HCL's names) with the same words;
// the job is not stored. Needs the acceptance tests' daemon (TF_ACC).
func TestAccJob_whenPlanAgreesWithTheAPI(t *testing.T) {
	if os.Getenv("TF_ACC") == "" {
		t.Skip("needs the acceptance tests' daemon (TF_ACC=1)")
	}
	ctx := context.Background()
	c := testClient(t)
	coll := client.CollectionID{Subscription: DefaultSubscriptionID, ResourceGroup: "default", Name: acctest.RandomWithPrefix("agree")}
	if _, err := c.CollectionPut(ctx, coll, &wire.JobCollectionDefinition{Location: "local",
		Properties: &wire.JobCollectionProperties{Sku: &wire.Sku{Name: "Standard"}}}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.CollectionDelete(context.Background(), coll) })
	many := make([]string, 1001)
	for i := range many {
		many[i] = time.Date(2041, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, i).Format(time.DateOnly)
	}
	for i, tc := range []struct {
		name   string
		modify func(m *jobModel)
	}{
		{"overlap", func(m *jobModel) { m.Overlap = types.StringValue("sometimes") }},
		{"misfire", func(m *jobModel) {
			m.Misfire = &misfireModel{Policy: types.StringValue("later"), Threshold: types.StringValue("P8D")}
		}},
		{"threshold", func(m *jobModel) {
			m.Misfire = &misfireModel{Policy: types.StringNull(), Threshold: types.StringValue("soon")}
		}},
		{"jitter of a period", func(m *jobModel) {
			m.Recurrence.Frequency, m.Recurrence.Jitter = enumOf("Hour"), types.StringValue("PT1H")
		}},
		{"jitter over 12 hours", func(m *jobModel) { m.Recurrence.Jitter = types.StringValue("PT12H1S") }},
		{"dates", func(m *jobModel) { m.Recurrence.ExcludeDates = strs("2040-12-25", "2040-02-30", "2040-12-25") }},
		{"1,001 dates", func(m *jobModel) { m.Recurrence.ExcludeDates = strs(many...) }},
		{"note", func(m *jobModel) { m.Note = types.StringValue(strings.Repeat("é", 513)) }},
		{"resume_at", func(m *jobModel) { m.ResumeAt = types.StringValue("next monday") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := whenJob()
			m.Recurrence.Count = types.Int64Null()
			tc.modify(m)
			var diags diag.Diagnostics
			validateJob(&diags, m, clock.Real{})
			var plan []string
			for _, d := range diags.Errors() {
				plan = append(plan, d.Detail())
			}
			p, _ := m.toWire()
			id := client.JobID{CollectionID: coll, Name: fmt.Sprintf("bad-%d", i)}
			_, err := c.JobPut(ctx, id, &wire.JobDefinition{Properties: p})
			var apiErr *client.Error
			if !errors.As(err, &apiErr) || apiErr.StatusCode != 400 {
				t.Fatalf("PUT: %v, want a 400", err)
			}
			var api []string
			for _, line := range strings.Split(apiErr.Message, "\n") {
				jsonPath, msg, _ := strings.Cut(strings.TrimPrefix(line, "properties."), ": ")
				api = append(api, jobAttrPath(jsonPath, p).String()+": "+hclNames(msg))
			}
			slices.Sort(plan)
			slices.Sort(api)
			if len(plan) == 0 || !slices.Equal(plan, api) {
				t.Errorf("plan:\n  %s\nAPI:\n  %s", strings.Join(plan, "\n  "), strings.Join(api, "\n  "))
			}
			if _, err := c.JobGet(ctx, id); !client.IsNotFound(err) {
				t.Errorf("the refused job was stored (%v)", err)
			}
		})
	}
}
