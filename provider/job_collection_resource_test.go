package provider

import (
	"context"
	"fmt"
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

func collectionConfig(name, sku, state string, maxJobs int, freq string) string {
	return fmt.Sprintf(`
resource "scheduler_job_collection" "test" {
  name  = %q
  sku   = %q
  state = %q
  quota = {
    max_job_count = %d
    max_recurrence = {
      frequency = %q
      interval  = 1
    }
  }
  tags = { team = "ops" }
}
`, name, sku, state, maxJobs, freq)
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
				Config: collectionConfig(name, "standard", "enabled", 10, "minute"),
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
				Config: collectionConfig(name, "P10Premium", "Disabled", 20, "Minute"),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply:             []plancheck.PlanCheck{plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate)},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				Check: checkCollection(t, id, "P10Premium", "Disabled", 20),
			},
			{ // import by ARM id
				ResourceName:      addr,
				ImportState:       true,
				ImportStateId:     id.String(),
				ImportStateVerify: true,
			},
			{ // deleted outside Terraform: dropped from state and planned for creation
				PreConfig: func() {
					if err := testClient(t).CollectionDelete(context.Background(), id); err != nil {
						t.Fatalf("delete outside Terraform: %v", err)
					}
				},
				Config: collectionConfig(name, "P10Premium", "Disabled", 20, "Minute"),
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
