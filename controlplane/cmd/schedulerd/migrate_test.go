package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store/postgres"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store/sqlite"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store/testdb"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store/transfer"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/testlog"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"
)

// startOn runs `schedulerd serve` in-process on an existing data directory (its own admin token,
// generated there when absent) with extra flags; it stops with the test or with stop.
func startOn(t *testing.T, data string, flags ...string) (d *daemon, stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	logs := &testlog.Buffer{}
	done := make(chan int, 1)
	_ = os.Remove(filepath.Join(data, "listen-address"))
	args := append([]string{"serve", "--listen", "127.0.0.1:0", "--data", data}, flags...)
	go func() { done <- run(ctx, args, nil, io.Discard, logs) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			select {
			case <-done:
			case <-time.After(15 * time.Second):
				t.Errorf("the daemon did not stop; log:\n%s", logs.String())
			}
		})
	}
	t.Cleanup(stop)
	addr := waitForFile(t, filepath.Join(data, "listen-address"), logs)
	token := waitForFile(t, filepath.Join(data, "admin-token"), logs)
	d = &daemon{t: t, base: "http://" + addr, token: token, data: data, logs: logs}
	d.waitReady()
	return d, stop
}

// delivery is one request a probe job made.
type delivery struct {
	job, region, expected, auth, tag string
}

// deliveries records the requests of probe jobs, by the region (daemon) that made them.
type deliveries struct {
	mu  sync.Mutex
	got []delivery
	ch  chan struct{}
}

func newDeliveries(t *testing.T) (*deliveries, string) {
	d := &deliveries{ch: make(chan struct{}, 1)}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		d.mu.Lock()
		d.got = append(d.got, delivery{
			job: strings.TrimPrefix(r.URL.Path, "/"), region: r.Header.Get("x-ms-scheduler-execution-region"),
			expected: r.Header.Get("x-ms-scheduler-expected-execution-time"), auth: r.Header.Get("Authorization"),
			tag: r.Header.Get("x-ms-execution-tag"),
		})
		d.mu.Unlock()
		select {
		case d.ch <- struct{}{}:
		default:
		}
	}))
	t.Cleanup(srv.Close)
	return d, srv.URL
}

// waitRegion waits until the daemon of region made n requests, and returns them by job.
func (d *deliveries) waitRegion(t *testing.T, region string, n int, within time.Duration) map[string][]delivery {
	t.Helper()
	deadline := time.After(within)
	for {
		d.mu.Lock()
		byJob := map[string][]delivery{}
		count := 0
		for _, x := range d.got {
			if x.region == region {
				byJob[x.job] = append(byJob[x.job], x)
				count++
			}
		}
		d.mu.Unlock()
		if count >= n {
			return byJob
		}
		select {
		case <-d.ch:
		case <-deadline:
			t.Fatalf("region %s: %d requests after %s, want %d", region, count, within, n)
		}
	}
}

const probeCollection = "/subscriptions/s/resourceGroups/rg/providers/Microsoft.Scheduler/jobCollections/c"

