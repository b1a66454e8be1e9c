package provider

import (
	"context"
	"fmt"
	"math/big"
	"os"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
	"github.com/hashicorp/terraform-plugin-testing/config"
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

// collectionConfigHCL is a collection with its sku, state, job count and fastest recurrence
// as variables (collectionVars).
const collectionConfigHCL = `
variable "name" { type = string }
variable "sku" { type = string }
variable "state" { type = string }
variable "max_jobs" { type = number }
variable "frequency" { type = string }

resource "scheduler_job_collection" "test" {
  name  = var.name
  sku   = var.sku
  state = var.state
  quota {
    max_job_count = var.max_jobs
    max_recurrence {
      frequency = var.frequency
      interval  = 1
    }
  }
  tags = { team = "ops" }
}
`

func collectionVars(name, sku, state string, maxJobs int, freq string) config.Variables {
	return config.Variables{
		"name": config.StringVariable(name), "sku": config.StringVariable(sku), "state": config.StringVariable(state),
		"max_jobs": config.IntegerVariable(maxJobs), "frequency": config.StringVariable(freq),
	}
}

func TestAccJobCollection_lifecycle(t *testing.T) {
	name := acctest.RandomWithPrefix("jc")
	id := client.CollectionID{Subscription: DefaultSubscriptionID, ResourceGroup: "default", Name: name}
	addr := "scheduler_job_collection.test"
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6Factories(),
		CheckDestroy:             checkCollectionDestroyed(t, id),
		Steps: []resource.TestStep{
			{ // create, with enums in lower case: kept as written, no diff afterwards
				Config:          collectionConfigHCL,
				ConfigVariables: collectionVars(name, "standard", "enabled", 10, "minute"),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("id"), knownvalue.StringExact(id.String())),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("sku"), knownvalue.StringExact("standard")),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("state"), knownvalue.StringExact("enabled")),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("resource_group"), knownvalue.StringExact("default")),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("location"), knownvalue.StringExact("local")),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("quota").AtMapKey("max_job_count"), knownvalue.Int64Exact(10)),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("quota").AtMapKey("max_recurrence").AtMapKey("frequency"), knownvalue.StringExact("minute")),
				},
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply:             []plancheck.PlanCheck{plancheck.ExpectResourceAction(addr, plancheck.ResourceActionCreate)},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				Check: checkCollection(t, id, "Standard", "Enabled", 10),
			},
			{ // update in place
				Config:          collectionConfigHCL,
				ConfigVariables: collectionVars(name, "P10Premium", "Disabled", 20, "Minute"),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply:             []plancheck.PlanCheck{plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate)},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				Check: checkCollection(t, id, "P10Premium", "Disabled", 20),
			},
			{ // import by ARM id
				Config:            collectionConfigHCL,
				ConfigVariables:   collectionVars(name, "P10Premium", "Disabled", 20, "Minute"),
				ResourceName:      addr,
				ImportState:       true,
				ImportStateId:     id.String(),
				ImportStateVerify: true,
				// "Minute" was the same value as the state's "minute" (no update): the import takes the API's.
				ImportStateVerifyIgnore: []string{"quota.max_recurrence.frequency"},
			},
			{ // deleted outside Terraform: dropped from state and planned for creation
				PreConfig: func() {
					if err := testClient(t).CollectionDelete(context.Background(), id); err != nil {
						t.Fatalf("delete outside Terraform: %v", err)
					}
				},
				Config:          collectionConfigHCL,
				ConfigVariables: collectionVars(name, "P10Premium", "Disabled", 20, "Minute"),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply:             []plancheck.PlanCheck{plancheck.ExpectResourceAction(addr, plancheck.ResourceActionCreate)},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				Check: checkCollection(t, id, "P10Premium", "Disabled", 20),
			},
		},
	})
}

// checkCollection reads the collection back from the daemon.
func checkCollection(t *testing.T, id client.CollectionID, sku, state string, maxJobs int) resource.TestCheckFunc {
	return func(*terraform.State) error {
		got, err := testClient(t).CollectionGet(context.Background(), id)
		if err != nil {
			return err
		}
		p := got.Properties
		if p == nil || p.Sku == nil || p.Sku.Name != sku || p.State != state || p.Quota == nil || p.Quota.MaxJobCount == nil || *p.Quota.MaxJobCount != maxJobs {
			return fmt.Errorf("daemon has %+v; want sku %s, state %s, maxJobCount %d", describeCollection(p), sku, state, maxJobs)
		}
		return nil
	}
}

func describeCollection(p *wire.JobCollectionProperties) string {
	if p == nil {
		return "no properties"
	}
	s := fmt.Sprintf("state %s", p.State)
	if p.Sku != nil {
		s += ", sku " + p.Sku.Name
	}
	if p.Quota != nil && p.Quota.MaxJobCount != nil {
		s += fmt.Sprintf(", maxJobCount %d", *p.Quota.MaxJobCount)
	}
	return s
}

func checkCollectionDestroyed(t *testing.T, id client.CollectionID) resource.TestCheckFunc {
	return func(*terraform.State) error {
		_, err := testClient(t).CollectionGet(context.Background(), id)
		if client.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("job collection %s still exists after destroy (err %v)", id, err)
	}
}

