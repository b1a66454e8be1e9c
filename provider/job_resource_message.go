package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"
)

// The message actions: StorageQueue (queue_message), ServiceBusQueue
// (service_bus_queue_message) and ServiceBusTopic (service_bus_topic_message). Which block goes
// with which type, and every field's rule, is checked at plan time by the engine (jobdef).

type queueMessageModel struct {
	StorageAccount    types.String `tfsdk:"storage_account"`
	QueueName         types.String `tfsdk:"queue_name"`
	SasToken          types.String `tfsdk:"sas_token"`
	SasTokenWO        types.String `tfsdk:"sas_token_wo"`
	SasTokenWOVersion types.Int64  `tfsdk:"sas_token_wo_version"`
	Message           types.String `tfsdk:"message"`
}

// ServiceBusMessageModel is what queue and topic messages share (embedded in both; exported
// because the framework reads embedded structs by reflection).
type ServiceBusMessageModel struct {
	Namespace                 types.String        `tfsdk:"namespace"`
	Message                   types.String        `tfsdk:"message"`
	TransportType             enumValue           `tfsdk:"transport_type"`
	Authentication            *sbAuthModel        `tfsdk:"authentication"`
	BrokeredMessageProperties *brokeredPropsModel `tfsdk:"brokered_message_properties"`
	CustomMessageProperties   types.Map           `tfsdk:"custom_message_properties"`
}

type sbQueueModel struct {
	ServiceBusMessageModel
	QueueName types.String `tfsdk:"queue_name"`
}

type sbTopicModel struct {
	ServiceBusMessageModel
	TopicPath types.String `tfsdk:"topic_path"`
}

type sbAuthModel struct {
	SasKeyName      types.String `tfsdk:"sas_key_name"`
	SasKey          types.String `tfsdk:"sas_key"`
	SasKeyWO        types.String `tfsdk:"sas_key_wo"`
	SasKeyWOVersion types.Int64  `tfsdk:"sas_key_wo_version"`
}

type brokeredPropsModel struct {
	ContentType             types.String `tfsdk:"content_type"`
	CorrelationID           types.String `tfsdk:"correlation_id"`
	Label                   types.String `tfsdk:"label"`
	MessageID               types.String `tfsdk:"message_id"`
	PartitionKey            types.String `tfsdk:"partition_key"`
	ReplyTo                 types.String `tfsdk:"reply_to"`
	ReplyToSessionID        types.String `tfsdk:"reply_to_session_id"`
	ScheduledEnqueueTimeUtc types.String `tfsdk:"scheduled_enqueue_time_utc"`
	SessionID               types.String `tfsdk:"session_id"`
	TimeToLive              types.String `tfsdk:"time_to_live"`
	To                      types.String `tfsdk:"to"`
	ViaPartitionKey         types.String `tfsdk:"via_partition_key"`
}

func queueMessageBlock() schema.SingleNestedBlock {
	b := schema.SingleNestedBlock{
		MarkdownDescription: "The message of a `StorageQueue` action: put on an Azure Storage queue (the daemon's `--storage-queue-endpoint`) in Azure Scheduler's `StorageQueueMessage` envelope.",
		Attributes: map[string]schema.Attribute{
			"storage_account": schema.StringAttribute{Optional: true, MarkdownDescription: "Required. Storage account name: 3 to 24 lower-case letters and digits."},
			"queue_name":      schema.StringAttribute{Optional: true, MarkdownDescription: "Required. Queue name: 3 to 63 lower-case letters, digits and single hyphens."},
			"message":         schema.StringAttribute{Optional: true, MarkdownDescription: "Required. The message, carried in the envelope's `Message` element."},
		},
	}
	secretAttributes(b.Attributes, "sas_token", "Shared access signature allowing Add on the queue (a query string with `sig=`, with or without `?`).", true)
	return b
}

