package provider

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/schedulerhq/terraform-provider-scheduler/internal/recurrence"
)

// This file decides what state holds when the API answers: the daemon returns enums in Azure's
// spelling, times in RFC 3339 in the rule's zone, defaults the user never wrote, and never the
// secrets. State keeps the user's spelling when it means the same thing as the answer (so there
// is no perpetual diff), keeps unset optional attributes unset (so server defaults are no diff),
// and takes the answer otherwise (so drift shows). fresh means there is no prior value at all
// (import): then the answer is taken as it is.

// sameString is exact equality.
func sameString(a, b string) bool { return a == b }

// sameFold is case-insensitive equality, for enums.
var sameFold = strings.EqualFold

// sameInstant returns an equality on ISO 8601 times: both denote the same instant, reading a time
// without offset as wall clock in loc.
func sameInstant(loc *time.Location) func(a, b string) bool {
	return func(a, b string) bool {
		if a == b {
			return true
		}
		ta, err := recurrence.ParseTime(a, loc)
		if err != nil {
			return false
		}
		tb, err := recurrence.ParseTime(b, loc)
		if err != nil {
			return false
		}
		return ta.Equal(tb)
	}
}

func keepString(prior types.String, api string, fresh bool, eq func(a, b string) bool) types.String {
	if !fresh && prior.IsNull() {
		return prior
	}
	if api == "" { // absent from the answer: an empty string written by the user stays
		if !prior.IsNull() && !prior.IsUnknown() && prior.ValueString() == "" {
			return prior
		}
		return types.StringNull()
	}
	if !prior.IsNull() && !prior.IsUnknown() && eq(prior.ValueString(), api) {
		return prior
	}
	return types.StringValue(api)
}

func keepInt(prior types.Int64, api *int, fresh bool) types.Int64 {
	if !fresh && prior.IsNull() {
		return prior
	}
	if api == nil {
		return types.Int64Null()
	}
	return types.Int64Value(int64(*api))
}

// keepIntList keeps the prior list when it holds the same numbers as the answer in any order.
func keepIntList(prior types.List, api []int, fresh bool) types.List {
	if !fresh && prior.IsNull() {
		return prior
	}
	if len(api) == 0 {
		if !prior.IsNull() && !prior.IsUnknown() && len(prior.Elements()) == 0 {
			return prior
		}
		return types.ListNull(types.Int64Type)
	}
	if !prior.IsNull() && !prior.IsUnknown() {
		var p []int
		for _, e := range prior.Elements() {
			v, ok := e.(types.Int64)
			if !ok || v.IsNull() || v.IsUnknown() {
				p = nil
				break
			}
			p = append(p, int(v.ValueInt64()))
		}
		a := slices.Clone(api)
		slices.Sort(p)
		slices.Sort(a)
		if p != nil && slices.Equal(p, a) {
			return prior
		}
	}
	elems := make([]attr.Value, len(api))
	for i, v := range api {
		elems[i] = types.Int64Value(int64(v))
	}
	return types.ListValueMust(types.Int64Type, elems)
}

// keepFoldList keeps the prior list when it holds the same strings as the answer,
// case-insensitively and in any order.
func keepFoldList(prior types.List, api []string, fresh bool) types.List {
	if !fresh && prior.IsNull() {
		return prior
	}
	if len(api) == 0 {
		if !prior.IsNull() && !prior.IsUnknown() && len(prior.Elements()) == 0 {
			return prior
		}
		return types.ListNull(types.StringType)
	}
	if !prior.IsNull() && !prior.IsUnknown() {
		var p []string
		for _, e := range prior.Elements() {
			v, ok := e.(types.String)
			if !ok || v.IsNull() || v.IsUnknown() {
				p = nil
				break
			}
			p = append(p, strings.ToLower(v.ValueString()))
		}
		a := make([]string, len(api))
		for i, s := range api {
			a[i] = strings.ToLower(s)
		}
		slices.Sort(p)
		slices.Sort(a)
		if p != nil && slices.Equal(p, a) {
			return prior
		}
	}
	elems := make([]attr.Value, len(api))
	for i, v := range api {
		elems[i] = types.StringValue(v)
	}
	return types.ListValueMust(types.StringType, elems)
}

// keepStringMap keeps the prior map when it has the same entries as the answer, with keys
// compared case-insensitively (HTTP header names).
func keepStringMap(ctx context.Context, prior types.Map, api map[string]string, fresh bool) types.Map {
	if !fresh && prior.IsNull() {
		return prior
	}
	if len(api) == 0 {
		if !prior.IsNull() && !prior.IsUnknown() && len(prior.Elements()) == 0 {
			return prior
		}
		return types.MapNull(types.StringType)
	}
	if !prior.IsNull() && !prior.IsUnknown() {
		var p map[string]string
		if diags := prior.ElementsAs(ctx, &p, false); !diags.HasError() && len(p) == len(api) {
			same := true
			for k, v := range p {
				found := false
				for ak, av := range api {
					if strings.EqualFold(k, ak) && v == av {
						found = true
						break
					}
				}
				same = same && found
			}
			if same {
				return prior
			}
		}
	}
	m, _ := types.MapValueFrom(ctx, types.StringType, api)
	return m
}

// strPtr/intPtr turn known, non-null values into wire values ("" and nil for null or unknown).
func str(v types.String) string {
	if v.IsNull() || v.IsUnknown() {
		return ""
	}
	return v.ValueString()
}

func intPtr(v types.Int64) *int {
	if v.IsNull() || v.IsUnknown() {
		return nil
	}
	n := int(v.ValueInt64())
	return &n
}
