package replica_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/replica"
)

// TestGauges: the replica's two gauges as a scrape shows them, the leader gauge following Set,
// and a second registration refused with an error naming what failed.
func TestGauges(t *testing.T) {
	reg := prometheus.NewRegistry()
	leader, err := replica.Gauges(reg, "r-7")
	if err != nil {
		t.Fatal(err)
	}
	want := func(leading float64) {
		t.Helper()
		mfs, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, mf := range mfs {
			for _, m := range mf.GetMetric() {
				line := mf.GetName()
				for _, l := range m.GetLabel() {
					line += " " + l.GetName() + "=" + l.GetValue()
				}
				got = append(got, fmt.Sprintf("%s %s: %v", mf.GetType(), line, m.GetGauge().GetValue()))
			}
		}
		exp := []string{fmt.Sprintf("GAUGE scheduler_leader: %v", leading), "GAUGE scheduler_replica_info replica=r-7: 1"}
		if !slices.Equal(got, exp) {
			t.Fatalf("gathered %q, want %q", got, exp)
		}
	}
	want(0)
	leader.Set(1)
	want(1)
	if _, err := replica.Gauges(reg, "r-7"); err == nil || !strings.HasPrefix(err.Error(), "registering the replica gauges: ") {
		t.Fatalf("second registration: %v", err)
	}
}
