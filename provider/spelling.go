package provider

import (
	"cmp"
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
//
// Enums and durations are values of their own types (semantic.go: enumType, durationType), whose
// semantic equality the framework applies too; what is left here are the equalities that need
// more than the two values (an instant read in the job's zone) or are not the user's spelling
// of an enum (ARM names, lists and maps compared as sets).

// sameString is exact equality.
func sameString(a, b string) bool { return a == b }

// sameFold is case-insensitive equality: enums (enumType) and ARM names.
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
	return keepList(prior, api, fresh, types.Int64Type,
		func(e attr.Value) (int, bool) {
			v, ok := e.(types.Int64)
			return int(v.ValueInt64()), ok && !v.IsNull() && !v.IsUnknown()
		},
		func(v int) attr.Value { return types.Int64Value(int64(v)) },
		func(v int) int { return v })
}

// keepFoldList keeps the prior list when it holds the same strings as the answer,
// case-insensitively and in any order.
func keepFoldList(prior types.List, api []string, fresh bool) types.List {
	return keepList(prior, api, fresh, types.StringType,
		func(e attr.Value) (string, bool) {
			v, ok := e.(types.String)
			return v.ValueString(), ok && !v.IsNull() && !v.IsUnknown()
		},
		func(v string) attr.Value { return types.StringValue(v) },
		strings.ToLower)
}

// keepList keeps the prior list when its elements, compared by key, are those of the answer in
// any order; else it takes the answer (null when the answer is empty, unless the prior list is
// empty too). elem reads a prior element (false: null, unknown or of another type) and value
// makes an element of the answer.
func keepList[T cmp.Ordered](prior types.List, api []T, fresh bool, elemType attr.Type,
	elem func(attr.Value) (T, bool), value func(T) attr.Value, key func(T) T) types.List {
	if !fresh && prior.IsNull() {
		return prior
	}
	if len(api) == 0 {
		if !prior.IsNull() && !prior.IsUnknown() && len(prior.Elements()) == 0 {
			return prior
		}
		return types.ListNull(elemType)
	}
	if !prior.IsNull() && !prior.IsUnknown() {
		var p []T
		for _, e := range prior.Elements() {
			v, ok := elem(e)
			if !ok {
				p = nil
				break
			}
			p = append(p, key(v))
		}
		a := make([]T, len(api))
		for i, v := range api {
			a[i] = key(v)
		}
		slices.Sort(p)
		slices.Sort(a)
		if p != nil && slices.Equal(p, a) {
			return prior
		}
	}
	elems := make([]attr.Value, len(api))
	for i, v := range api {
		elems[i] = value(v)
	}
	return types.ListValueMust(elemType, elems)
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

// stringish is a string value of any string type (types.String, enumValue, durationValue).
type stringish interface {
	IsNull() bool
	IsUnknown() bool
	ValueString() string
}

// str/intPtr turn known, non-null values into wire values ("" and nil for null or unknown).
func str(v stringish) string {
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
