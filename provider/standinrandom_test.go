package provider

import (
	"context"
	"crypto/rand"
	"math/big"
	"slices"
	"sync"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/ephemeral"
	eschema "github.com/hashicorp/terraform-plugin-framework/ephemeral/schema"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// standinRandom is a test-only provider, "standinrandom", standing in for hashicorp/random in
// the acceptance tests: its ephemeral resource standinrandom_password does what
// ephemeral "random_password" does for the documented example (examples/ephemeral), a new random
// password on every open, never stored. The real hashicorp/random cannot be installed where the
// tests run (no registry to fetch it from, and its module is not on the Go module proxy), so it
// is served in-process like the provider under test. It records every password it hands out,
// so that a test can check the one the receiver gets and look for all of them in plans and states.
type standinRandom struct {
	generated *generatedPasswords
}

// generatedPasswords is every password standinrandom_password has opened, in order.
type generatedPasswords struct {
	mu   sync.Mutex
	list []string
}

func (g *generatedPasswords) add(p string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.list = append(g.list, p)
}

func (g *generatedPasswords) all() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Clone(g.list)
}

var _ provider.ProviderWithEphemeralResources = (*standinRandom)(nil)

func (p *standinRandom) Metadata(_ context.Context, _ provider.MetadataRequest, resp *provider.MetadataResponse) {
	resp.TypeName = "standinrandom"
}

func (p *standinRandom) Schema(context.Context, provider.SchemaRequest, *provider.SchemaResponse) {}

func (p *standinRandom) Configure(context.Context, provider.ConfigureRequest, *provider.ConfigureResponse) {
}

func (p *standinRandom) Resources(context.Context) []func() resource.Resource { return nil }

func (p *standinRandom) DataSources(context.Context) []func() datasource.DataSource { return nil }

func (p *standinRandom) EphemeralResources(context.Context) []func() ephemeral.EphemeralResource {
	return []func() ephemeral.EphemeralResource{
		func() ephemeral.EphemeralResource { return &standinPassword{generated: p.generated} },
	}
}

// standinPassword is standinrandom_password: length (required), special (optional, default
// false here) and the generated result.
type standinPassword struct {
	generated *generatedPasswords
}

type standinPasswordModel struct {
	Length  types.Int64  `tfsdk:"length"`
	Special types.Bool   `tfsdk:"special"`
	Result  types.String `tfsdk:"result"`
}

func (e *standinPassword) Metadata(_ context.Context, req ephemeral.MetadataRequest, resp *ephemeral.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_password"
}

func (e *standinPassword) Schema(_ context.Context, _ ephemeral.SchemaRequest, resp *ephemeral.SchemaResponse) {
	resp.Schema = eschema.Schema{
		Attributes: map[string]eschema.Attribute{
			"length":  eschema.Int64Attribute{Required: true},
			"special": eschema.BoolAttribute{Optional: true},
			"result":  eschema.StringAttribute{Computed: true, Sensitive: true},
		},
	}
}

func (e *standinPassword) Open(ctx context.Context, req ephemeral.OpenRequest, resp *ephemeral.OpenResponse) {
	var m standinPasswordModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	chars := "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	if m.Special.ValueBool() {
		chars += "!#$%&*()-_=+[]{}<>:?"
	}
	b := make([]byte, m.Length.ValueInt64())
	for i := range b {
		n, err := rand.Int(rand.Reader, big.NewInt(int64(len(chars))))
		if err != nil {
			resp.Diagnostics.AddError("Cannot generate a password", err.Error())
			return
		}
		b[i] = chars[n.Int64()]
	}
	m.Result = types.StringValue(string(b))
	e.generated.add(string(b))
	resp.Diagnostics.Append(resp.Result.Set(ctx, &m)...)
}