const forceDestroyConfig = `
variable "collection" { type = string }
variable "force_destroy" {
  type    = bool
  default = null
}

resource "scheduler_job_collection" "test" {
  name          = var.collection
  force_destroy = var.force_destroy
}

resource "scheduler_job" "managed" {
  job_collection_id = scheduler_job_collection.test.id
  name              = "managed"
  start_time        = "2040-01-01T00:00:00Z"
  action {
    type = "Http"
    request {
      uri    = "http://127.0.0.1:9/managed"
      method = "GET"
    }
  }
}
`

// Destroying a collection that holds a job the configuration does not manage fails, naming it,
// unless force_destroy is set; the jobs it manages are destroyed first either way.
func TestAccJobCollection_forceDestroy(t *testing.T) {
	coll := acctest.RandomWithPrefix("jc")
	id := client.CollectionID{Subscription: DefaultSubscriptionID, ResourceGroup: "default", Name: coll}
	other := client.JobID{CollectionID: id, Name: "created-through-the-api"}
	vars := config.Variables{"collection": config.StringVariable(coll)}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6Factories(),
		CheckDestroy:             checkCollectionDestroyed(t, id),
		Steps: []resource.TestStep{
			{
				Config:          forceDestroyConfig,
				ConfigVariables: vars,
				Check: func(*terraform.State) error {
					_, err := testClient(t).JobPut(context.Background(), other, &wire.JobDefinition{Properties: &wire.JobProperties{
						StartTime: "2040-01-01T00:00:00Z",
						Action:    &wire.JobAction{Type: "Http", Request: &wire.HTTPRequest{URI: "http://127.0.0.1:9/other", Method: "GET"}},
					}})
					return err
				},
			},
			{ // without force_destroy: the managed job goes, the other stops the destroy
				Config:          forceDestroyConfig,
				ConfigVariables: vars,
				Destroy:         true,
				ExpectError: regexp.MustCompile(messageRE("Job collection "+coll+" holds 1 job this configuration does not manage").String() +
					`(?s:.*)` + messageRE("Deleting the collection would delete created-through-the-api with it. Set force_destroy = true").String()),
			},
			{ // the collection and the other job are still there; the managed job is created again
				Config:          forceDestroyConfig,
				ConfigVariables: config.Variables{"collection": config.StringVariable(coll), "force_destroy": config.BoolVariable(true)},
				Check: func(*terraform.State) error {
					_, err := testClient(t).JobGet(context.Background(), other)
					return err
				},
			},
			// the end of the test destroys with force_destroy = true: CheckDestroy sees the collection gone
		},
	})
}

// A plan destroying a collection says how many jobs it holds, and what becomes of those the plan
// does not destroy (through the provider server, against the acceptance daemon).
func TestAccJobCollection_destroyPlanCountsJobs(t *testing.T) {
	if os.Getenv("TF_ACC") == "" {
		t.Skip("acceptance test: set TF_ACC=1 (make testacc), as resource.Test does")
	}
	ctx := context.Background()
	c := testClient(t)
	id := client.CollectionID{Subscription: DefaultSubscriptionID, ResourceGroup: "default", Name: acctest.RandomWithPrefix("jc")}
	if _, err := c.CollectionPut(ctx, id, &wire.JobCollectionDefinition{Properties: &wire.JobCollectionProperties{}}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.CollectionDelete(context.Background(), id) })
	for _, name := range []string{"a", "b"} {
		if _, err := c.JobPut(ctx, client.JobID{CollectionID: id, Name: name}, &wire.JobDefinition{Properties: &wire.JobProperties{
			StartTime: "2040-01-01T00:00:00Z",
			Action:    &wire.JobAction{Type: "Http", Request: &wire.HTTPRequest{URI: "http://127.0.0.1:9/", Method: "GET"}},
		}}); err != nil {
			t.Fatal(err)
		}
	}
	server, err := providerserver.NewProtocol6WithError(New("test")())()
	if err != nil {
		t.Fatal(err)
	}
	schemas, err := server.GetProviderSchema(ctx, &tfprotov6.GetProviderSchemaRequest{})
	if err != nil {
		t.Fatal(err)
	}
	providerConfig, err := tfprotov6.NewDynamicValue(schemas.Provider.ValueType(), objectOf(t, schemas.Provider.ValueType(), nil))
	if err != nil {
		t.Fatal(err)
	}
	if resp, err := server.ConfigureProvider(ctx, &tfprotov6.ConfigureProviderRequest{Config: &providerConfig}); err != nil || len(resp.Diagnostics) > 0 {
		t.Fatalf("configure: %v %v", err, resp.Diagnostics)
	}
	typ := schemas.ResourceSchemas["scheduler_job_collection"].ValueType()
	for _, tc := range []struct {
		force            bool
		summary, details string
	}{
		{false, "Job collection " + id.Name + " holds 2 jobs",
			"The jobs this plan destroys are deleted first; any other (a, b) stops the destroy. Set force_destroy = true to delete them with the collection."},
		{true, "Destroying job collection " + id.Name + " deletes the 2 jobs it holds",
			"force_destroy is set: the jobs this plan does not destroy are deleted with the collection (a, b)."},
	} {
		prior, err := tfprotov6.NewDynamicValue(typ, objectOf(t, typ, map[string]any{
			"id": tfStr(id.String()), "name": tfStr(id.Name), "resource_group": tfStr("default"),
			"force_destroy": tftypes.NewValue(tftypes.Bool, tc.force)}))
		if err != nil {
			t.Fatal(err)
		}
		null, err := tfprotov6.NewDynamicValue(typ, tftypes.NewValue(typ, nil))
		if err != nil {
			t.Fatal(err)
		}
		resp, err := server.PlanResourceChange(ctx, &tfprotov6.PlanResourceChangeRequest{
			TypeName: "scheduler_job_collection", PriorState: &prior, ProposedNewState: &null, Config: &null})
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.Diagnostics) != 1 || resp.Diagnostics[0].Severity != tfprotov6.DiagnosticSeverityWarning ||
			resp.Diagnostics[0].Summary != tc.summary || resp.Diagnostics[0].Detail != tc.details {
			for _, d := range resp.Diagnostics {
				t.Logf("%v: %s | %s", d.Severity, d.Summary, d.Detail)
			}
			t.Errorf("force_destroy %v: want one warning %q | %q", tc.force, tc.summary, tc.details)
		}
	}
}

