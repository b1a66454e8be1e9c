package postgres_test

import (
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"
)

// The same benchmarks as the SQLite driver's crud_bench_test.go, to compare the two.

// crudJob is a job of collection ck as the API stores it.
func crudJob(ck store.CollectionKey, name string, now time.Time) store.Job {
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

func crudCollection(b *testing.B, d store.Driver, now time.Time) store.CollectionKey {
	b.Helper()
	ck := store.CollectionKey{Subscription: "s", ResourceGroup: "rg", Name: "crud"}
	if _, _, err := d.CollectionPut(b.Context(), store.CollectionPutParams{Now: now, Collection: store.Collection{
		Key: ck, Properties: wire.JobCollectionProperties{State: "Enabled"},
	}}); err != nil {
		b.Fatal(err)
	}
	return ck
}

// createAsAPI does what the API does for a PUT that creates a job: read the collection and the
// (absent) job, then create it under a job quota.
func createAsAPI(b *testing.B, d store.Driver, ck store.CollectionKey, name string, now time.Time) {
	ctx := b.Context()
	j := crudJob(ck, name, now)
	if _, err := d.CollectionGet(ctx, store.CollectionGetParams{Key: ck}); err != nil {
		b.Error(err)
		return
	}
	if _, err := d.JobGet(ctx, store.JobGetParams{Key: j.Key}); err == nil {
		b.Error("job exists before its create")
		return
	}
	if _, created, err := d.JobPut(ctx, store.JobPutParams{Job: j, MaxJobs: 1000000, Now: now}); err != nil || !created {
		b.Errorf("create: created=%v err=%v", created, err)
	}
}

// BenchmarkJobPutCreate measures a PUT that creates a job, one client.
func BenchmarkJobPutCreate(b *testing.B) {
	d := openB(b)
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ck := crudCollection(b, d, now)
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		createAsAPI(b, d, ck, fmt.Sprintf("job-%08d", i), now)
	}
}

// BenchmarkJobPutCreate32 measures PUTs that create jobs in one collection from 32 concurrent
// clients (schedbench's default).
func BenchmarkJobPutCreate32(b *testing.B) {
	d := openB(b)
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ck := crudCollection(b, d, now)
	var next atomic.Int64
	b.SetParallelism(max(1, 32/max(1, testingProcs())))
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			createAsAPI(b, d, ck, fmt.Sprintf("job-%08d", next.Add(1)), now)
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "PUT/s")
}

// testingProcs is GOMAXPROCS (RunParallel runs parallelism × GOMAXPROCS goroutines).
func testingProcs() int { return runtime.GOMAXPROCS(0) }
