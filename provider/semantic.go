package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// Values the API holds in another spelling than the configuration are the same value when they
// mean the same: an enum in any case ("week" is "Week"), a duration in any form ("00:01:00" is
// "PT1M"). The attributes holding them have a custom type whose StringSemanticEquals says so:
// the framework then keeps the spelling of the plan or the state when the daemon answers in its
// own (after create, update and read), fromWire does the same (keepSemantic), and samePlan keeps
// the state's spelling when the configuration writes the same value another way (after an
// import, or a change made through the API).

// enumType is the type of an enum attribute (type, method, frequency, ...): equal in any case.
type enumType struct{ basetypes.StringType }

// enumValue is a value of enumType.
type enumValue struct{ basetypes.StringValue }

// durationType is the type of a duration attribute (timeout, retry_interval, ...): equal however
// written (ISO 8601 or [d.]hh:mm:ss).
type durationType struct{ basetypes.StringType }

// durationValue is a value of durationType.
type durationValue struct{ basetypes.StringValue }

var (
	_ basetypes.StringTypable                    = enumType{}
	_ basetypes.StringValuableWithSemanticEquals = enumValue{}
	_ basetypes.StringTypable                    = durationType{}
	_ basetypes.StringValuableWithSemanticEquals = durationValue{}
)

func (t enumType) Equal(o attr.Type) bool { _, ok := o.(enumType); return ok }
func (t enumType) String() string         { return "provider.enumType" }
func (t enumType) ValueType(context.Context) attr.Value {
	return enumValue{}
}

func (t enumType) ValueFromString(_ context.Context, v basetypes.StringValue) (basetypes.StringValuable, diag.Diagnostics) {
	return enumValue{v}, nil
}

func (t enumType) ValueFromTerraform(ctx context.Context, in tftypes.Value) (attr.Value, error) {
	v, err := fromTerraform(ctx, in)
	return enumValue{v}, err
}

func (v enumValue) Type(context.Context) attr.Type { return enumType{} }

func (v enumValue) Equal(o attr.Value) bool {
	ov, ok := o.(enumValue)
	return ok && v.StringValue.Equal(ov.StringValue)
}

func (v enumValue) StringSemanticEquals(_ context.Context, o basetypes.StringValuable) (bool, diag.Diagnostics) {
	return semanticEquals(v.StringValue, o, sameFold)
}

func (t durationType) Equal(o attr.Type) bool { _, ok := o.(durationType); return ok }
func (t durationType) String() string         { return "provider.durationType" }
func (t durationType) ValueType(context.Context) attr.Value {
	return durationValue{}
}

func (t durationType) ValueFromString(_ context.Context, v basetypes.StringValue) (basetypes.StringValuable, diag.Diagnostics) {
	return durationValue{v}, nil
}

func (t durationType) ValueFromTerraform(ctx context.Context, in tftypes.Value) (attr.Value, error) {
	v, err := fromTerraform(ctx, in)
	return durationValue{v}, err
}

func (v durationValue) Type(context.Context) attr.Type { return durationType{} }

func (v durationValue) Equal(o attr.Value) bool {
	ov, ok := o.(durationValue)
	return ok && v.StringValue.Equal(ov.StringValue)
}

func (v durationValue) StringSemanticEquals(_ context.Context, o basetypes.StringValuable) (bool, diag.Diagnostics) {
	return semanticEquals(v.StringValue, o, sameDuration)
}

// fromTerraform reads a string value.
func fromTerraform(ctx context.Context, in tftypes.Value) (basetypes.StringValue, error) {
	v, err := basetypes.StringType{}.ValueFromTerraform(ctx, in)
	if err != nil {
		return basetypes.StringValue{}, fmt.Errorf("read a string: %w", err)
	}
	s, ok := v.(basetypes.StringValue)
	if !ok {
		return basetypes.StringValue{}, fmt.Errorf("read a string: got %T", v)
	}
	return s, nil
}

// semanticEquals reports whether v and o are both known and eq.
func semanticEquals(v basetypes.StringValue, o basetypes.StringValuable, eq func(a, b string) bool) (bool, diag.Diagnostics) {
	os, diags := o.ToStringValue(context.Background())
	if diags.HasError() || !known(v) || !known(os) {
		return false, diags
	}
	return eq(v.ValueString(), os.ValueString()), diags
}

// enumOf and durationOf make known values; enumNull and durationNull null ones.
func enumOf(s string) enumValue         { return enumValue{types.StringValue(s)} }
func durationOf(s string) durationValue { return durationValue{types.StringValue(s)} }
func enumNull() enumValue               { return enumValue{types.StringNull()} }

// keepEnum and keepDuration are keepString for those types: the prior spelling is kept when it
// is the same value as the answer.
func keepEnum(prior enumValue, api string, fresh bool) enumValue {
	return enumValue{keepSemantic(prior, api, fresh)}
}

func keepDuration(prior durationValue, api string, fresh bool) durationValue {
	return durationValue{keepSemantic(prior, api, fresh)}
}

// keepSemantic is keepString with the equality of prior's type.
func keepSemantic(prior basetypes.StringValuableWithSemanticEquals, api string, fresh bool) types.String {
	p, _ := prior.ToStringValue(context.Background())
	return keepString(p, api, fresh, func(a, b string) bool {
		same, _ := prior.StringSemanticEquals(context.Background(), types.StringValue(b))
		return same
	})
}

// samePlan keeps the state's value when the configuration writes the same value another way, by
// the equality of the attribute's type t; Terraform accepts the prior value of a non-computed
// attribute as equivalent to the configuration.
type samePlan struct{ t basetypes.StringTypable }

var _ planmodifier.String = samePlan{}

func (m samePlan) Description(context.Context) string {
	return "plans no change for the same value written another way (" + m.t.String() + ")"
}

func (m samePlan) MarkdownDescription(ctx context.Context) string { return m.Description(ctx) }

func (m samePlan) PlanModifyString(ctx context.Context, req planmodifier.StringRequest, resp *planmodifier.StringResponse) {
	if !known(req.StateValue) || !known(req.ConfigValue) || req.StateValue.Equal(req.ConfigValue) {
		return
	}
	config, diags := m.t.ValueFromString(ctx, req.ConfigValue)
	if diags.HasError() {
		return
	}
	c, ok := config.(basetypes.StringValuableWithSemanticEquals)
	if !ok {
		return
	}
	if same, _ := c.StringSemanticEquals(ctx, req.StateValue); same {
		resp.PlanValue = req.StateValue
	}
}
