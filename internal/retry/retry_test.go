package retry

import (
	"reflect"
	"testing"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"
)

func intp(i int) *int { return &i }

func TestParseDefaults(t *testing.T) {
	want := Policy{Type: Fixed, Interval: 30 * time.Second, Count: 4}
	for name, p := range map[string]*wire.RetryPolicy{
		"nil":          nil,
		"empty":        {},
		"fixed":        {RetryType: "fixed"},
		"FIXED, empty": {RetryType: "FIXED", RetryInterval: ""},
	} {
		got, ps := Parse("action.retryPolicy", p)
		if ps != nil || got != want {
			t.Errorf("%s: Parse = %+v %v, want %+v", name, got, ps, want)
		}
	}
}

func TestParseValues(t *testing.T) {
	cases := []struct {
		p    wire.RetryPolicy
		want Policy
	}{
		{wire.RetryPolicy{RetryType: "none"}, Policy{Type: None}},
		{wire.RetryPolicy{RetryType: "None", RetryInterval: "PT1M", RetryCount: intp(3)}, Policy{Type: None}},
		{wire.RetryPolicy{RetryType: "Fixed", RetryInterval: "PT15S", RetryCount: intp(0)}, Policy{Fixed, 15 * time.Second, 0}},
		{wire.RetryPolicy{RetryInterval: "PT1M", RetryCount: intp(20)}, Policy{Fixed, time.Minute, 20}},
		{wire.RetryPolicy{RetryInterval: "P1D"}, Policy{Fixed, 24 * time.Hour, 4}},
		{wire.RetryPolicy{RetryInterval: "P18M"}, Policy{Fixed, 540 * 24 * time.Hour, 4}},
		{wire.RetryPolicy{RetryInterval: "P1Y"}, Policy{Fixed, 365 * 24 * time.Hour, 4}},
		{wire.RetryPolicy{RetryInterval: "P1W"}, Policy{Fixed, 7 * 24 * time.Hour, 4}},
		{wire.RetryPolicy{RetryInterval: "P1DT2H30M"}, Policy{Fixed, 26*time.Hour + 30*time.Minute, 4}},
		{wire.RetryPolicy{RetryInterval: "PT0.5M"}, Policy{Fixed, 30 * time.Second, 4}},
		{wire.RetryPolicy{RetryInterval: "pt45s"}, Policy{Fixed, 45 * time.Second, 4}},
		{wire.RetryPolicy{RetryInterval: "00:00:30"}, Policy{Fixed, 30 * time.Second, 4}},
		{wire.RetryPolicy{RetryInterval: "01:02:03"}, Policy{Fixed, time.Hour + 2*time.Minute + 3*time.Second, 4}},
		{wire.RetryPolicy{RetryInterval: "2.00:00:00"}, Policy{Fixed, 48 * time.Hour, 4}},
		{wire.RetryPolicy{RetryInterval: "00:00:15.5"}, Policy{Fixed, 15500 * time.Millisecond, 4}},
	}
	for _, c := range cases {
		got, ps := Parse("action.retryPolicy", &c.p)
		if ps != nil || got != c.want {
			t.Errorf("Parse(%+v) = %+v %v, want %+v", c.p, got, ps, c.want)
		}
	}
}

func TestParseProblems(t *testing.T) {
	cases := []struct {
		p    wire.RetryPolicy
		want wire.Problems
	}{
		{wire.RetryPolicy{RetryType: "exponential"}, wire.Problems{{Path: "action.retryPolicy.retryType", Message: `"exponential" is not one of None, Fixed`}}},
		{wire.RetryPolicy{RetryInterval: "PT14S"}, wire.Problems{{Path: "action.retryPolicy.retryInterval", Message: `"PT14S" is 14s, below the minimum of 15s`}}},
		{wire.RetryPolicy{RetryInterval: "00:00:10"}, wire.Problems{{Path: "action.retryPolicy.retryInterval", Message: `"00:00:10" is 10s, below the minimum of 15s`}}},
		{wire.RetryPolicy{RetryInterval: "P19M"}, wire.Problems{{Path: "action.retryPolicy.retryInterval", Message: `"P19M" is 13680h0m0s, above the maximum of 18 months (540 days)`}}},
		{wire.RetryPolicy{RetryInterval: "P541D"}, wire.Problems{{Path: "action.retryPolicy.retryInterval", Message: `"P541D" is 12984h0m0s, above the maximum of 18 months (540 days)`}}},
		{wire.RetryPolicy{RetryCount: intp(21)}, wire.Problems{{Path: "action.retryPolicy.retryCount", Message: "21 is outside 0..20"}}},
		{wire.RetryPolicy{RetryCount: intp(-1)}, wire.Problems{{Path: "action.retryPolicy.retryCount", Message: "-1 is outside 0..20"}}},
		{wire.RetryPolicy{RetryType: "sometimes", RetryInterval: "soon", RetryCount: intp(99)}, wire.Problems{
			{Path: "action.retryPolicy.retryType", Message: `"sometimes" is not one of None, Fixed`},
			{Path: "action.retryPolicy.retryInterval", Message: `"soon" is not an ISO 8601 duration (such as PT30S, PT1M, P1D) or hh:mm:ss`},
			{Path: "action.retryPolicy.retryCount", Message: "99 is outside 0..20"},
		}},
	}
	for _, c := range cases {
		got, ps := Parse("action.retryPolicy", &c.p)
		if !reflect.DeepEqual(ps, c.want) || got != (Policy{}) {
			t.Errorf("Parse(%+v) = %+v\n%v\nwant\n%v", c.p, got, ps, c.want)
		}
	}
}

func TestParseIntervalRejects(t *testing.T) {
	for _, s := range []string{"P", "PT", "P1H", "PT1D", "P1.5DT1H", "PTS", "30", "30s", "1:2", "24:00:00", "00:60:00", "00:00:60", "00:0:30", "x.00:00:30", "P1DT", "P-1D", "00:00:3x"} {
		if d, err := ParseInterval(s); err == nil {
			t.Errorf("ParseInterval(%q) = %v, want an error", s, d)
		}
	}
}
