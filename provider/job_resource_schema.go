package provider

import (
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/schedulerhq/terraform-provider-scheduler/internal/arm"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/jobdef"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/retry"
)

// statusAttrTypes is the shape of the computed status object.
var statusAttrTypes = map[string]attr.Type{
	"state":               types.StringType,
	"execution_count":     types.Int64Type,
	"failure_count":       types.Int64Type,
	"faulted_count":       types.Int64Type,
	"last_execution_time": types.StringType,
	"next_execution_time": types.StringType,
}

func jobSchema() schema.Schema {
	s := schema.Schema{
		MarkdownDescription: "A scheduled job: an HTTP(S), storage queue or Service Bus action run at `start_time` and/or on a `recurrence` " +
			"(Azure Scheduler `Microsoft.Scheduler/jobCollections/jobs`). Every recurrence rule is checked at plan time " +
			"with the daemon's own engine, so `plan` rejects a schedule the daemon would reject, naming the attribute.\n\n" +
			"Enum values (`frequency`, `week_days`, `type`, `method`, ...) are accepted in any case and kept as written. " +
			"Secrets (passwords, pfx, OAuth secret, SAS token, Service Bus key) are write-only in the API: they are kept from the configuration, " +
			"and changing them updates the job. Each also has a write-only form (`password_wo` with `password_wo_version`, ...) " +
			"that is never stored in the plan or the state (Terraform 1.11+, OpenTofu 1.11+). A job that has reached a final state (`Completed`, `Faulted`) cannot be " +
			"updated by the API, so changing its configuration replaces it.",
		Attributes: map[string]schema.Attribute{
			"id": schema.StringAttribute{
				Computed:            true,
				MarkdownDescription: "The ARM id: `{job_collection_id}/jobs/{name}`.",
				PlanModifiers:       []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
			},
			"job_collection_id": schema.StringAttribute{
				Required:            true,
				MarkdownDescription: "ARM id of the job collection (`scheduler_job_collection.<name>.id`). Changing it replaces the job.",
				PlanModifiers:       []planmodifier.String{stringplanmodifier.RequiresReplace()},
				Validators:          []validator.String{armID{}},
			},
			"name": schema.StringAttribute{
				Required:            true,
				MarkdownDescription: "Name of the job, unique in its collection. Changing it replaces the job.",
				PlanModifiers:       []planmodifier.String{stringplanmodifier.RequiresReplace()},
				Validators:          []validator.String{armName{arm.Job}},
			},
			"start_time": schema.StringAttribute{
				Optional: true,
				MarkdownDescription: "ISO 8601 date-time (or date) of the first execution. Without an offset it is UTC, or wall clock in " +
					"`recurrence.time_zone` when set. Without it the job runs once immediately, then on its recurrence.",
			},
			"state": schema.StringAttribute{
				Optional:            true,
				Computed:            true,
				Default:             stringdefault.StaticString(jobdef.StateEnabled),
				MarkdownDescription: "`Enabled` or `Disabled` (any case); default `Enabled`. The live state, which may also be `Completed` or `Faulted`, is `status.state`.",
				CustomType:          enumType{},
				PlanModifiers:       []planmodifier.String{samePlan{enumType{}}},
				Validators:          []validator.String{stringvalidator.OneOfCaseInsensitive(jobWritableStates...)},
			},
			"recurrence_description": schema.StringAttribute{
				Computed:            true,
				MarkdownDescription: recurrenceDescriptionDoc + " Known at plan time when `start_time` and `recurrence` are.",
			},
			"status": schema.SingleNestedAttribute{
				Computed:            true,
				MarkdownDescription: "Execution state, maintained by the daemon.",
				Attributes: map[string]schema.Attribute{
					"state":               schema.StringAttribute{Computed: true, MarkdownDescription: "Live state: `Enabled`, `Disabled`, `Completed` or `Faulted`."},
					"execution_count":     schema.Int64Attribute{Computed: true, MarkdownDescription: "Occurrences executed."},
					"failure_count":       schema.Int64Attribute{Computed: true, MarkdownDescription: "Occurrences whose action failed after its retries."},
					"faulted_count":       schema.Int64Attribute{Computed: true, MarkdownDescription: "Occurrences whose error action failed too (or that had none)."},
					"last_execution_time": schema.StringAttribute{Computed: true, MarkdownDescription: "RFC 3339 time of the last execution."},
					"next_execution_time": schema.StringAttribute{Computed: true, MarkdownDescription: "RFC 3339 time of the next execution."},
				},
			},
		},
		Blocks: map[string]schema.Block{
			"action": schema.SingleNestedBlock{
				MarkdownDescription: "What the job does at each execution. Required.",
				Validators:          []validator.Object{requiredBlock{}},
				Attributes:          map[string]schema.Attribute{"type": actionTypeAttribute(), "timeout": timeoutAttribute()},
				Blocks: map[string]schema.Block{
					"request":                   requestBlock(),
					"queue_message":             queueMessageBlock(),
					"service_bus_queue_message": serviceBusMessageBlock(false),
					"service_bus_topic_message": serviceBusMessageBlock(true),
					"retry_policy":              retryPolicyBlock(),
					"error_action": schema.SingleNestedBlock{
						MarkdownDescription: "Runs when the action still fails after its retries.",
						Attributes:          map[string]schema.Attribute{"type": actionTypeAttribute(), "timeout": timeoutAttribute()},
						Blocks: map[string]schema.Block{
							"request":                   requestBlock(),
							"queue_message":             queueMessageBlock(),
							"service_bus_queue_message": serviceBusMessageBlock(false),
							"service_bus_topic_message": serviceBusMessageBlock(true),
							"retry_policy":              retryPolicyBlock(),
						},
					},
				},
			},
			"recurrence": recurrenceBlock(),
			"misfire":    misfireBlock(),
		},
	}
	for name, a := range whenAttributes() {
		s.Attributes[name] = a
	}
	return s
}

