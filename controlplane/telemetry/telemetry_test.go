package telemetry

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/dispatch"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store/sqlite"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/clock"
)

// TestExecutionsPerMinuteBySubscription: the per-minute counts of one subscription hold only
// its executions (names compared as the API compares them), the admin's view holds all, and a
// minute more than 24 hours old is gone.
func TestExecutionsPerMinuteBySubscription(t *testing.T) {
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	now := time.Date(2026, 3, 1, 12, 0, 30, 0, time.UTC)
	c, err := New(Config{Store: st, Clock: clock.NewFake(now)})
	if err != nil {
		t.Fatal(err)
	}
	job := func(sub string) store.JobKey {
		return store.JobKey{CollectionKey: store.CollectionKey{Subscription: sub, ResourceGroup: "rg", Name: "c"}, Name: "j"}
	}
	for _, o := range []dispatch.Outcome{
		{Job: job("sub-a"), Outcome: dispatch.OutcomeCompleted, End: now.Add(-10 * time.Second)},
		{Job: job("SUB-A"), Tag: "a1", Outcome: dispatch.OutcomeFaulted, End: now.Add(-20 * time.Second)},
		{Job: job("sub-a"), Tag: "a2", Outcome: dispatch.OutcomeFailed, End: now.Add(-time.Minute)},
		{Job: job("sub-b"), Tag: "b1", Outcome: dispatch.OutcomeFaulted, End: now},
		{Job: job("sub-a"), Outcome: dispatch.OutcomeFaulted, End: now.Add(-24 * time.Hour)}, // its slot is reused
	} {
		c.Observe(o)
	}
	a := c.ExecutionsPerMinute("sub-a", now, 3)
	want := []PerMinute{
		{Start: time.Date(2026, 3, 1, 11, 58, 0, 0, time.UTC)},
		{Start: time.Date(2026, 3, 1, 11, 59, 0, 0, time.UTC), Failed: 1},
		{Start: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC), Completed: 1, Faulted: 1},
	}
	if len(a) != 3 || a[0] != want[0] || a[1] != want[1] || a[2] != want[2] {
		t.Errorf("sub-a: %+v, want %+v", a, want)
	}
	all := c.ExecutionsPerMinute("", now, 1)
	if all[0].Completed != 1 || all[0].Faulted != 2 || all[0].Failed != 0 {
		t.Errorf("every subscription: %+v, want 1 completed, 2 faulted", all[0])
	}
	if b := c.ExecutionsPerMinute("sub-c", now, 2); b[0].Completed+b[0].Failed+b[0].Faulted+b[1].Completed+b[1].Failed+b[1].Faulted != 0 {
		t.Errorf("a subscription without executions: %+v", b)
	}
	if n := len(c.ExecutionsPerMinute("", now, 10*Minutes)); n != Minutes {
		t.Errorf("%d minutes, want at most %d", n, Minutes)
	}
}

// TestCoalescedAndPerJobSeries: the occurrences coalesced into finished executions are counted;
// a job's first outcome creates its completed series (failed and faulted appear once they
// happen); with PerJob off there is none; the daemon's registry never holds them.
func TestCoalescedAndPerJobSeries(t *testing.T) {
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	for _, perJob := range []bool{true, false} {
		c, err := New(Config{Store: st, PerJob: perJob})
		if err != nil {
			t.Fatal(err)
		}
		reg := prometheus.NewRegistry()
		if err := c.Register(reg); err != nil {
			t.Fatal(err)
		}
		k := store.JobKey{CollectionKey: store.CollectionKey{Subscription: "s", ResourceGroup: "rg", Name: "c"}, Name: "j"}
		c.Observe(dispatch.Outcome{Job: k, Outcome: dispatch.OutcomeCompleted, Missed: 10, End: time.Unix(1000, 0)})
		c.Observe(dispatch.Outcome{Job: k, Outcome: dispatch.OutcomeCompleted, Missed: 2, End: time.Unix(2000, 0)})
		if got := value(t, c.missed); got != 12 {
			t.Errorf("PerJob %v: coalesced %v, want 12", perJob, got)
		}
		all := prometheus.Gatherers{reg, c.PerJobGatherer()}
		want := 0
		if perJob {
			want = 1
			if got := gathered(t, all, MetricJobExecutions, "s", "c", "j", "completed"); got != 2 {
				t.Errorf("completed executions of j: %v, want 2", got)
			}
			if got := gathered(t, all, MetricJobLastSuccess, "s", "c", "j"); got != 2000 {
				t.Errorf("last success of j: %v, want 2000", got)
			}
		}
		if n, err := seriesOf(all, MetricJobExecutions); err != nil || n != want {
			t.Errorf("PerJob %v: %d series of %s (%v), want %d", perJob, n, MetricJobExecutions, err, want)
		}
		if n, err := seriesOf(reg, MetricJobExecutions); err != nil || n != 0 {
			t.Errorf("PerJob %v: %d series of %s in the daemon's registry (%v), want 0", perJob, n, MetricJobExecutions, err)
		}
	}
}

