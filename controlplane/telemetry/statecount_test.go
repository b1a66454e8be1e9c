package telemetry

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/dispatch"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store/sqlite"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/clock"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"
)

// Modes of countingStore's JobStateCount.
const (
	countPass  = iota // the SQLite store's count
	countFail         // an error at once
	countBlock        // blocks until its context ends (the count's timeout)
)

// countingStore is a SQLite store whose count of jobs by state can fail or block.
type countingStore struct {
	store.Driver
	mode  atomic.Int32
	calls atomic.Int32
}

func (s *countingStore) JobStateCount(ctx context.Context, p store.JobStateCountParams) ([]store.JobStateCount, error) {
	s.calls.Add(1)
	switch s.mode.Load() {
	case countFail:
		return nil, errors.New("the store is unreachable")
	case countBlock:
		<-ctx.Done()
		return nil, ctx.Err()
	}
	return s.Driver.JobStateCount(ctx, p)
}

// stateLines GETs /metrics over HTTP and returns its status and the sample lines of the
// scheduler_jobs families, of the coalesced counter and of the per-job executions, sorted.
func stateLines(t *testing.T, url string) (int, []string) {
	t.Helper()
	resp, err := http.Get(url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, MetricJobs) || strings.HasPrefix(l, MetricMissed) || strings.HasPrefix(l, MetricJobExecutions) {
			out = append(out, l)
		}
	}
	slices.Sort(out)
	return resp.StatusCode, out
}

// TestScrapeSurvivesAFailedJobCount: a count of jobs by state that fails or outlasts its
// timeout does not fail /metrics: every other metric is served (200), scheduler_jobs is left
// out until a count succeeded, then the last good count is served with its age; failures are
// counted, and a failed count is not retried within StateCacheTTL. Both exposition paths (per-job
// series written by the handler, and promhttp's) are scraped.
func TestScrapeSurvivesAFailedJobCount(t *testing.T) {
	for _, perJob := range []bool{true, false} {
		sq, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "db"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = sq.Close() })
		t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
		ck := store.CollectionKey{Subscription: "s", ResourceGroup: "rg", Name: "c"}
		if _, _, err := sq.CollectionPut(t.Context(), store.CollectionPutParams{Collection: store.Collection{
			Key: ck, Location: "westeurope", Properties: wire.JobCollectionProperties{Sku: &wire.Sku{Name: "Standard"}, State: store.CollectionStateEnabled},
		}, Now: t0}); err != nil {
			t.Fatal(err)
		}
		for i, state := range []string{store.JobStateEnabled, store.JobStateEnabled, store.JobStateDisabled} {
			j := store.Job{
				Key:   store.JobKey{CollectionKey: ck, Name: "j" + string(rune('0'+i))},
				State: state,
				Properties: wire.JobProperties{
					StartTime: "2026-03-01T12:00:00Z", State: state,
					Action: &wire.JobAction{Type: "Http", Request: &wire.HTTPRequest{URI: "http://example.test/", Method: "GET"}},
				},
			}
			if _, _, err := sq.JobPut(t.Context(), store.JobPutParams{Job: j, Now: t0}); err != nil {
				t.Fatal(err)
			}
		}
		st := &countingStore{Driver: sq}
		clk := clock.NewFake(t0)
		c, err := New(Config{Store: st, Clock: clk, PerJob: perJob, CountTimeout: 20 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		reg := prometheus.NewRegistry()
		if err := c.Register(reg); err != nil {
			t.Fatal(err)
		}
		c.Observe(dispatch.Outcome{Job: store.JobKey{CollectionKey: ck, Name: "j0"}, Outcome: dispatch.OutcomeCompleted, Missed: 3, End: t0})
		srv := httptest.NewServer(c.Handler(reg))
		t.Cleanup(srv.Close)
		others := []string{MetricMissed + " 3"}
		if perJob {
			others = append(others, MetricJobExecutions+`{collection="c",job="j0",outcome="completed",subscription="s"} 1`)
		}
		check := func(step string, calls int32, want ...string) {
			t.Helper()
			code, got := stateLines(t, srv.URL)
			want = append(want, others...)
			slices.Sort(want)
			if code != http.StatusOK || !slices.Equal(got, want) {
				t.Errorf("PerJob %v, %s: %d\n%s\nwant 200\n%s", perJob, step, code, strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			if n := st.calls.Load(); n != calls {
				t.Errorf("PerJob %v, %s: %d counts asked of the store, want %d", perJob, step, n, calls)
			}
		}

		st.mode.Store(countFail)
		check("the first count fails", 1, MetricJobsCountFailures+" 1")
		clk.Advance(StateCacheTTL)
		st.mode.Store(countPass)
		check("a count succeeds", 2,
			MetricJobsCountFailures+" 1", MetricJobsCountAge+" 0",
			MetricJobs+`{state="Completed"} 0`, MetricJobs+`{state="Disabled"} 1`,
			MetricJobs+`{state="Enabled"} 2`, MetricJobs+`{state="Faulted"} 0`)
		clk.Advance(90 * time.Second)
		st.mode.Store(countBlock)
		stale := []string{MetricJobsCountFailures + " 2", MetricJobsCountAge + " 90",
			MetricJobs + `{state="Completed"} 0`, MetricJobs + `{state="Disabled"} 1`,
			MetricJobs + `{state="Enabled"} 2`, MetricJobs + `{state="Faulted"} 0`}
		check("a count outlasts its timeout", 3, stale...)
		check("within StateCacheTTL of the failed count", 3, stale...)
	}
}
