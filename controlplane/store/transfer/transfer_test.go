package transfer_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store/sqlite"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store/testdb"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store/transfer"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 123456789, time.UTC)

type driver interface {
	store.Driver
	store.Dumper
}

var coll = store.CollectionKey{Subscription: "s", ResourceGroup: "rg", Name: "c"}

// addJob creates a job, claims one occurrence of it and records its attempt: a job row and a
// history row, each in its own transaction.
func addJob(ctx context.Context, d store.Driver, name string) error {
	j, _, err := d.JobPut(ctx, store.JobPutParams{Now: t0, Job: store.Job{
		Key: store.JobKey{CollectionKey: coll, Name: name}, State: store.JobStateEnabled,
		Properties: wire.JobProperties{StartTime: "2026-03-01T12:00:00Z", Action: &wire.JobAction{Type: "Http",
			Request: &wire.HTTPRequest{URI: "http://example.test/" + name, Method: "GET"}}},
		Status: store.JobStatus{NextExecutionTime: t0},
	}})
	if err != nil {
		return err
	}
	res, err := d.ExecutionClaimMany(ctx, store.ExecutionClaimManyParams{Now: t0, Claims: []store.ExecutionClaim{{
		Execution:     store.Execution{JobID: j.ID, Tag: "tag-" + name, Scheduled: t0, Phase: store.ActionMain, DueAt: t0, ClaimedAt: t0},
		ExpectVersion: j.Version,
	}}})
	if err != nil {
		return err
	}
	if res[0].Err != nil {
		return res[0].Err
	}
	e := res[0].Execution
	_, err = d.AttemptRecordMany(ctx, store.AttemptRecordManyParams{Now: t0, Records: []store.AttemptRecord{{
		ExecutionID: e.ID, JobID: j.ID, Finished: true,
		History: store.HistoryEntry{ExecutionTag: e.Tag, ActionName: store.ActionMain, Status: store.HistoryCompleted, Message: "ok",
			RepeatCount: e.RepeatCount, ExpectedExecutionTime: t0, StartTime: t0, EndTime: t0.Add(time.Second)},
	}}})
	return err
}

// holdingTarget is a target whose first load waits for hold: writes to the source happen while
// the copy is under way.
type holdingTarget struct {
	store.Dumper
	once sync.Once
	hold func()
}

func (h *holdingTarget) Load(ctx context.Context, t store.DumpTable, rows []store.DumpRow) error {
	h.once.Do(h.hold)
	return h.Dumper.Load(ctx, t, rows)
}

func openSQLite(t *testing.T, name string) *sqlite.Driver {
	t.Helper()
	d, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), name))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	return d
}

// TestCopyIsOneSnapshot: jobs (with their history) written to the source while a copy runs are
// not in the copy: it holds exactly the rows of the instant it began, every table of the same
// instant, on either driver.
func TestCopyIsOneSnapshot(t *testing.T) {
	for _, name := range []string{"sqlite", "postgres"} {
		t.Run(name, func(t *testing.T) {
			var src driver
			if name == "sqlite" {
				src = openSQLite(t, "source.db")
			} else {
				src = testdb.Postgres(t)
			}
			ctx := t.Context()
			if _, _, err := src.CollectionPut(ctx, store.CollectionPutParams{Now: t0, Collection: store.Collection{
				Key: coll, Location: "local", Properties: wire.JobCollectionProperties{Sku: &wire.Sku{Name: "Standard"}, State: "Enabled"},
			}}); err != nil {
				t.Fatal(err)
			}
			const seeded = 40
			for i := range seeded {
				if err := addJob(ctx, src, fmt.Sprintf("seed-%d", i)); err != nil {
					t.Fatal(err)
				}
			}
			before, err := transfer.Checksum(ctx, src)
			if err != nil {
				t.Fatal(err)
			}
			dst := openSQLite(t, "target.db")
			// The copy's first load waits until 20 more jobs, each with its history entry, are
			// committed to the source.
			var wrote error
			target := &holdingTarget{Dumper: dst, hold: func() {
				for i := range 20 {
					if wrote = addJob(ctx, src, fmt.Sprintf("late-%d", i)); wrote != nil {
						return
					}
				}
			}}
			var progress bytes.Buffer
			sum, err := transfer.Copy(ctx, src, target, transfer.Options{Batch: 7, Progress: &progress})
			if err != nil || wrote != nil {
				t.Fatalf("copy: %v; writes meanwhile: %v\n%s", err, wrote, progress.String())
			}
			if ok, diff := sum.Equal(before); !ok {
				t.Fatalf("the copy is not the source as of its start: %s", diff)
			}
			got, err := transfer.Checksum(ctx, dst)
			if err != nil {
				t.Fatal(err)
			}
			if ok, diff := got.Equal(before); !ok {
				t.Fatalf("the target is not the source as of the copy's start: %s", diff)
			}
			for _, want := range []string{"jobs: 40 rows copied\n", "history: 40 rows copied\n",
				"verified: the target holds the same rows (counts and SHA-256 checksums per table)\n"} {
				if !strings.Contains(progress.String(), want) {
					t.Errorf("progress lacks %q:\n%s", want, progress.String())
				}
			}
			after, err := transfer.Checksum(ctx, src)
			if err != nil {
				t.Fatal(err)
			}
			if after[1].Rows != seeded+20 {
				t.Fatalf("the source holds %d jobs after the writes, want %d", after[1].Rows, seeded+20)
			}
			// A second copy into the same target is refused, and changes nothing there.
			if _, err := transfer.Copy(ctx, src, dst, transfer.Options{}); !errors.Is(err, transfer.ErrNotEmpty) {
				t.Fatalf("copy into a target with rows: %v", err)
			}
			if again, _ := transfer.Checksum(ctx, dst); !func() bool { ok, _ := again.Equal(before); return ok }() {
				t.Fatal("the refused copy changed the target")
			}
		})
	}
}

// TestDumpRowCheck: a row with a value of the wrong type, or the wrong number of values, is
// refused naming the column, by Check and by each driver's Load.
func TestDumpRowCheck(t *testing.T) {
	meta := store.DumpTables()[4]
	if meta.Name != "meta" {
		t.Fatalf("table 4 is %s", meta.Name)
	}
	if err := (store.DumpRow{"name", "value"}).Check(meta); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		row  store.DumpRow
		want string
	}{
		{store.DumpRow{"name", int64(1)}, "meta.value: a value of type int64"},
		{store.DumpRow{"name"}, "meta: a row of 1 values for 2 columns"},
	} {
		if err := tc.row.Check(meta); err == nil || err.Error() != tc.want {
			t.Errorf("%v: %v, want %s", tc.row, err, tc.want)
		}
		d := openSQLite(t, "check.db")
		if err := d.Load(t.Context(), meta, []store.DumpRow{tc.row}); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("sqlite load %v: %v", tc.row, err)
		}
	}
}

// TestCopyRefusesALedTarget: an empty target a daemon leads is refused (that daemon would not see
// the rows copied under it).
func TestCopyRefusesALedTarget(t *testing.T) {
	src, dst := openSQLite(t, "source.db"), openSQLite(t, "target.db")
	if _, err := dst.LeaderElect(t.Context(), store.LeaderElectParams{Replica: "r1", TTL: time.Hour}); err != nil {
		t.Fatal(err)
	}
	_, err := transfer.Copy(t.Context(), src, dst, transfer.Options{})
	if !errors.Is(err, transfer.ErrNotEmpty) || !strings.Contains(err.Error(), "a daemon runs on the target (replica r1 holds its leadership)") {
		t.Fatalf("copy into a led target: %v", err)
	}
}