func actionTypeAttribute() schema.StringAttribute {
	return schema.StringAttribute{
		Optional:            true,
		MarkdownDescription: "Required. `Http`, `Https` (the URI's scheme must match), `StorageQueue`, `ServiceBusQueue` or `ServiceBusTopic` (any case). Exactly the block of the type is set: `request`, `queue_message`, `service_bus_queue_message` or `service_bus_topic_message`.",
		Validators:          []validator.String{stringvalidator.OneOfCaseInsensitive(actionTypes...)},
		CustomType:          enumType{},
		PlanModifiers:       []planmodifier.String{samePlan{enumType{}}},
	}
}

// requestBlock is the HTTP request of an action or error action.
func requestBlock() schema.SingleNestedBlock {
	basic := map[string]schema.Attribute{
		"username": schema.StringAttribute{Optional: true, MarkdownDescription: "Required. User name."},
	}
	secretAttributes(basic, "password", "Password.", true)
	cert := map[string]schema.Attribute{
		"certificate_thumbprint":      schema.StringAttribute{Computed: true, MarkdownDescription: "SHA-1 thumbprint of the certificate."},
		"certificate_expiration_date": schema.StringAttribute{Computed: true, MarkdownDescription: "Expiration date of the certificate (RFC 3339)."},
		"certificate_subject_name":    schema.StringAttribute{Computed: true, MarkdownDescription: "Subject of the certificate."},
	}
	secretAttributes(cert, "pfx", "Base64 PKCS#12 file with the certificate and its private key (`filebase64(\"client.pfx\")`).", true)
	secretAttributes(cert, "password", "Password of the PKCS#12 file.", false)
	oauth := map[string]schema.Attribute{
		"tenant":    schema.StringAttribute{Optional: true, MarkdownDescription: "Required. Tenant (directory) id or name."},
		"audience":  schema.StringAttribute{Optional: true, MarkdownDescription: "Required. Audience (resource) of the token."},
		"client_id": schema.StringAttribute{Optional: true, MarkdownDescription: "Required. Client (application) id."},
	}
	secretAttributes(oauth, "secret", "Client secret.", true)
	return schema.SingleNestedBlock{
		MarkdownDescription: "The HTTP request of an `Http` or `Https` action.",
		Attributes: map[string]schema.Attribute{
			"uri": schema.StringAttribute{
				Optional:            true,
				MarkdownDescription: "Required. Absolute URI; its scheme matches the action type. At most 2,048 characters.",
			},
			"method": schema.StringAttribute{
				Optional:            true,
				MarkdownDescription: "Required. HTTP method: `GET`, `HEAD`, `POST`, `PUT`, `PATCH`, `DELETE` or `OPTIONS` (any case).",
				Validators:          []validator.String{stringvalidator.OneOfCaseInsensitive(httpMethods...)},
				CustomType:          enumType{},
				PlanModifiers:       []planmodifier.String{samePlan{enumType{}}},
			},
			"body": schema.StringAttribute{
				Optional:            true,
				MarkdownDescription: "Request body, at most 8,192 characters.",
			},
			"headers": schema.MapAttribute{
				Optional:            true,
				ElementType:         types.StringType,
				MarkdownDescription: "Request headers: at most 50, 4,096 characters in all. Names in any case.",
				PlanModifiers:       []planmodifier.Map{sameHeadersPlan{}},
			},
		},
		Blocks: map[string]schema.Block{
			"signing": signingBlock(),
			"authentication": schema.SingleNestedBlock{
				MarkdownDescription: "Outbound authentication: exactly one block of `basic`, `client_certificate`, `active_directory_oauth`. Not allowed in `Free` collections.",
				Validators:          []validator.Object{exactlyOneBlock{"basic", "client_certificate", "active_directory_oauth"}},
				Blocks: map[string]schema.Block{
					"basic": schema.SingleNestedBlock{
						MarkdownDescription: "HTTP Basic authentication.",
						Attributes:          basic,
					},
					"client_certificate": schema.SingleNestedBlock{
						MarkdownDescription: "TLS client certificate.",
						Attributes:          cert,
					},
					"active_directory_oauth": schema.SingleNestedBlock{
						MarkdownDescription: "OAuth 2 client-credentials token (Azure Active Directory or any compatible authority).",
						Attributes:          oauth,
					},
				},
			},
		},
	}
}

