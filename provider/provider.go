// Package provider is the Terraform/OpenTofu provider of Scheduler: resources
// scheduler_job_collection and scheduler_job, data sources, and the occurrences function, all
// talking to the daemon through internal/client and validating schedules with the daemon's own
// engine (internal/jobdef, internal/recurrence) at plan time.
package provider

import (
	"context"
	"os"
	"strconv"

	"github.com/hashicorp/terraform-plugin-framework/action"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/function"
	"github.com/hashicorp/terraform-plugin-framework/list"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/provider/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/schedulerhq/terraform-provider-scheduler/internal/client"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/clock"
)

// Environment variables that configure the provider when the provider block does not.
const (
	EnvEndpoint           = "SCHEDULER_ENDPOINT"
	EnvToken              = "SCHEDULER_TOKEN"
	EnvSubscriptionID     = "SCHEDULER_SUBSCRIPTION_ID"
	EnvCACertPEM          = "SCHEDULER_CA_CERT_PEM"
	EnvInsecureSkipVerify = "SCHEDULER_INSECURE_SKIP_VERIFY"
	EnvMaxRetries         = "SCHEDULER_MAX_RETRIES"
)

// DefaultSubscriptionID is the subscription used when none is configured.
const DefaultSubscriptionID = "default"

var (
	_ provider.Provider                  = (*schedulerProvider)(nil)
	_ provider.ProviderWithFunctions     = (*schedulerProvider)(nil)
	_ provider.ProviderWithActions       = (*schedulerProvider)(nil)
	_ provider.ProviderWithListResources = (*schedulerProvider)(nil)
)

// schedulerProvider is the provider. clock tells "now" to the occurrence previews.
type schedulerProvider struct {
	version string
	clock   clock.Clock
}

// New returns the provider factory for a version, on the real clock.
func New(version string) func() provider.Provider {
	return NewWithClock(version, clock.Real{})
}

// NewWithClock returns the provider factory with an injected clock (tests).
func NewWithClock(version string, c clock.Clock) func() provider.Provider {
	return func() provider.Provider {
		return &schedulerProvider{version: version, clock: c}
	}
}

type providerModel struct {
	Endpoint           types.String `tfsdk:"endpoint"`
	Token              types.String `tfsdk:"token"`
	SubscriptionID     types.String `tfsdk:"subscription_id"`
	CACertPEM          types.String `tfsdk:"ca_cert_pem"`
	InsecureSkipVerify types.Bool   `tfsdk:"insecure_skip_verify"`
	MaxRetries         types.Int64  `tfsdk:"max_retries"`
}

// providerData is what Configure hands to resources and data sources. When the configuration
// is incomplete, err says what to set; only the parts that need the daemon report it, so the
// occurrences preview works without one.
type providerData struct {
	client       *client.Client
	subscription string
	clock        clock.Clock
	err          *configError
	// planned holds the collections planned in this run, for their jobs' plans (planned.go).
	planned *plannedCollections
}

func (p *schedulerProvider) Metadata(_ context.Context, _ provider.MetadataRequest, resp *provider.MetadataResponse) {
	resp.TypeName = "scheduler"
	resp.Version = p.version
}

func (p *schedulerProvider) Schema(_ context.Context, _ provider.SchemaRequest, resp *provider.SchemaResponse) {
	resp.Schema = providerSchema()
}

func providerSchema() schema.Schema {
	return schema.Schema{
		MarkdownDescription: "Manages the job collections and jobs of a [Scheduler](https://github.com/schedulerhq/terraform-provider-scheduler) " +
			"daemon (Azure Scheduler 2016-03-01 API). Every argument can also be set from the environment; the provider block wins.",
		Attributes: map[string]schema.Attribute{
			"endpoint": schema.StringAttribute{
				Optional:            true,
				MarkdownDescription: "Base URL of the daemon, such as `https://scheduler.example.com:8443`. Environment: `" + EnvEndpoint + "`.",
			},
			"token": schema.StringAttribute{
				Optional:            true,
				Sensitive:           true,
				MarkdownDescription: "Bearer token of the API. Environment: `" + EnvToken + "`.",
			},
			"subscription_id": schema.StringAttribute{
				Optional:            true,
				MarkdownDescription: "Subscription the resources are created in. Environment: `" + EnvSubscriptionID + "`; default `" + DefaultSubscriptionID + "`.",
			},
			"ca_cert_pem": schema.StringAttribute{
				Optional:            true,
				MarkdownDescription: "PEM certificates trusted for the daemon's TLS certificate, instead of the system roots. Environment: `" + EnvCACertPEM + "`.",
			},
			"insecure_skip_verify": schema.BoolAttribute{
				Optional:            true,
				MarkdownDescription: "Do not verify the daemon's TLS certificate (testing only). Environment: `" + EnvInsecureSkipVerify + "`.",
			},
			"max_retries": schema.Int64Attribute{
				Optional:            true,
				MarkdownDescription: "How many times a transient answer (429, 503, connection error) is retried with backoff. Environment: `" + EnvMaxRetries + "`; default 4.",
			},
		},
	}
}