// seedBulk adds n jobs to collection c of a stopped daemon's SQLite store, each with one
// execution recorded in its history (claimed and finished through the store's own methods), its
// next occurrence a month away; template is a job of the same collection whose definition they
// copy (without its secrets, which are bound to it).
func seedBulk(t testing.TB, d store.Driver, template *store.Job, n int) {
	t.Helper()
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Second)
	props := template.Properties
	action := *props.Action
	req := *action.Request
	req.Authentication = nil
	action.Request = &req
	props.Action = &action
	props.Recurrence = &wire.JobRecurrence{Frequency: "Month", Interval: template.Properties.Recurrence.Interval}
	props.Status = nil
	const batch = 500
	var wg sync.WaitGroup
	errs := make(chan error, n/batch+1)
	for first := 0; first < n; first += batch {
		wg.Add(1)
		go func(first int) {
			defer wg.Done()
			var claims []store.ExecutionClaim
			for i := first; i < min(first+batch, n); i++ {
				j, _, err := d.JobPut(ctx, store.JobPutParams{Now: now, Job: store.Job{
					Key:        store.JobKey{CollectionKey: template.Key.CollectionKey, Name: fmt.Sprintf("bulk-%06d", i)},
					Properties: props, State: store.JobStateEnabled,
					Status: store.JobStatus{NextExecutionTime: now.Add(-time.Minute)},
				}})
				if err != nil {
					errs <- err
					return
				}
				claims = append(claims, store.ExecutionClaim{
					Execution: store.Execution{JobID: j.ID, Tag: fmt.Sprintf("seed-%d", i), Scheduled: now.Add(-time.Minute),
						Phase: store.ActionMain, DueAt: now.Add(-time.Minute), ClaimedAt: now.Add(-time.Minute)},
					ExpectVersion: j.Version, NextExecutionTime: now.AddDate(0, 1, -1),
				})
			}
			res, err := d.ExecutionClaimMany(ctx, store.ExecutionClaimManyParams{Claims: claims, Now: now.Add(-time.Minute)})
			if err != nil {
				errs <- err
				return
			}
			var records []store.AttemptRecord
			for _, r := range res {
				if r.Err != nil {
					errs <- r.Err
					return
				}
				e := r.Execution
				records = append(records, store.AttemptRecord{ExecutionID: e.ID, JobID: e.JobID, Finished: true,
					History: store.HistoryEntry{ExecutionTag: e.Tag, ActionName: store.ActionMain, Status: store.HistoryCompleted,
						Message: "Http Action - Response from host 'seed': 'OK'", RepeatCount: e.RepeatCount,
						ExpectedExecutionTime: e.Scheduled, StartTime: now.Add(-time.Minute), EndTime: now.Add(-time.Minute + 12345678)}})
			}
			if _, err := d.AttemptRecordMany(ctx, store.AttemptRecordManyParams{Records: records, Now: now.Add(-time.Minute)}); err != nil {
				errs <- err
			}
		}(first)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("seeding: %v", err)
	}
}

