package provider

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/Azure/go-amqp"
	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
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
				m := sub.ReceiveWhere(t, 30*time.Second, func(m *amqp.Message) bool { return m.Properties.Subject != nil && *m.Properties.Subject == "from-tofu" })
				if string(m.GetData()) != "to every subscriber" || m.Properties.Subject == nil || *m.Properties.Subject != "from-tofu" ||
					m.ApplicationProperties["appname"] != "FromScheduler" || m.Header.TTL != time.Hour {
					return fmt.Errorf("topic message %q %+v %#v", m.GetData(), m.Properties, m.ApplicationProperties)
				}
				return nil
			},
		}},
	})
}

// validateAction validates a scheduler_job with this action as tofu does and renders each
// diagnostic as "summary | attribute path".
func validateAction(t *testing.T, action map[string]any) []string {
	t.Helper()
	return diagnosticsOf(validateActionThroughServer(t, action), tfprotov6.DiagnosticSeverityError)
}

// diagnosticsOf is the diagnostics of severity sev, "summary | attribute path".
func diagnosticsOf(ds []*tfprotov6.Diagnostic, sev tfprotov6.DiagnosticSeverity) []string {
	var out []string
	for _, d := range ds {
		if d.Severity == sev {
			out = append(out, fmt.Sprintf("%s | %s", d.Summary, d.Attribute))
		}
	}
	return out
}

// validateActionThroughServer validates a job with that action through the provider server.
func validateActionThroughServer(t *testing.T, action map[string]any) []*tfprotov6.Diagnostic {
	t.Helper()
	ctx := context.Background()
	server, err := providerserver.NewProtocol6WithError(New("test")())()
	if err != nil {
		t.Fatal(err)
	}
	schemas, err := server.GetProviderSchema(ctx, &tfprotov6.GetProviderSchemaRequest{})
	if err != nil || len(schemas.Diagnostics) > 0 {
		t.Fatalf("schema: %v %v", err, schemas.Diagnostics)
	}
	typ := schemas.ResourceSchemas["scheduler_job"].ValueType()
	fields := map[string]any{
		"job_collection_id": tfStr("/subscriptions/default/resourceGroups/default/providers/Microsoft.Scheduler/jobCollections/plan-only"),
		"name":              tfStr("msg"),
		"start_time":        tfStr("2026-02-02T10:00:00Z"),
	}
	if action != nil {
		fields["action"] = action
	}
	config := objectOf(t, typ, fields)
	dv, err := tfprotov6.NewDynamicValue(typ, config)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := server.ValidateResourceConfig(ctx, &tfprotov6.ValidateResourceConfigRequest{TypeName: "scheduler_job", Config: &dv,
		ClientCapabilities: &tfprotov6.ValidateResourceConfigClientCapabilities{WriteOnlyAttributesAllowed: true}})
	if err != nil {
		t.Fatal(err)
	}
	return resp.Diagnostics
}

func sbBlock(entity, name string) map[string]any {
	return map[string]any{"namespace": tfStr("my-namespace"), entity: tfStr(name), "message": tfStr("m"),
		"authentication": map[string]any{"sas_key_name": tfStr("RootManageSharedAccessKey"), "sas_key": tfStr("k")}}
}

// Plan-time checks of the message actions: exactly the block of the type, each field's rule at
// its attribute path, and no secret in any message.
func TestMessageActionsAtPlanTime(t *testing.T) {
	queue := map[string]any{"storage_account": tfStr("acct"), "queue_name": tfStr("jobs"), "sas_token": tfStr("sv=1&sig=s3cr3t"), "message": tfStr("m")}
	badQueue := map[string]any{"storage_account": tfStr("Acct"), "queue_name": tfStr("q"), "sas_token": tfStr("s3cr3t"), "message": tfStr("m")}
	for _, tc := range []struct {
		name   string
		action map[string]any
		want   []string
	}{
		{"a storage queue job", map[string]any{"type": tfStr("storageQueue"), "queue_message": queue}, nil},
		{"a service bus topic job with an error action to a queue", map[string]any{"type": tfStr("ServiceBusTopic"),
			"service_bus_topic_message": sbBlock("topic_path", "t1"),
			"error_action":              map[string]any{"type": tfStr("ServiceBusQueue"), "service_bus_queue_message": sbBlock("queue_name", "q1")}}, nil},
		{"the block of another type", map[string]any{"type": tfStr("StorageQueue"), "service_bus_queue_message": sbBlock("queue_name", "q1")}, []string{
			`Invalid action.queue_message: is required for a StorageQueue action | AttributeName("action").AttributeName("queue_message")`,
			`Invalid action.service_bus_queue_message: is not allowed with a StorageQueue action (it takes queue_message) | AttributeName("action").AttributeName("service_bus_queue_message")`,
		}},
		{"a Service Bus message without authentication: one error", map[string]any{"type": tfStr("ServiceBusQueue"),
			"service_bus_queue_message": map[string]any{"namespace": tfStr("my-namespace"), "queue_name": tfStr("q1"), "message": tfStr("m")}}, []string{
			`Invalid action.service_bus_queue_message.authentication: is required (type SharedAccessKey with sas_key_name and sas_key) | AttributeName("action").AttributeName("service_bus_queue_message").AttributeName("authentication")`,
		}},
		{"no action block", nil, []string{`Missing action block | AttributeName("action")`}},
		{"no block", map[string]any{"type": tfStr("ServiceBusQueue")}, []string{
			`Invalid action.service_bus_queue_message: is required for a ServiceBusQueue action | AttributeName("action").AttributeName("service_bus_queue_message")`,
		}},
		{"bad fields, named by path", map[string]any{"type": tfStr("Http"), "request": map[string]any{"uri": tfStr("http://e.com/"), "method": tfStr("GET")},
			"error_action": map[string]any{"type": tfStr("StorageQueue"), "queue_message": badQueue}}, []string{
			`Invalid action.error_action.queue_message.storage_account: "Acct" is not a storage account name: 3 to 24 lower-case letters and digits | AttributeName("action").AttributeName("error_action").AttributeName("queue_message").AttributeName("storage_account")`,
			`Invalid action.error_action.queue_message.queue_name: "q" is not a queue name: 3 to 63 lower-case letters, digits and single hyphens, starting and ending with a letter or digit | AttributeName("action").AttributeName("error_action").AttributeName("queue_message").AttributeName("queue_name")`,
			`Invalid action.error_action.queue_message.sas_token: is not a shared access signature (a query string with sig=...) | AttributeName("action").AttributeName("error_action").AttributeName("queue_message").AttributeName("sas_token")`,
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := validateAction(t, tc.action)
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Fatalf("diagnostics:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
			if strings.Contains(strings.Join(got, "\n"), "s3cr3t") {
				t.Fatal("a diagnostic quotes the secret")
			}
		})
	}
}