func retryPolicyBlock() schema.SingleNestedBlock {
	return schema.SingleNestedBlock{
		MarkdownDescription: "How a failed attempt is retried. Without it: `Fixed`, every 30 seconds, 4 times.",
		Attributes: map[string]schema.Attribute{
			"retry_type": schema.StringAttribute{
				Optional:            true,
				Computed:            true, // null unless set, or the default as the API holds it (defaultPlan)
				CustomType:          enumType{},
				PlanModifiers:       []planmodifier.String{samePlan{enumType{}}, defaultEnum(retry.Fixed.String())},
				MarkdownDescription: "`None`, `Fixed` or `Exponential` (any case); default `Fixed`. `Exponential` waits `retry_interval` before the first retry and twice the previous delay before each further one, at most `max_retry_interval`, with up to ±20 % jitter.",
				Validators:          []validator.String{stringvalidator.OneOfCaseInsensitive(retryTypes...)},
			},
			"retry_interval": schema.StringAttribute{
				Optional:            true,
				Computed:            true,
				CustomType:          durationType{},
				PlanModifiers:       []planmodifier.String{samePlan{durationType{}}, defaultDuration(retry.DefaultInterval)},
				MarkdownDescription: "ISO 8601 duration (`PT1M`) or `hh:mm:ss`, from 15 seconds to 18 months; default 30 seconds.",
			},
			"retry_count": schema.Int64Attribute{
				Optional:            true,
				Computed:            true,
				PlanModifiers:       []planmodifier.Int64{defaultIntPlan{retry.DefaultCount}},
				MarkdownDescription: "Retries after the first attempt, 0 to 20; default 4.",
			},
			"max_retry_interval": schema.StringAttribute{
				Optional:            true,
				Computed:            true,
				CustomType:          durationType{},
				PlanModifiers:       []planmodifier.String{samePlan{durationType{}}, defaultDuration(retry.DefaultMaxRetryInterval)},
				MarkdownDescription: "`Exponential` only: the longest delay between retries, an ISO 8601 duration not below `retry_interval`; default `PT1H`.",
			},
		},
	}
}

