package provider

import (
	"testing"
)

func TestSameDuration(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want bool
	}{
		{"PT1M", "00:01:00", true},
		{"pt30s", "PT30S", true},
		{"P1D", "1.00:00:00", true},
		{"PT90S", "PT1M30S", true},
		{"P1M", "P30D", false},
		{"PT1M", "PT2M", false},
		{"nonsense", "PT1M", false},
	} {
		if got := sameDuration(tc.a, tc.b); got != tc.want {
			t.Errorf("sameDuration(%q, %q) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}

// The daemon answers in Azure's spelling, in RFC 3339 in the rule's zone, with defaults and
// without secrets: state keeps what the user wrote when it means the same.
