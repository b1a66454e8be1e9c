package postgres_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store/postgres"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store/testdb"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"
)

const benchBatch = 256

// benchJobs creates n enabled jobs due at now and returns them.
func benchJobs(b *testing.B, d *postgres.Driver, n int, now time.Time) []*store.Job {
	b.Helper()
	ctx := b.Context()
	ck := store.CollectionKey{Subscription: "s", ResourceGroup: "rg", Name: "bench"}
	if _, _, err := d.CollectionPut(ctx, store.CollectionPutParams{Now: now, Collection: store.Collection{
		Key: ck, Properties: wire.JobCollectionProperties{State: "Enabled"},
	}}); err != nil {
		b.Fatal(err)
	}
	jobs := make([]*store.Job, n)
	for i := range n {
		j, _, err := d.JobPut(ctx, store.JobPutParams{Now: now, Job: store.Job{
			Key:   store.JobKey{CollectionKey: ck, Name: fmt.Sprintf("job-%06d", i)},
			State: "Enabled",
			Properties: wire.JobProperties{Action: &wire.JobAction{Type: "Http", Request: &wire.HTTPRequest{
				URI: "http://127.0.0.1:1/hook", Method: "POST"}}},
			Status: store.JobStatus{NextExecutionTime: now},
		}})
		if err != nil {
			b.Fatal(err)
		}
		jobs[i] = j
	}
	return jobs
}

// The same benchmarks as the SQLite driver's (one batch of 256 per operation), on the machine's
// PostgreSQL, to compare the two: a batch is one statement, one round trip.

func openB(b *testing.B) *postgres.Driver {
	b.Helper()
	return testdb.Postgres(b)
}

// BenchmarkExecutionClaimMany measures claims committed per second in batches of 256, fenced by
// the leader's term as the leader's dispatcher makes them.
func BenchmarkExecutionClaimMany(b *testing.B) {
	d := openB(b)
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	l, err := d.LeaderElect(b.Context(), store.LeaderElectParams{Replica: "bench", TTL: time.Hour})
	if err != nil {
		b.Fatal(err)
	}
	jobs := benchJobs(b, d, benchBatch, now)
	claims := make([]store.ExecutionClaim, benchBatch)
	b.ResetTimer()
	for i := range b.N {
		for k, j := range jobs {
			claims[k] = store.ExecutionClaim{
				ExpectVersion:     j.Version,
				NextExecutionTime: now.Add(time.Duration(i+1) * time.Minute),
				Execution:         store.Execution{JobID: j.ID, Tag: fmt.Sprintf("t-%d-%d", i, k), Scheduled: now, Phase: "MainAction", DueAt: now, ClaimedAt: now},
			}
		}
		res, err := d.ExecutionClaimMany(b.Context(), store.ExecutionClaimManyParams{Claims: claims, Now: now, Term: l.Term})
		if err != nil {
			b.Fatal(err)
		}
		for k, r := range res {
			if r.Err != nil {
				b.Fatal(r.Err)
			}
			jobs[k].Version = r.Version
		}
	}
	b.ReportMetric(float64(b.N*benchBatch)/b.Elapsed().Seconds(), "claims/s")
}

// BenchmarkAttemptRecordMany measures finished attempts (history row, counters, execution
// deleted) committed per second in batches of 256, each after its claim.
func BenchmarkAttemptRecordMany(b *testing.B) {
	d := openB(b)
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	jobs := benchJobs(b, d, benchBatch, now)
	claims := make([]store.ExecutionClaim, benchBatch)
	records := make([]store.AttemptRecord, benchBatch)
	b.ResetTimer()
	for i := range b.N {
		b.StopTimer()
		for k, j := range jobs {
			claims[k] = store.ExecutionClaim{Execution: store.Execution{JobID: j.ID, Tag: fmt.Sprintf("t-%d-%d", i, k), Scheduled: now, Manual: true, DueAt: now, ClaimedAt: now}}
		}
		res, err := d.ExecutionClaimMany(b.Context(), store.ExecutionClaimManyParams{Claims: claims, Now: now})
		if err != nil {
			b.Fatal(err)
		}
		for k, r := range res {
			x := r.Execution
			records[k] = store.AttemptRecord{ExecutionID: x.ID, JobID: x.JobID, Finished: true, FaultedAfter: 10, History: store.HistoryEntry{
				ExecutionTag: x.Tag, ActionName: "MainAction", Status: "Completed", Message: "HTTP/1.1 200 OK\nok", RepeatCount: x.RepeatCount,
				ExpectedExecutionTime: now, StartTime: now, EndTime: now,
			}}
		}
		b.StartTimer()
		if _, err := d.AttemptRecordMany(b.Context(), store.AttemptRecordManyParams{Records: records, Now: now}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*benchBatch)/b.Elapsed().Seconds(), "records/s")
}
