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
		{wire.RetryPolicy{RetryType: "Fixed", RetryInterval: "PT15S", RetryCount: intp(0)}, Policy{Type: Fixed, Interval: 15 * time.Second, Count: 0}},
		{wire.RetryPolicy{RetryInterval: "PT1M", RetryCount: intp(20)}, Policy{Type: Fixed, Interval: time.Minute, Count: 20}},
		{wire.RetryPolicy{RetryInterval: "P1D"}, Policy{Type: Fixed, Interval: 24 * time.Hour, Count: 4}},
		{wire.RetryPolicy{RetryInterval: "P18M"}, Policy{Type: Fixed, Interval: 540 * 24 * time.Hour, Count: 4}},
		{wire.RetryPolicy{RetryInterval: "P1Y"}, Policy{Type: Fixed, Interval: 365 * 24 * time.Hour, Count: 4}},
		{wire.RetryPolicy{RetryInterval: "P1W"}, Policy{Type: Fixed, Interval: 7 * 24 * time.Hour, Count: 4}},
		{wire.RetryPolicy{RetryInterval: "P1DT2H30M"}, Policy{Type: Fixed, Interval: 26*time.Hour + 30*time.Minute, Count: 4}},
		{wire.RetryPolicy{RetryInterval: "PT0.5M"}, Policy{Type: Fixed, Interval: 30 * time.Second, Count: 4}},
		{wire.RetryPolicy{RetryInterval: "pt45s"}, Policy{Type: Fixed, Interval: 45 * time.Second, Count: 4}},
		{wire.RetryPolicy{RetryInterval: "00:00:30"}, Policy{Type: Fixed, Interval: 30 * time.Second, Count: 4}},
		{wire.RetryPolicy{RetryInterval: "01:02:03"}, Policy{Type: Fixed, Interval: time.Hour + 2*time.Minute + 3*time.Second, Count: 4}},
		{wire.RetryPolicy{RetryInterval: "2.00:00:00"}, Policy{Type: Fixed, Interval: 48 * time.Hour, Count: 4}},
		{wire.RetryPolicy{RetryType: "exponential"}, Policy{Type: Exponential, Interval: 30 * time.Second, Count: 4, MaxInterval: time.Hour}},
		{wire.RetryPolicy{RetryType: "Exponential", RetryInterval: "P1D"}, Policy{Type: Exponential, Interval: 24 * time.Hour, Count: 4, MaxInterval: 24 * time.Hour}},
		{wire.RetryPolicy{RetryType: "Exponential", RetryInterval: "PT15S", RetryCount: intp(9), MaxRetryInterval: "PT15S"}, Policy{Type: Exponential, Interval: 15 * time.Second, Count: 9, MaxInterval: 15 * time.Second}},
		{wire.RetryPolicy{RetryType: "Exponential", MaxRetryInterval: "PT10M"}, Policy{Type: Exponential, Interval: 30 * time.Second, Count: 4, MaxInterval: 10 * time.Minute}},
		{wire.RetryPolicy{RetryInterval: "00:00:15.5"}, Policy{Type: Fixed, Interval: 15500 * time.Millisecond, Count: 4}},
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
		{wire.RetryPolicy{RetryType: "backoff"}, wire.Problems{{Path: "action.retryPolicy.retryType", Message: `"backoff" is not one of None, Fixed, Exponential`}}},
		{wire.RetryPolicy{RetryType: "Fixed", MaxRetryInterval: "PT1H"}, wire.Problems{{Path: "action.retryPolicy.maxRetryInterval", Message: "is allowed only with retryType Exponential"}}},
		{wire.RetryPolicy{MaxRetryInterval: "PT1H"}, wire.Problems{{Path: "action.retryPolicy.maxRetryInterval", Message: "is allowed only with retryType Exponential"}}},
		{wire.RetryPolicy{RetryType: "Exponential", RetryInterval: "PT2M", MaxRetryInterval: "PT1M"}, wire.Problems{{Path: "action.retryPolicy.maxRetryInterval", Message: `"PT1M" is 1m0s, below the retryInterval of 2m0s`}}},
		{wire.RetryPolicy{RetryType: "Exponential", MaxRetryInterval: "PT20S"}, wire.Problems{{Path: "action.retryPolicy.maxRetryInterval", Message: `"PT20S" is 20s, below the retryInterval of 30s`}}},
		{wire.RetryPolicy{RetryType: "Exponential", MaxRetryInterval: "P541D"}, wire.Problems{{Path: "action.retryPolicy.maxRetryInterval", Message: `"P541D" is 12984h0m0s, above the maximum of 18 months (540 days)`}}},
		{wire.RetryPolicy{RetryType: "Exponential", MaxRetryInterval: "later"}, wire.Problems{{Path: "action.retryPolicy.maxRetryInterval", Message: `"later" is not an ISO 8601 duration (such as PT30S, PT1M, P1D) or hh:mm:ss`}}},
		{wire.RetryPolicy{RetryInterval: "PT14S"}, wire.Problems{{Path: "action.retryPolicy.retryInterval", Message: `"PT14S" is 14s, below the minimum of 15s`}}},
		{wire.RetryPolicy{RetryInterval: "00:00:10"}, wire.Problems{{Path: "action.retryPolicy.retryInterval", Message: `"00:00:10" is 10s, below the minimum of 15s`}}},
		{wire.RetryPolicy{RetryInterval: "P19M"}, wire.Problems{{Path: "action.retryPolicy.retryInterval", Message: `"P19M" is 13680h0m0s, above the maximum of 18 months (540 days)`}}},
		{wire.RetryPolicy{RetryInterval: "P541D"}, wire.Problems{{Path: "action.retryPolicy.retryInterval", Message: `"P541D" is 12984h0m0s, above the maximum of 18 months (540 days)`}}},
		{wire.RetryPolicy{RetryCount: intp(21)}, wire.Problems{{Path: "action.retryPolicy.retryCount", Message: "21 is outside 0..20"}}},
		{wire.RetryPolicy{RetryCount: intp(-1)}, wire.Problems{{Path: "action.retryPolicy.retryCount", Message: "-1 is outside 0..20"}}},
		{wire.RetryPolicy{RetryType: "sometimes", RetryInterval: "soon", RetryCount: intp(99)}, wire.Problems{
			{Path: "action.retryPolicy.retryType", Message: `"sometimes" is not one of None, Fixed, Exponential`},
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