// quota became a block (it was an object attribute): a state written when it was an attribute
// reads unchanged, with no schema upgrade (both are an object or null in the state).
func TestQuotaBlockReadsAttributeState(t *testing.T) {
	ctx := context.Background()
	server, err := providerserver.NewProtocol6WithError(New("test")())()
	if err != nil {
		t.Fatal(err)
	}
	schemas, err := server.GetProviderSchema(ctx, &tfprotov6.GetProviderSchemaRequest{})
	if err != nil {
		t.Fatal(err)
	}
	typ := schemas.ResourceSchemas["scheduler_job_collection"].ValueType()
	for _, tc := range []struct{ name, state string }{
		{"with a quota", `{"id":"/subscriptions/default/resourceGroups/default/providers/Microsoft.Scheduler/jobCollections/ops","name":"ops",` +
			`"resource_group":"default","location":"local","sku":"Standard","state":"Enabled","tags":null,` +
			`"quota":{"max_job_count":10,"max_job_occurrence":null,"max_recurrence":{"frequency":"Minute","interval":5}}}`},
		{"without", `{"id":"/subscriptions/default/resourceGroups/default/providers/Microsoft.Scheduler/jobCollections/ops","name":"ops",` +
			`"resource_group":"default","location":"local","sku":"Standard","state":"Enabled","tags":null,"quota":null}`},
	} {
		resp, err := server.UpgradeResourceState(ctx, &tfprotov6.UpgradeResourceStateRequest{
			TypeName: "scheduler_job_collection", Version: 0, RawState: &tfprotov6.RawState{JSON: []byte(tc.state)}})
		if err != nil || len(resp.Diagnostics) > 0 {
			t.Fatalf("%s: %v %v", tc.name, err, resp.Diagnostics)
		}
		v, err := resp.UpgradedState.Unmarshal(typ)
		if err != nil {
			t.Fatal(err)
		}
		var attrs map[string]tftypes.Value
		if err := v.As(&attrs); err != nil {
			t.Fatal(err)
		}
		quota := attrs["quota"]
		if tc.name == "without" {
			if !quota.IsNull() {
				t.Errorf("%s: quota %v, want null", tc.name, quota)
			}
			continue
		}
		var q map[string]tftypes.Value
		if err := quota.As(&q); err != nil {
			t.Fatal(err)
		}
		var mr map[string]tftypes.Value
		if err := q["max_recurrence"].As(&mr); err != nil {
			t.Fatal(err)
		}
		var freq string
		var count, interval big.Float
		if err := q["max_job_count"].As(&count); err != nil {
			t.Fatal(err)
		}
		if err := mr["frequency"].As(&freq); err != nil {
			t.Fatal(err)
		}
		if err := mr["interval"].As(&interval); err != nil {
			t.Fatal(err)
		}
		if c, _ := count.Int64(); c != 10 || freq != "Minute" || !q["max_job_occurrence"].IsNull() {
			t.Errorf("%s: quota %v", tc.name, quota)
		}
		if i, _ := interval.Int64(); i != 5 {
			t.Errorf("%s: interval %v, want 5", tc.name, i)
		}
	}
}

// quota and max_recurrence are blocks; a max_recurrence block without frequency is refused at
// plan time, naming it.
func TestAccJobCollection_quotaBlock(t *testing.T) {
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6Factories(),
		Steps: []resource.TestStep{{
			Config: `
resource "scheduler_job_collection" "test" {
  name = "quota-block"
  quota {
    max_recurrence {
      interval = 2
    }
  }
}
`,
			PlanOnly:    true,
			ExpectError: messageRE("Missing quota.max_recurrence.frequency"),
		}},
	})
}
