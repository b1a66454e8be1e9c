package provider

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/action"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/brokertest"
)

// TestAccJob_messageActions applies a storage-queue job and a Service Bus topic job (with a
// Service Bus queue error action) with tofu against a daemon whose endpoints are a real Azurite
// and the machine's RabbitMQ, and reads back what they delivered. The secrets stay as configured
// in state and the plan after apply is empty.
func TestAccJob_messageActions(t *testing.T) {
	if os.Getenv("TF_ACC") == "" {
		t.Skip("acceptance test: TF_ACC is not set")
	}
	az := brokertest.StartAzurite(t)
	az.CreateQueue(t, "jobs")
	rb := brokertest.UseRabbitMQ(t)
	errQueue, _ := rb.NewQueue(t)
	sub := rb.Subscribe(t, "amq.fanout")
	stop, addr, err := startDaemon(os.Getenv(envDaemonBinary), t.TempDir(),
		"--storage-queue-endpoint", az.Endpoint(), "--service-bus-endpoint", rb.Endpoint, "--service-bus-auth", "plain",
		"--service-bus-queue-address", rb.QueueAddress, "--service-bus-topic-address", rb.TopicAddress)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()

	sas := brokertest.AccountSAS("a")
	coll := "jc-messages"
	config := fmt.Sprintf(`
provider "scheduler" {
  endpoint = "http://%[1]s"
}

resource "scheduler_job_collection" "c" {
  name = %[2]q
}

resource "scheduler_job" "queue" {
  job_collection_id = scheduler_job_collection.c.id
  name              = "to-a-queue"
  action {
    type = "storageQueue"
    queue_message {
      storage_account = %[3]q
      queue_name      = "jobs"
      sas_token       = %[4]q
      message         = "from tofu"
    }
  }
  recurrence {
    frequency = "Hour"
  }
}

resource "scheduler_job" "topic" {
  job_collection_id = scheduler_job_collection.c.id
  name              = "to-a-topic"
  action {
    type = "ServiceBusTopic"
    service_bus_topic_message {
      namespace  = "local-bus"
      topic_path = "amq.fanout"
      message    = "to every subscriber"
      authentication {
        sas_key_name = %[5]q
        sas_key      = %[6]q
      }
      brokered_message_properties {
        label        = "from-tofu"
        time_to_live = "PT1H"
      }
      custom_message_properties = {
        appname = "FromScheduler"
      }
    }
    error_action {
      type = "ServiceBusQueue"
      service_bus_queue_message {
        namespace  = "local-bus"
        queue_name = %[7]q
        message    = "failed"
        authentication {
          sas_key_name = %[5]q
          sas_key      = %[6]q
        }
      }
    }
  }
  recurrence {
    frequency = "Hour"
  }
}
`, addr, coll, brokertest.AzuriteAccount, sas, rb.User, rb.Password, errQueue)

	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6Factories(),
		Steps: []resource.TestStep{{
			Config: config,
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue("scheduler_job.queue", tfjsonpath.New("action").AtMapKey("queue_message").AtMapKey("sas_token"), knownvalue.StringExact(sas)),
				statecheck.ExpectKnownValue("scheduler_job.topic", tfjsonpath.New("action").AtMapKey("service_bus_topic_message").AtMapKey("authentication").AtMapKey("sas_key"),
					knownvalue.StringExact(rb.Password)),
				statecheck.ExpectKnownValue("scheduler_job.topic", tfjsonpath.New("action").AtMapKey("error_action").AtMapKey("service_bus_queue_message").AtMapKey("queue_name"),
					knownvalue.StringExact(errQueue)),
			},
			ConfigPlanChecks: resource.ConfigPlanChecks{
				PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
			},
			Check: func(*terraform.State) error {
				texts := az.WaitMessages(t, "jobs", 1, 30*time.Second)
				env, err := action.ParseQueueEnvelope(texts[0])
				if err != nil {
					return err
				}
				if env.Message != "from tofu" || !strings.HasSuffix(env.SchedulerJobID, "/jobCollections/"+coll+"/jobs/to-a-queue") {
					return fmt.Errorf("queue envelope %+v", env)
				}
				m := sub.Receive(t, 30*time.Second)
				if string(m.GetData()) != "to every subscriber" || m.Properties.Subject == nil || *m.Properties.Subject != "from-tofu" ||
					m.ApplicationProperties["appname"] != "FromScheduler" || m.Header.TTL != time.Hour {
					return fmt.Errorf("topic message %q %+v %#v", m.GetData(), m.Properties, m.ApplicationProperties)
				}
				return nil
			},
		}},
	})
}