// value reads a counter's or a gauge's value.
func value(t *testing.T, m prometheus.Metric) float64 {
	t.Helper()
	var d dto.Metric
	if err := m.Write(&d); err != nil {
		t.Fatal(err)
	}
	if d.Counter != nil {
		return d.GetCounter().GetValue()
	}
	return d.GetGauge().GetValue()
}

// gathered returns the value of the series of a metric in reg with these label values
// (subscription, collection, job and, for the executions, outcome); it fails without one.
func gathered(t *testing.T, reg prometheus.Gatherer, name string, labelValues ...string) float64 {
	t.Helper()
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	names := []string{"subscription", "collection", "job", "outcome"}
	for _, f := range fams {
		if f.GetName() != name {
			continue
		}
	next:
		for _, m := range f.GetMetric() {
			if len(m.GetLabel()) != len(labelValues) {
				continue
			}
			for i, v := range labelValues {
				found := false
				for _, l := range m.GetLabel() {
					if l.GetName() == names[i] && l.GetValue() == v {
						found = true
					}
				}
				if !found {
					continue next
				}
			}
			if m.Counter != nil {
				return m.GetCounter().GetValue()
			}
			return m.GetGauge().GetValue()
		}
	}
	t.Fatalf("no series of %s with %v", name, labelValues)
	return 0
}

// seriesOf counts the series of a metric in reg.
func seriesOf(reg prometheus.Gatherer, name string) (int, error) {
	fams, err := reg.Gather()
	if err != nil {
		return 0, err
	}
	for _, f := range fams {
		if f.GetName() == name {
			return len(f.GetMetric()), nil
		}
	}
	return 0, nil
}

// TestLookedUpSuccessKeepsANewerObserved: a job whose first execution failed has no
// last-success series until Run's lookup sets it; a success observed afterwards replaces it,
// and a lookup answered later with an older time does not overwrite that success.
func TestLookedUpSuccessKeepsANewerObserved(t *testing.T) {
	c, reg := registered(t, true)
	k := store.JobKey{CollectionKey: store.CollectionKey{Subscription: "s", ResourceGroup: "rg", Name: "c"}, Name: "j"}
	all := prometheus.Gatherers{reg, c.PerJobGatherer()}
	c.Observe(dispatch.Outcome{Job: k, Outcome: dispatch.OutcomeFailed, End: time.Unix(3000, 0)})
	if n, err := seriesOf(all, MetricJobLastSuccess); err != nil || n != 0 {
		t.Fatalf("%d last-success series before the lookup (%v), want 0", n, err)
	}
	if got, ok := c.seeds.Pop(); !ok || got != k {
		t.Fatalf("lookup queued for %v, want %v", got, k)
	}
	c.mu.Lock()
	c.seedLastSuccess(k, time.Unix(1000, 0))
	c.mu.Unlock()
	if got := gathered(t, all, MetricJobLastSuccess, "s", "c", "j"); got != 1000 {
		t.Errorf("last success after the lookup: %v, want 1000", got)
	}
	c.Observe(dispatch.Outcome{Job: k, Outcome: dispatch.OutcomeCompleted, End: time.Unix(4000, 0)})
	c.mu.Lock()
	c.seedLastSuccess(k, time.Unix(2000, 0))
	c.mu.Unlock()
	if got := gathered(t, all, MetricJobLastSuccess, "s", "c", "j"); got != 4000 {
		t.Errorf("last success after an older lookup: %v, want the observed 4000", got)
	}
}
