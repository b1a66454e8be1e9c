package provider

import (
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

func TestKeepLists(t *testing.T) {
	ints := func(vs ...int64) types.List {
		elems := make([]attr.Value, len(vs))
		for i, v := range vs {
			elems[i] = types.Int64Value(v)
		}
		return types.ListValueMust(types.Int64Type, elems)
	}
	strs := func(vs ...string) types.List {
		elems := make([]attr.Value, len(vs))
		for i, v := range vs {
			elems[i] = types.StringValue(v)
		}
		return types.ListValueMust(types.StringType, elems)
	}
	for _, tc := range []struct {
		name      string
		got, want types.List
	}{
		{"same numbers in another order: the prior list", keepIntList(ints(22, 10), []int{10, 22}, false), ints(22, 10)},
		{"other numbers: the answer", keepIntList(ints(22, 10), []int{10, 23}, false), ints(10, 23)},
		{"unset stays unset", keepIntList(types.ListNull(types.Int64Type), []int{5}, false), types.ListNull(types.Int64Type)},
		{"imported: the answer", keepIntList(types.ListNull(types.Int64Type), []int{5}, true), ints(5)},
		{"empty answer: null", keepIntList(ints(5), nil, false), types.ListNull(types.Int64Type)},
		{"empty prior and answer: the prior list", keepIntList(ints(), nil, false), ints()},
		{"same days in another case and order: the prior list", keepFoldList(strs("friday", "MONDAY"), []string{"Monday", "Friday"}, false), strs("friday", "MONDAY")},
		{"other days: the answer", keepFoldList(strs("friday"), []string{"Monday"}, false), strs("Monday")},
		{"an unknown prior element: the answer", keepFoldList(types.ListValueMust(types.StringType, []attr.Value{types.StringUnknown()}), []string{"Monday"}, false), strs("Monday")},
	} {
		if !tc.got.Equal(tc.want) {
			t.Errorf("%s: got %s, want %s", tc.name, tc.got, tc.want)
		}
	}
}