func serviceBusMessageBlock(topic bool) schema.SingleNestedBlock {
	entity, desc := "queue_name", "The message of a `ServiceBusQueue` action: sent to a Service Bus queue over AMQP 1.0 (the daemon's `--service-bus-*` settings)."
	entityAttr := schema.StringAttribute{Optional: true, MarkdownDescription: "Required. Queue name, at most 260 characters."}
	if topic {
		entity, desc = "topic_path", "The message of a `ServiceBusTopic` action: sent to a Service Bus topic over AMQP 1.0 (the daemon's `--service-bus-*` settings)."
		entityAttr = schema.StringAttribute{Optional: true, MarkdownDescription: "Required. Topic path, at most 260 characters."}
	}
	str := func(d string) schema.StringAttribute {
		return schema.StringAttribute{Optional: true, MarkdownDescription: d}
	}
	auth := map[string]schema.Attribute{
		"sas_key_name": schema.StringAttribute{Optional: true, MarkdownDescription: "Required. Name of the shared access policy."},
	}
	secretAttributes(auth, "sas_key", "The policy's key.", true)
	return schema.SingleNestedBlock{
		MarkdownDescription: desc,
		Attributes: map[string]schema.Attribute{
			"namespace": schema.StringAttribute{Optional: true, MarkdownDescription: "Required. Service Bus namespace: 6 to 50 letters, digits and hyphens, starting with a letter."},
			entity:      entityAttr,
			"message":   str("Message body (one AMQP data section, UTF-8)."),
			"transport_type": schema.StringAttribute{Optional: true, CustomType: enumType{}, PlanModifiers: []planmodifier.String{samePlan{enumType{}}},
				MarkdownDescription: "`NotSpecified`, `NetMessaging` or `AMQP` (any case). Accepted for compatibility; the daemon always speaks AMQP 1.0."},
			"custom_message_properties": schema.MapAttribute{
				Optional: true, ElementType: types.StringType,
				MarkdownDescription: "Application properties of the message. The execution's metadata (`x-ms-execution-tag`, `x-ms-scheduler-jobid`, ...) is added and wins over a property of the same name.",
			},
		},
		Blocks: map[string]schema.Block{
			"authentication": schema.SingleNestedBlock{
				// Required: the engine reports a missing block (validateJob), once.
				MarkdownDescription: "Shared access key (type `SharedAccessKey`). Required.",
				Attributes:          auth,
			},
			"brokered_message_properties": schema.SingleNestedBlock{
				MarkdownDescription: "System properties of the message, mapped to AMQP as Service Bus maps them.",
				Attributes: map[string]schema.Attribute{
					"content_type":               str("AMQP content-type."),
					"correlation_id":             str("AMQP correlation-id, at most 128 characters."),
					"label":                      str("AMQP subject."),
					"message_id":                 str("AMQP message-id, at most 128 characters; default: the attempt's client request id."),
					"partition_key":              str("Message annotation `x-opt-partition-key`."),
					"reply_to":                   str("AMQP reply-to."),
					"reply_to_session_id":        str("AMQP reply-to-group-id."),
					"scheduled_enqueue_time_utc": str("ISO 8601 time: message annotation `x-opt-scheduled-enqueue-time`."),
					"session_id":                 str("AMQP group-id."),
					"time_to_live":               str("ISO 8601 duration (`PT10M`) or `d.hh:mm:ss`: the header's ttl."),
					"to":                         str("AMQP to."),
					"via_partition_key":          str("Message annotation `x-opt-via-partition-key`."),
				},
			},
		},
	}
}

func (q *queueMessageModel) toWire(c conv, at string) *wire.StorageQueueMessage {
	if q == nil {
		return nil
	}
	return &wire.StorageQueueMessage{
		StorageAccount: c.str(q.StorageAccount, at+".storageAccount"), QueueName: c.str(q.QueueName, at+".queueName"),
		SasToken: c.secret(q.SasToken, q.SasTokenWO, at+".sasToken"), Message: c.str(q.Message, at+".message"),
	}
}

func (m *ServiceBusMessageModel) toWire(c conv, at string) wire.ServiceBusMessage {
	out := wire.ServiceBusMessage{
		Namespace: c.str(m.Namespace, at+".namespace"), Message: c.str(m.Message, at+".message"),
		TransportType:           c.str(m.TransportType, at+".transportType"),
		CustomMessageProperties: c.strMap(m.CustomMessageProperties, at+".customMessageProperties"),
	}
	if a := m.Authentication; a != nil {
		out.Authentication = &wire.ServiceBusAuthentication{Type: "SharedAccessKey",
			SasKeyName: c.str(a.SasKeyName, at+".authentication.sasKeyName"), SasKey: c.secret(a.SasKey, a.SasKeyWO, at+".authentication.sasKey")}
	}
	if b := m.BrokeredMessageProperties; b != nil {
		bp := at + ".brokeredMessageProperties."
		out.BrokeredMessageProperties = &wire.ServiceBusBrokeredMessageProperties{
			ContentType: c.str(b.ContentType, bp+"contentType"), CorrelationID: c.str(b.CorrelationID, bp+"correlationId"),
			Label: c.str(b.Label, bp+"label"), MessageID: c.str(b.MessageID, bp+"messageId"),
			PartitionKey: c.str(b.PartitionKey, bp+"partitionKey"), ReplyTo: c.str(b.ReplyTo, bp+"replyTo"),
			ReplyToSessionID:        c.str(b.ReplyToSessionID, bp+"replyToSessionId"),
			ScheduledEnqueueTimeUtc: c.str(b.ScheduledEnqueueTimeUtc, bp+"scheduledEnqueueTimeUtc"),
			SessionID:               c.str(b.SessionID, bp+"sessionId"), TimeToLive: c.str(b.TimeToLive, bp+"timeToLive"),
			To: c.str(b.To, bp+"to"), ViaPartitionKey: c.str(b.ViaPartitionKey, bp+"viaPartitionKey"),
		}
	}
	return out
}

