package jobstate_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/internal/jobstate"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/retry"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"
)

func ms(s string) time.Duration {
	d, err := time.ParseDuration(s)
	if err != nil {
		panic(err)
	}
	return d
}

// TestBackoff: an Exponential policy's delays double from the interval, are capped, and move by
// a jitter that is fixed by the tag and the retry number (the same on every replica).
func TestBackoff(t *testing.T) {
	exp := retry.Policy{Type: retry.Exponential, Interval: 30 * time.Second, Count: 10, MaxInterval: 10 * time.Minute}
	cases := []struct {
		p       retry.Policy
		tag     string
		retries int
		want    time.Duration
	}{
		// base 30s, 1m, 2m, 4m, 8m, then the 10m cap; each within ±20 % of its base
		{exp, "08585000000000000001", 0, ms("31.276s")},
		{exp, "08585000000000000001", 1, ms("1m0.469s")},
		{exp, "08585000000000000001", 2, ms("1m37.694s")},
		{exp, "08585000000000000001", 3, ms("4m9.191s")},
		{exp, "08585000000000000001", 4, ms("9m13.292s")},
		{exp, "08585000000000000001", 5, ms("9m40s")},
		{exp, "08585000000000000001", 6, ms("9m20.861s")},
		{exp, "08585000000000000002", 0, ms("32.556s")},
		{exp, "08585000000000000002", 2, ms("1m37.239s")},
		{exp, "08585000000000000002", 4, ms("9m7.379s")},
		// jitter above the cap is cut to the cap
		{exp, "08585000000000000002", 5, 10 * time.Minute},
		{exp, "08585000000000000002", 6, ms("8m37.884s")},
		// a huge retry number stays at the cap (no overflow)
		{exp, "08585000000000000002", 1000, ms("8m24.183s")},
		{retry.Policy{Type: retry.Fixed, Interval: 45 * time.Second, Count: 3}, "x", 2, 45 * time.Second},
		{retry.Policy{Type: retry.None}, "x", 0, 0},
	}
	for _, c := range cases {
		if got := jobstate.Backoff(c.p, c.tag, c.retries); got != c.want {
			t.Errorf("Backoff(%v, %s, %d) = %v, want %v", c.p.Type, c.tag, c.retries, got, c.want)
		}
	}
}

// TestBackoffJitterSpread: over many tags every delay stays within ±20 % of its base (and under the
// cap), the jitter uses most of that range, and it differs between retries of one tag.
func TestBackoffJitterSpread(t *testing.T) {
	p := retry.Policy{Type: retry.Exponential, Interval: time.Minute, Count: 20, MaxInterval: time.Hour}
	lo, hi := 2.0, 0.0
	same := 0
	for i := range 2000 {
		tag := fmt.Sprintf("0858%016d", i)
		prev := -1.0
		for r := range 4 {
			base := time.Minute << r
			f := float64(jobstate.Backoff(p, tag, r)) / float64(base)
			if f < 0.8 || f > 1.2 {
				t.Fatalf("tag %s retry %d: %v is %.3f of its base %v", tag, r, jobstate.Backoff(p, tag, r), f, base)
			}
			lo, hi = min(lo, f), max(hi, f)
			if prev >= 0 && f > prev-0.01 && f < prev+0.01 {
				same++
			}
			prev = f
		}
	}
	if lo > 0.81 || hi < 1.19 {
		t.Errorf("jitter spans %.3f..%.3f of the base, want about 0.8..1.2", lo, hi)
	}
	// Independent draws land within 0.01 of each other about 5 % of the time (300 of 6000).
	if same > 600 {
		t.Errorf("%d of 6000 consecutive retries of one tag have the same jitter", same)
	}
}

func TestOutcomeExponential(t *testing.T) {
	end := ts(t, "2026-01-01T00:00:10Z")
	p := retry.Policy{Type: retry.Exponential, Interval: 30 * time.Second, Count: 3, MaxInterval: 10 * time.Minute}
	tag := "08585000000000000001"
	cases := []struct {
		name string
		a    jobstate.Attempt
		want jobstate.Outcome
	}{
		{"first failure", jobstate.Attempt{Phase: jobstate.PhaseMain, Policy: p, Tag: tag},
			jobstate.Outcome{Result: jobstate.Retried, Next: end.Add(ms("31.276s")), Phase: jobstate.PhaseMain, Retries: 1}},
		{"third failure", jobstate.Attempt{Phase: jobstate.PhaseMain, Retries: 2, Policy: p, Tag: tag, HasErrorAction: true},
			jobstate.Outcome{Result: jobstate.Retried, Next: end.Add(ms("1m37.694s")), Phase: jobstate.PhaseMain, Retries: 3}},
		{"retries spent", jobstate.Attempt{Phase: jobstate.PhaseMain, Retries: 3, Policy: p, Tag: tag, HasErrorAction: true},
			jobstate.Outcome{Result: jobstate.ToErrorAction, Failure: true, Next: end, Phase: jobstate.PhaseError}},
		{"error action's retry", jobstate.Attempt{Phase: jobstate.PhaseError, Retries: 1, Policy: p, Tag: tag, HasErrorAction: true},
			jobstate.Outcome{Result: jobstate.Retried, Next: end.Add(ms("1m0.469s")), Phase: jobstate.PhaseError, Retries: 2}},
	}
	for _, c := range cases {
		c.a.End = end
		if got := c.a.Outcome(); got != c.want {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
}

func TestTimeout(t *testing.T) {
	job := &wire.JobAction{Timeout: "PT5S", ErrorAction: &wire.JobErrorAction{}}
	cases := []struct {
		name string
		a    *wire.JobErrorAction
		want time.Duration
	}{
		{"none", nil, 45 * time.Second},
		{"absent: the fallback", &wire.JobErrorAction{}, 45 * time.Second},
		{"the main action's body", job.Body(), 5 * time.Second},
		{"an error action without one", job.ErrorAction, 45 * time.Second},
		{"the error action's own", &wire.JobErrorAction{Timeout: "PT2M"}, 2 * time.Minute},
		{"invalid: the fallback", &wire.JobErrorAction{Timeout: "PT2H"}, 45 * time.Second},
	}
	for _, c := range cases {
		if got := jobstate.Timeout(c.a, 45*time.Second); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
	bad := []struct{ in, msg string }{
		{"PT0.5S", `"PT0.5S" is 500ms, outside PT1S..PT30M`},
		{"PT31M", `"PT31M" is 31m0s, outside PT1S..PT30M`},
		{"00:00:30", `"00:00:30" is not an ISO 8601 duration (such as PT30S, PT5M)`},
		{"soon", `"soon" is not an ISO 8601 duration (such as PT30S, PT5M)`},
	}
	for _, b := range bad {
		_, ps := jobstate.ParseTimeout("action.timeout", b.in)
		if len(ps) != 1 || ps[0].Path != "action.timeout" || ps[0].Message != b.msg {
			t.Errorf("ParseTimeout(%q) = %v, want %s", b.in, ps, b.msg)
		}
	}
	for in, want := range map[string]time.Duration{"PT1S": time.Second, "PT30M": 30 * time.Minute, "pt90s": 90 * time.Second} {
		if d, ps := jobstate.ParseTimeout("action.timeout", in); d != want || ps != nil {
			t.Errorf("ParseTimeout(%q) = %v %v, want %v", in, d, ps, want)
		}
	}
}