// recurrenceBlock is the recurrence of scheduler_job and of the scheduler_occurrences data
// source. It and its schedule are blocks, not object attributes, so that OpenTofu and Terraform
// show a diagnostic's line: they follow a diagnostic's path into nested blocks only.
func recurrenceBlock() schema.SingleNestedBlock {
	b := schema.SingleNestedBlock{
		MarkdownDescription: "When the job repeats. Without it the job runs once.",
		Attributes: map[string]schema.Attribute{
			"frequency": schema.StringAttribute{
				Optional:            true,
				MarkdownDescription: "Required. `Minute`, `Hour`, `Day`, `Week` or `Month` (any case).",
				Validators:          []validator.String{stringvalidator.OneOfCaseInsensitive(frequencies...)},
				CustomType:          enumType{},
				PlanModifiers:       []planmodifier.String{samePlan{enumType{}}},
			},
			"interval": schema.Int64Attribute{
				Optional:            true,
				Computed:            true, // null unless set, or 1 as the API holds it (defaultIntPlan)
				MarkdownDescription: "Every how many frequency units; default 1; at most 18 for Month, 78 for Week, 548 for Day, 1000 for Hour and Minute.",
				PlanModifiers:       []planmodifier.Int64{defaultIntPlan{1}},
			},
			"count": schema.Int64Attribute{
				Optional:            true,
				MarkdownDescription: "Stop after this many executions (at least 1). With `end_time`, whichever ends the job first wins.",
			},
			"end_time": schema.StringAttribute{
				Optional:            true,
				MarkdownDescription: "ISO 8601 date-time (or date) of the last possible execution, inclusive; not before `start_time`.",
				PlanModifiers:       []planmodifier.String{sameTimePlan{}},
			},
			"time_zone": schema.StringAttribute{
				Optional:            true,
				MarkdownDescription: "IANA time zone (`Europe/Berlin`): times without offset are wall clock there, and the schedule follows its daylight saving.",
			},
		},
		Blocks: map[string]schema.Block{
			"schedule": schema.SingleNestedBlock{
				MarkdownDescription: "Advanced schedule: which minutes, hours, week days and month days within each period.",
				Attributes: map[string]schema.Attribute{
					"minutes": schema.ListAttribute{
						Optional: true, ElementType: types.Int64Type,
						MarkdownDescription: "Minutes of the hour, 0-59, no duplicates.",
					},
					"hours": schema.ListAttribute{
						Optional: true, ElementType: types.Int64Type,
						MarkdownDescription: "Hours of the day, 0-23, no duplicates.",
					},
					"week_days": schema.ListAttribute{
						Optional: true, ElementType: types.StringType,
						MarkdownDescription: "Day names (any case), `Week` frequency only.",
						PlanModifiers:       []planmodifier.List{sameFoldListPlan{}},
						// No schema validator: the engine reports a wrong day, once (validateJob).
					},
					"month_days": schema.ListAttribute{
						Optional: true, ElementType: types.Int64Type,
						MarkdownDescription: "Days of the month, 1 to 31 or -31 to -1 (-1 is the last day), `Month` frequency only.",
					},
				},
				Blocks: map[string]schema.Block{
					"monthly_occurrences": schema.ListNestedBlock{
						MarkdownDescription: "A week day of the month (`Month` frequency only), such as the last Friday: one block per day.",
						NestedObject: schema.NestedBlockObject{
							Attributes: map[string]schema.Attribute{
								"day": schema.StringAttribute{
									Required:            true,
									MarkdownDescription: "Day name (any case).",
									CustomType:          enumType{},
									PlanModifiers:       []planmodifier.String{samePlan{enumType{}}},
								},
								"occurrence": schema.Int64Attribute{
									Optional:            true,
									MarkdownDescription: "1 to 5 (the first to fifth), -1 to -5 (the last to fifth from last); unset: every such day.",
								},
							},
						},
					},
				},
			},
		},
	}
	whenRecurrenceAttributes(b.Attributes)
	return b
}