func (m *sbQueueModel) toWire(c conv, at string) *wire.ServiceBusQueueMessage {
	if m == nil {
		return nil
	}
	return &wire.ServiceBusQueueMessage{ServiceBusMessage: m.ServiceBusMessageModel.toWire(c, at), QueueName: c.str(m.QueueName, at+".queueName")}
}

func (m *sbTopicModel) toWire(c conv, at string) *wire.ServiceBusTopicMessage {
	if m == nil {
		return nil
	}
	return &wire.ServiceBusTopicMessage{ServiceBusMessage: m.ServiceBusMessageModel.toWire(c, at), TopicPath: c.str(m.TopicPath, at+".topicPath")}
}

func queueMessageFromWire(q *wire.StorageQueueMessage, prior *queueMessageModel, fresh bool) *queueMessageModel {
	if q == nil || (!fresh && prior == nil) {
		return nil
	}
	if prior == nil {
		prior = &queueMessageModel{}
	}
	return &queueMessageModel{
		StorageAccount:    keepString(prior.StorageAccount, q.StorageAccount, fresh, sameString),
		QueueName:         keepString(prior.QueueName, q.QueueName, fresh, sameString),
		SasToken:          secret(prior.SasToken, fresh),
		SasTokenWOVersion: writeOnlyVersion(prior.SasTokenWOVersion, fresh),
		Message:           keepString(prior.Message, q.Message, fresh, sameString),
	}
}

// serviceBusFromWire reads back what queue and topic messages share.
func serviceBusFromWire(m *wire.ServiceBusMessage, prior *ServiceBusMessageModel, fresh bool) ServiceBusMessageModel {
	out := ServiceBusMessageModel{
		Namespace:               keepString(prior.Namespace, m.Namespace, fresh, sameString),
		Message:                 keepString(prior.Message, m.Message, fresh, sameString),
		TransportType:           keepEnum(prior.TransportType, m.TransportType, fresh),
		CustomMessageProperties: keepStringMap(context.Background(), prior.CustomMessageProperties, m.CustomMessageProperties, fresh),
	}
	if a := m.Authentication; a != nil {
		pa := prior.Authentication
		f := fresh || pa == nil
		if pa == nil {
			pa = &sbAuthModel{}
		}
		out.Authentication = &sbAuthModel{SasKeyName: keepString(pa.SasKeyName, a.SasKeyName, f, sameString), SasKey: secret(pa.SasKey, fresh),
			SasKeyWOVersion: writeOnlyVersion(pa.SasKeyWOVersion, fresh)}
	}
	if b := m.BrokeredMessageProperties; b != nil && (fresh || prior.BrokeredMessageProperties != nil) {
		pb := prior.BrokeredMessageProperties
		if pb == nil {
			pb = &brokeredPropsModel{}
		}
		k := func(p types.String, v string) types.String { return keepString(p, v, fresh, sameString) }
		out.BrokeredMessageProperties = &brokeredPropsModel{
			ContentType: k(pb.ContentType, b.ContentType), CorrelationID: k(pb.CorrelationID, b.CorrelationID),
			Label: k(pb.Label, b.Label), MessageID: k(pb.MessageID, b.MessageID), PartitionKey: k(pb.PartitionKey, b.PartitionKey),
			ReplyTo: k(pb.ReplyTo, b.ReplyTo), ReplyToSessionID: k(pb.ReplyToSessionID, b.ReplyToSessionID),
			ScheduledEnqueueTimeUtc: k(pb.ScheduledEnqueueTimeUtc, b.ScheduledEnqueueTimeUtc), SessionID: k(pb.SessionID, b.SessionID),
			TimeToLive: k(pb.TimeToLive, b.TimeToLive), To: k(pb.To, b.To), ViaPartitionKey: k(pb.ViaPartitionKey, b.ViaPartitionKey),
		}
	}
	return out
}

func sbQueueFromWire(m *wire.ServiceBusQueueMessage, prior *sbQueueModel, fresh bool) *sbQueueModel {
	if m == nil || (!fresh && prior == nil) {
		return nil
	}
	if prior == nil {
		prior = &sbQueueModel{}
	}
	return &sbQueueModel{ServiceBusMessageModel: serviceBusFromWire(&m.ServiceBusMessage, &prior.ServiceBusMessageModel, fresh),
		QueueName: keepString(prior.QueueName, m.QueueName, fresh, sameString)}
}

func sbTopicFromWire(m *wire.ServiceBusTopicMessage, prior *sbTopicModel, fresh bool) *sbTopicModel {
	if m == nil || (!fresh && prior == nil) {
		return nil
	}
	if prior == nil {
		prior = &sbTopicModel{}
	}
	return &sbTopicModel{ServiceBusMessageModel: serviceBusFromWire(&m.ServiceBusMessage, &prior.ServiceBusMessageModel, fresh),
		TopicPath: keepString(prior.TopicPath, m.TopicPath, fresh, sameString)}
}
