package provider

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
)

// validateAction validates a scheduler_job with this action as tofu does and renders each
// diagnostic as "summary | attribute path".
func validateAction(t *testing.T, action map[string]any) []string {
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
	resp, err := server.ValidateResourceConfig(ctx, &tfprotov6.ValidateResourceConfigRequest{TypeName: "scheduler_job", Config: &dv})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, d := range resp.Diagnostics {
		out = append(out, fmt.Sprintf("%s | %s", d.Summary, d.Attribute))
	}
	return out
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
