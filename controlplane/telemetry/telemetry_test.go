package telemetry

import (
	"path/filepath"
	"slices"
	"testing"
	"time"

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
	tags := func(ps []Problem) (out []string) {
		for _, p := range ps {
			out = append(out, p.Tag)
		}
		return out
	}
	if got := tags(c.Problems("Sub-A", now.Add(-25*time.Hour), 10)); !slices.Equal(got, []string{"a1", "a2", ""}) {
		t.Errorf("problems of sub-a: %q, want a1, a2 and the day-old one", got)
	}
	if got := tags(c.Problems("sub-a", now.Add(-time.Hour), 10)); len(got) != 2 {
		t.Errorf("problems of sub-a in the last hour: %q, want a1, a2", got)
	}
	if got := tags(c.Problems("", now.Add(-time.Hour), 2)); !slices.Equal(got, []string{"b1", "a1"}) {
		t.Errorf("problems of everyone, 2 newest: %q, want b1, a1", got)
	}
	if n := len(c.ExecutionsPerMinute("", now, 10*Minutes)); n != Minutes {
		t.Errorf("%d minutes, want at most %d", n, Minutes)
	}
}