// sumOf returns the counts and checksums of a store.
func sumOf(t *testing.T, spec string) transfer.Sum {
	t.Helper()
	var d interface {
		store.Dumper
		Close() error
	}
	var err error
	if postgres.IsURL(spec) {
		d, err = postgres.Open(t.Context(), spec)
	} else {
		d, err = sqlite.Open(t.Context(), filepath.Join(spec, "scheduler.db"))
	}
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = d.Close() }()
	sum, err := transfer.Checksum(t.Context(), d)
	if err != nil {
		t.Fatal(err)
	}
	return sum
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// migrateJobs is how many jobs TestMigrateSQLiteToPostgresAndBack moves (SCHEDULER_TEST_MIGRATE_JOBS
// overrides it, to measure larger stores).
func migrateJobs(t *testing.T) int {
	if v := os.Getenv("SCHEDULER_TEST_MIGRATE_JOBS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	return 10000
}

// TestMigrateSQLiteToPostgresAndBack moves a store of 10,000 jobs with history, counters and
// sealed secrets from SQLite to PostgreSQL and from there to a new SQLite file, refusing a target
// that is not empty and a source a daemon runs on; then a daemon started on each result (with
// the source's secret key) fires the same occurrence of each probe job, with the same password
// opened from its sealed value and the same counters.
func TestMigrateSQLiteToPostgresAndBack(t *testing.T) {
	pgBase := testdb.PostgresURL(t)
	dir := t.TempDir()
	src := filepath.Join(dir, "a")
	recv, recvURL := newDeliveries(t)

	// The source: a daemon creates the collection and the probe jobs (their passwords sealed by
	// the API), and is stopped; the bulk is added through the store.
	a, stopA := startOn(t, src)
	a.call(http.MethodPut, probeCollection, `{"location":"local","properties":{"sku":{"name":"Standard"}}}`, http.StatusCreated)
	// Hourly probes whose next occurrence is 15 s away: the source, stopped within a few
	// seconds, does not fire it; each target fires it once, late if the copies took long
	// (--misfire-threshold 10m), and nothing more within the hour.
	start := time.Now().UTC().Add(-time.Hour + 15*time.Second).Format(time.RFC3339)
	const probes = 3
	for i := range probes {
		a.call(http.MethodPut, fmt.Sprintf("%s/jobs/probe-%d", probeCollection, i), fmt.Sprintf(`{"properties":{"startTime":%q,
			"recurrence":{"frequency":"Hour","interval":1},
			"action":{"type":"Http","request":{"method":"POST","uri":"%s/probe-%d",
			"authentication":{"type":"Basic","username":"u%d","password":"secret-%d"}}}}}`, start, recvURL, i, i, i), http.StatusCreated)
	}
	// A second daemon on the same data directory is refused while the first runs.
	var second testlog.Buffer
	secondCtx, cancelSecond := context.WithTimeout(t.Context(), 20*time.Second) // bounds a second daemon that was not refused
	defer cancelSecond()
	if code := run(secondCtx, []string{"serve", "--listen", "127.0.0.1:0", "--data", src}, nil, io.Discard, &second); code != 1 ||
		!strings.Contains(second.String(), "pid "+strconv.Itoa(os.Getpid())) {
		t.Fatalf("a second daemon on the data directory: exit %d, log %s", code, second.String())
	}
	// So is a move of the store it runs on, unless --online.
	var out, errOut bytes.Buffer
	pg1 := testdb.PostgresSchema(t, pgBase)
	if code := run(t.Context(), []string{"migrate", "--from", src, "--to", pg1}, nil, &out, &errOut); code != 1 ||
		!strings.Contains(errOut.String(), "a daemon is running on the source") {
		t.Fatalf("migrate from a running daemon's store: exit %d, %s%s", code, out.String(), errOut.String())
	}
	stopA()

	d, err := sqlite.Open(t.Context(), filepath.Join(src, "scheduler.db"))
	if err != nil {
		t.Fatal(err)
	}
	probe0, err := d.JobGet(t.Context(), store.JobGetParams{Key: store.JobKey{
		CollectionKey: store.CollectionKey{Subscription: "s", ResourceGroup: "rg", Name: "c"}, Name: "probe-0"}})
	if err != nil {
		t.Fatal(err)
	}
	n := migrateJobs(t)
	seedStart := time.Now()
	seedBulk(t, d, probe0, n)
	t.Logf("seeded %d jobs with history in %s", n, time.Since(seedStart).Round(time.Millisecond))
	before := map[string]store.JobStatus{}
	historyBefore := map[string]int{}
	for i := range probes {
		j, err := d.JobGet(t.Context(), store.JobGetParams{Key: store.JobKey{CollectionKey: probe0.Key.CollectionKey, Name: fmt.Sprintf("probe-%d", i)}})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(j.Properties.Action.Request.Authentication.Password, "sealed:") {
			t.Fatalf("probe-%d's password is stored as %q, want it sealed", i, j.Properties.Action.Request.Authentication.Password)
		}
		before[j.Key.Name] = j.Status
		if j.Status.NextExecutionTime.After(time.Now().Add(5 * time.Minute)) {
			t.Fatalf("probe-%d's next occurrence is %s: the source fired the one the targets should (a machine too slow for this test's 15 s)",
				i, j.Status.NextExecutionTime)
		}
		hs, err := d.HistoryList(t.Context(), store.HistoryListParams{Job: j.Key})
		if err != nil {
			t.Fatal(err)
		}
		historyBefore[j.Key.Name] = len(hs)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}

	// SQLite -> PostgreSQL -> SQLite.
	migrate := func(from, to string) string {
		t.Helper()
		var out, errOut bytes.Buffer
		began := time.Now()
		if code := run(t.Context(), []string{"migrate", "--from", from, "--to", to}, nil, &out, &errOut); code != 0 {
			t.Fatalf("migrate %s -> %s: exit %d\n%s%s", from, to, code, out.String(), errOut.String())
		}
		t.Logf("migrate %d jobs %s -> %s: %s", n, map[bool]string{true: "postgres", false: filepath.Base(from)}[postgres.IsURL(from)], map[bool]string{true: "postgres", false: filepath.Base(to)}[postgres.IsURL(to)], time.Since(began).Round(time.Millisecond))
		if !strings.Contains(out.String(), "verified: the target holds the same rows") {
			t.Fatalf("migrate did not report its verification:\n%s", out.String())
		}
		return out.String()
	}
	log1 := migrate(src, pg1)
	for _, want := range []string{fmt.Sprintf("jobs: %d rows copied", n+probes), fmt.Sprintf("history: %d rows copied", n)} {
		if !strings.Contains(log1, want) {
			t.Errorf("migrate output lacks %q:\n%s", want, log1)
		}
	}
	back := filepath.Join(dir, "b")
	migrate(pg1, back)
	// A target that holds rows is refused, and left as it was.
	out.Reset()
	errOut.Reset()
	if code := run(t.Context(), []string{"migrate", "--from", src, "--to", back}, nil, &out, &errOut); code != 1 ||
		!strings.Contains(errOut.String(), "the target is not empty: its table collections holds 1 rows") {
		t.Fatalf("migrate into a store with rows: exit %d, %s%s", code, out.String(), errOut.String())
	}
	srcSum, pgSum, backSum := sumOf(t, src), sumOf(t, pg1), sumOf(t, back)
	if ok, diff := srcSum.Equal(pgSum); !ok {
		t.Fatalf("source and PostgreSQL differ: %s", diff)
	}
	if ok, diff := srcSum.Equal(backSum); !ok {
		t.Fatalf("source and SQLite again differ: %s", diff)
	}

	// A daemon on each result, with the source's key, fires each probe's next occurrence once.
	pgData := filepath.Join(dir, "pg-data")
	copyFile(t, filepath.Join(src, "secret.key"), filepath.Join(pgData, "secret.key"))
	copyFile(t, filepath.Join(src, "secret.key"), filepath.Join(back, "secret.key"))
	onPG, _ := startOn(t, pgData, "--store", pg1, "--region", "pg", "--misfire-threshold", "10m")
	onBack, _ := startOn(t, back, "--region", "back", "--misfire-threshold", "10m")
	for _, target := range []struct {
		region string
		d      *daemon
	}{{"pg", onPG}, {"back", onBack}} {
		byJob := recv.waitRegion(t, target.region, probes, 3*time.Minute)
		for i := range probes {
			name := fmt.Sprintf("probe-%d", i)
			was := before[name]
			got := byJob[name]
			wantAuth := "Basic " + base64.StdEncoding.EncodeToString([]byte(fmt.Sprintf("u%d:secret-%d", i, i)))
			if len(got) == 0 || got[0].auth != wantAuth {
				t.Fatalf("%s on %s: requests %+v, want one with %s (the password opened with the same key)", name, target.region, got, wantAuth)
			}
			exp, err := time.Parse(time.RFC3339, got[0].expected)
			if err != nil || !exp.Equal(was.NextExecutionTime.Truncate(time.Second)) {
				t.Errorf("%s on %s: expected execution time %q, want the source's next occurrence %s", name, target.region,
					got[0].expected, was.NextExecutionTime.Format(time.RFC3339))
			}
			// The attempt is recorded: one history entry more, for that occurrence, and the
			// counter one more.
			hist := target.d.history(name, historyBefore[name]+1)
			last := hist[len(hist)-1].Properties
			if len(hist) != historyBefore[name]+1 || last.ExpectedExecutionTime != got[0].expected || last.Status != "Completed" ||
				last.RepeatCount != was.ExecutionCount+1 {
				t.Errorf("%s on %s: history %d entries, newest %+v; want %d, the occurrence %s completed as execution %d",
					name, target.region, len(hist), last, historyBefore[name]+1, got[0].expected, was.ExecutionCount+1)
			}
			var j wire.JobDefinition
			if err := json.Unmarshal([]byte(target.d.call(http.MethodGet, probeCollection+"/jobs/"+name, "", http.StatusOK)), &j); err != nil {
				t.Fatal(err)
			}
			if s := j.Properties.Status; s == nil || s.ExecutionCount == nil || *s.ExecutionCount != was.ExecutionCount+1 {
				t.Errorf("%s on %s: status %+v, want executionCount %d", name, target.region, s, was.ExecutionCount+1)
			}
		}
		// A bulk job keeps its counters and its history.
		var h wire.JobHistoryListResult
		if err := json.Unmarshal([]byte(target.d.call(http.MethodGet, probeCollection+"/jobs/bulk-000007/history", "", http.StatusOK)), &h); err != nil {
			t.Fatal(err)
		}
		if len(h.Value) != 1 || h.Value[0].Properties.Status != "Completed" || h.Value[0].Properties.Message != "Http Action - Response from host 'seed': 'OK'" || h.Value[0].Properties.RepeatCount != 1 {
			t.Errorf("bulk-000007's history on %s: %+v", target.region, h.Value)
		}
	}
}
