package storetest

import (
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"
)

// benchBatch is the batch size of the claim and record benchmarks (the dispatcher's).
const benchBatch = 256

// benchNow is the benchmarks' "now".
var benchNow = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// Bench is the drivers' one benchmark suite, the same operations on each so that they compare
// (BenchmarkStore/ExecutionClaimMany on one driver against the other's). open returns a fresh,
// empty store and arranges its Close.
func Bench(b *testing.B, open func(b *testing.B) store.Driver) {
	for _, bm := range []struct {
		name string
		fn   func(b *testing.B, d store.Driver)
	}{
		{"ExecutionClaimMany", func(b *testing.B, d store.Driver) { benchClaims(b, d, false) }},
		{"ExecutionClaimManyFenced", func(b *testing.B, d store.Driver) { benchClaims(b, d, true) }},
		{"AttemptRecordMany", benchRecords},
		{"JobPutCreate", benchJobPutCreate},
		{"JobPutReplace", benchJobPutReplace},
		{"JobPutCreate32", benchJobPutCreate32},
	} {
		b.Run(bm.name, func(b *testing.B) { bm.fn(b, open(b)) })
	}
}

// APIJob is a job of collection ck as the API stores it: an Http action without retries, every
// minute, next due a minute after now.
func APIJob(ck store.CollectionKey, name string, now time.Time) store.Job {
	one := 1
	return store.Job{
		Key:   store.JobKey{CollectionKey: ck, Name: name},
		State: "Enabled",
		Properties: wire.JobProperties{
			StartTime: "2026-01-01T00:00:00Z",
			Action: &wire.JobAction{Type: "Http", Request: &wire.HTTPRequest{URI: "http://127.0.0.1:1/hook", Method: "POST", Body: "x"},
				RetryPolicy: &wire.RetryPolicy{RetryType: "None"}},
			Recurrence: &wire.JobRecurrence{Frequency: "Minute", Interval: &one},
		},
		Status: store.JobStatus{NextExecutionTime: now.Add(time.Minute)},
	}
}

// benchCollection creates an enabled collection named name and returns its key.
func benchCollection(b *testing.B, d store.Driver, name string) store.CollectionKey {
	b.Helper()
	ck := store.CollectionKey{Subscription: "s", ResourceGroup: "rg", Name: name}
	if _, _, err := d.CollectionPut(b.Context(), store.CollectionPutParams{Now: benchNow, Collection: store.Collection{
		Key: ck, Properties: wire.JobCollectionProperties{State: "Enabled"},
	}}); err != nil {
		b.Fatal(err)
	}
	return ck
}

// benchJobs creates n enabled jobs due at benchNow and returns them.
func benchJobs(b *testing.B, d store.Driver, n int) []*store.Job {
	b.Helper()
	ck := benchCollection(b, d, "bench")
	jobs := make([]*store.Job, n)
	for i := range n {
		j, _, err := d.JobPut(b.Context(), store.JobPutParams{Now: benchNow, Job: store.Job{
			Key:   store.JobKey{CollectionKey: ck, Name: fmt.Sprintf("job-%06d", i)},
			State: "Enabled",
			Properties: wire.JobProperties{Action: &wire.JobAction{Type: "Http", Request: &wire.HTTPRequest{
				URI: "http://127.0.0.1:1/hook", Method: "POST"}}},
			Status: store.JobStatus{NextExecutionTime: benchNow},
		}})
		if err != nil {
			b.Fatal(err)
		}
		jobs[i] = j
	}
	return jobs
}

// benchClaims measures claims committed per second in batches of 256; fenced, by the leader's
// term as a leader among replicas makes them (a single process does not fence).
func benchClaims(b *testing.B, d store.Driver, fenced bool) {
	var term int64
	if fenced {
		l, err := d.LeaderElect(b.Context(), store.LeaderElectParams{Replica: "bench", TTL: time.Hour})
		if err != nil {
			b.Fatal(err)
		}
		term = l.Term
	}
	now := benchNow
	jobs := benchJobs(b, d, benchBatch)
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
		res, err := d.ExecutionClaimMany(b.Context(), store.ExecutionClaimManyParams{Claims: claims, Now: now, Term: term})
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

// benchRecords measures finished attempts (history row, counters, execution deleted) committed
// per second in batches of 256, each after its claim.
func benchRecords(b *testing.B, d store.Driver) {
	now := benchNow
	jobs := benchJobs(b, d, benchBatch)
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

// createAsAPI does what the API does for a PUT that creates a job: read the collection and the
// (absent) job, then create it under a job quota.
func createAsAPI(b *testing.B, d store.Driver, ck store.CollectionKey, name string) {
	ctx := b.Context()
	j := APIJob(ck, name, benchNow)
	if _, err := d.CollectionGet(ctx, store.CollectionGetParams{Key: ck}); err != nil {
		b.Error(err)
		return
	}
	if _, err := d.JobGet(ctx, store.JobGetParams{Key: j.Key}); err == nil {
		b.Error("job exists before its create")
		return
	}
	if _, created, err := d.JobPut(ctx, store.JobPutParams{Job: j, MaxJobs: 1000000, Now: benchNow}); err != nil || !created {
		b.Errorf("create: created=%v err=%v", created, err)
	}
}

// benchJobPutCreate measures a PUT that creates a job, one client.
func benchJobPutCreate(b *testing.B, d store.Driver) {
	ck := benchCollection(b, d, "crud")
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		createAsAPI(b, d, ck, fmt.Sprintf("job-%08d", i))
	}
}

// benchJobPutReplace measures a PUT that replaces a job: read the collection and the job, then
// replace it conditionally on its version.
func benchJobPutReplace(b *testing.B, d store.Driver) {
	ctx := b.Context()
	ck := benchCollection(b, d, "crud")
	const n = 1000
	for i := range n {
		if _, _, err := d.JobPut(ctx, store.JobPutParams{Job: APIJob(ck, fmt.Sprintf("job-%04d", i), benchNow), Now: benchNow}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		j := APIJob(ck, fmt.Sprintf("job-%04d", i%n), benchNow)
		if _, err := d.CollectionGet(ctx, store.CollectionGetParams{Key: ck}); err != nil {
			b.Fatal(err)
		}
		old, err := d.JobGet(ctx, store.JobGetParams{Key: j.Key})
		if err != nil {
			b.Fatal(err)
		}
		if _, created, err := d.JobPut(ctx, store.JobPutParams{Job: j, ExpectVersion: old.Version, Now: benchNow}); err != nil || created {
			b.Fatalf("replace: created=%v err=%v", created, err)
		}
	}
}

// benchJobPutCreate32 measures PUTs that create jobs in one collection from 32 concurrent
// clients (schedbench's default), as the API makes them.
func benchJobPutCreate32(b *testing.B, d store.Driver) {
	ck := benchCollection(b, d, "crud")
	var next atomic.Int64
	b.SetParallelism(max(1, 32/runtime.GOMAXPROCS(0))) // RunParallel runs parallelism × GOMAXPROCS goroutines
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			createAsAPI(b, d, ck, fmt.Sprintf("job-%08d", next.Add(1)))
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "PUT/s")
}
