package provider

import (
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/schedulerhq/terraform-provider-scheduler/internal/jobstate"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"
)

// How a job calls its target (SPEC 8, the extensions beyond Azure Scheduler): an attempt's
// timeout (action and error action), the Exponential retry policy's max_retry_interval (in
// retryPolicyBlock) and the request's signing block. Every rule of theirs is checked at plan time
// by the engine (jobdef), reported on the attribute's line.

// signingModel is request.signing: the Standard Webhooks secrets, each in its sensitive and its
// write-only form (secret.go).
type signingModel struct {
	Secret                  types.String `tfsdk:"secret"`
	SecretWO                types.String `tfsdk:"secret_wo"`
	SecretWOVersion         types.Int64  `tfsdk:"secret_wo_version"`
	PreviousSecret          types.String `tfsdk:"previous_secret"`
	PreviousSecretWO        types.String `tfsdk:"previous_secret_wo"`
	PreviousSecretWOVersion types.Int64  `tfsdk:"previous_secret_wo_version"`
}

func timeoutAttribute() schema.StringAttribute {
	return schema.StringAttribute{
		Optional:      true,
		Computed:      true, // null unless set, or the default as the API holds it (defaultPlan)
		CustomType:    durationType{},
		PlanModifiers: []planmodifier.String{samePlan{durationType{}}, defaultDuration(jobstate.DefaultTimeout)},
		MarkdownDescription: "How long one attempt may take before it is cancelled and counts as failed (then retried as " +
			"`retry_policy` says): an ISO 8601 duration from `PT1S` to `PT30M`; default `PT60S`. Bounds storage queue and Service Bus sends too.",
	}
}

func signingBlock() schema.SingleNestedBlock {
	attrs := map[string]schema.Attribute{}
	secretAttributes(attrs, "secret", "Signing secret: `whsec_` followed by the standard base64 of 24 to 64 random bytes.", true)
	secretAttributes(attrs, "previous_secret", "The secret being rotated out (same format): while it is set, each request carries a signature under each secret.", false)
	return schema.SingleNestedBlock{
		MarkdownDescription: "Signs every attempt as the [Standard Webhooks](https://www.standardwebhooks.com/) specification says " +
			"(`webhook-id`: the execution tag, `webhook-timestamp`, `webhook-signature`), so that a receiver can verify " +
			"the request with that specification's libraries. `Http` and `Https` actions only.",
		Attributes: attrs,
	}
}

func (s *signingModel) toWire(c conv, at string) *wire.HTTPSigning {
	if s == nil {
		return nil
	}
	return &wire.HTTPSigning{
		Secret:         c.secret(s.Secret, s.SecretWO, at+".secret"),
		PreviousSecret: c.secret(s.PreviousSecret, s.PreviousSecretWO, at+".previousSecret"),
	}
}

// signingFromWire reads back a request's signing: the API answers "signing": {} for a signed
// request (the secrets are never returned), so the secrets and their versions are kept from the
// plan or the state; a block added outside Terraform shows as drift.
func signingFromWire(s *wire.HTTPSigning, prior *signingModel, fresh bool) *signingModel {
	if s == nil {
		return nil
	}
	if prior == nil {
		prior = &signingModel{}
	}
	return &signingModel{
		Secret:                  secret(prior.Secret, fresh),
		SecretWOVersion:         writeOnlyVersion(prior.SecretWOVersion, fresh),
		PreviousSecret:          secret(prior.PreviousSecret, fresh),
		PreviousSecretWOVersion: writeOnlyVersion(prior.PreviousSecretWOVersion, fresh),
	}
}