func (p *schedulerProvider) Configure(ctx context.Context, req provider.ConfigureRequest, resp *provider.ConfigureResponse) {
	var m providerModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	data := &providerData{clock: p.clock, planned: newPlannedCollections()}
	resp.DataSourceData = data
	resp.ResourceData = data
	resp.ActionData = data
	resp.ListResourceData = data

	for _, u := range []struct {
		v    interface{ IsUnknown() bool }
		name string
		env  string
	}{
		{m.Endpoint, "endpoint", EnvEndpoint},
		{m.Token, "token", EnvToken},
		{m.SubscriptionID, "subscription_id", EnvSubscriptionID},
		{m.CACertPEM, "ca_cert_pem", EnvCACertPEM},
		{m.InsecureSkipVerify, "insecure_skip_verify", EnvInsecureSkipVerify},
		{m.MaxRetries, "max_retries", EnvMaxRetries},
	} {
		if u.v.IsUnknown() {
			data.err = unknownConfig(u.name, u.env)
			return
		}
	}

	endpoint := stringOrEnv(m.Endpoint, EnvEndpoint)
	token := stringOrEnv(m.Token, EnvToken)
	data.subscription = stringOrEnv(m.SubscriptionID, EnvSubscriptionID)
	if data.subscription == "" {
		data.subscription = DefaultSubscriptionID
	}
	cfg := client.Config{
		Endpoint:  endpoint,
		Token:     token,
		CACertPEM: stringOrEnv(m.CACertPEM, EnvCACertPEM),
		UserAgent: "terraform-provider-scheduler/" + p.version,
	}
	switch {
	case !m.InsecureSkipVerify.IsNull():
		cfg.InsecureSkipVerify = m.InsecureSkipVerify.ValueBool()
	case os.Getenv(EnvInsecureSkipVerify) != "":
		v, err := strconv.ParseBool(os.Getenv(EnvInsecureSkipVerify))
		if err != nil {
			resp.Diagnostics.AddAttributeError(path.Root("insecure_skip_verify"), "Invalid "+EnvInsecureSkipVerify,
				EnvInsecureSkipVerify+"="+strconv.Quote(os.Getenv(EnvInsecureSkipVerify))+" is not a boolean: set it to true or false.")
			return
		}
		cfg.InsecureSkipVerify = v
	}
	switch {
	case !m.MaxRetries.IsNull():
		cfg.Retries = retriesSetting(m.MaxRetries.ValueInt64())
	case os.Getenv(EnvMaxRetries) != "":
		v, err := strconv.Atoi(os.Getenv(EnvMaxRetries))
		if err != nil || v < 0 {
			resp.Diagnostics.AddAttributeError(path.Root("max_retries"), "Invalid "+EnvMaxRetries,
				EnvMaxRetries+"="+strconv.Quote(os.Getenv(EnvMaxRetries))+" is not a whole number ≥ 0: set it to how many retries you want.")
			return
		}
		cfg.Retries = retriesSetting(int64(v))
	}
	switch {
	case endpoint == "":
		data.err = missingConfig("endpoint", EnvEndpoint, "the daemon's base URL, such as https://scheduler.example.com:8443")
		return
	case token == "":
		data.err = missingConfig("token", EnvToken, "the daemon's API token (schedulerd prints where it stored the one it created)")
		return
	}
	c, err := client.New(cfg)
	if err != nil {
		resp.Diagnostics.AddError("Invalid Scheduler provider configuration", err.Error()+
			"\n\nFix the provider block or the "+EnvEndpoint+"/"+EnvCACertPEM+" environment variables.")
		return
	}
	data.client = c
}

// retriesSetting maps the user's retry count (0: none) to client.Config.Retries (negative: none).
func retriesSetting(n int64) int {
	if n <= 0 {
		return -1
	}
	return int(n)
}

func stringOrEnv(v types.String, env string) string {
	if !v.IsNull() {
		return v.ValueString()
	}
	return os.Getenv(env)
}

func (p *schedulerProvider) Resources(_ context.Context) []func() resource.Resource {
	return []func() resource.Resource{
		newJobCollectionResource,
		func() resource.Resource { return &jobResource{clock: p.clock} },
	}
}

func (p *schedulerProvider) DataSources(_ context.Context) []func() datasource.DataSource {
	return []func() datasource.DataSource{
		newJobCollectionDataSource,
		newJobDataSource,
		newJobHistoryDataSource,
		newOccurrencesDataSource,
	}
}

// Actions are Terraform 1.14's actions; OpenTofu and earlier Terraform ignore them.
func (p *schedulerProvider) Actions(_ context.Context) []func() action.Action {
	return []func() action.Action{newJobRunAction}
}

// ListResources are Terraform 1.14's list resources (terraform query); OpenTofu ignores them.
func (p *schedulerProvider) ListResources(_ context.Context) []func() list.ListResource {
	return []func() list.ListResource{newJobListResource}
}

func (p *schedulerProvider) Functions(_ context.Context) []func() function.Function {
	return []func() function.Function{
		func() function.Function { return &occurrencesFunction{clock: p.clock} },
	}
}
