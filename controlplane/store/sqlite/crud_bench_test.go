package sqlite_test

import (
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"
)

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

// BenchmarkJobPutCreate measures what the API does for a PUT that creates a job: read the
// collection and the (absent) job, then create it under a job quota.
func BenchmarkJobPutCreate(b *testing.B) {
	d := openB(b)
	ctx := b.Context()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ck := crudCollection(b, d, now)
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		j := crudJob(ck, fmt.Sprintf("job-%08d", i), now)
		if _, err := d.CollectionGet(ctx, store.CollectionGetParams{Key: ck}); err != nil {
			b.Fatal(err)
		}
		if _, err := d.JobGet(ctx, store.JobGetParams{Key: j.Key}); err == nil {
			b.Fatal("job exists before its create")
		}
		if _, created, err := d.JobPut(ctx, store.JobPutParams{Job: j, MaxJobs: 1000000, Now: now}); err != nil || !created {
			b.Fatalf("create: created=%v err=%v", created, err)
		}
	}
}

// BenchmarkJobPutReplace measures a PUT that replaces a job: read the collection and the job,
// then replace it conditionally on its version.
func BenchmarkJobPutReplace(b *testing.B) {
	d := openB(b)
	ctx := b.Context()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ck := crudCollection(b, d, now)
	const n = 1000
	for i := range n {
		if _, _, err := d.JobPut(ctx, store.JobPutParams{Job: crudJob(ck, fmt.Sprintf("job-%04d", i), now), Now: now}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		j := crudJob(ck, fmt.Sprintf("job-%04d", i%n), now)
		if _, err := d.CollectionGet(ctx, store.CollectionGetParams{Key: ck}); err != nil {
			b.Fatal(err)
		}
		old, err := d.JobGet(ctx, store.JobGetParams{Key: j.Key})
		if err != nil {
			b.Fatal(err)
		}
		if _, created, err := d.JobPut(ctx, store.JobPutParams{Job: j, ExpectVersion: old.Version, Now: now}); err != nil || created {
			b.Fatalf("replace: created=%v err=%v", created, err)
		}
	}
}

// BenchmarkJobPutCreate32 measures PUTs that create jobs in one collection from 32 concurrent
// clients (schedbench's default), as the API makes them.
func BenchmarkJobPutCreate32(b *testing.B) {
	d := openB(b)
	ctx := b.Context()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ck := crudCollection(b, d, now)
	var next atomic.Int64
	b.SetParallelism(max(1, 32/runtime.GOMAXPROCS(0)))
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			j := crudJob(ck, fmt.Sprintf("job-%08d", next.Add(1)), now)
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
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "PUT/s")
}
