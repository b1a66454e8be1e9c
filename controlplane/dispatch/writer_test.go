package dispatch

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/clock"
)

// recordsWritten runs a record writer (BatchSize 2, busy throughout, on a fake clock that does
// not move: maxRecordWait never passes) with starting as given, sends it n records over an
// unbuffered channel and returns how many had been received when the first batch was committed.
func recordsWritten(t *testing.T, starting bool, n int) int64 {
	t.Helper()
	ops := make(chan op)
	var sent atomic.Int64
	first := make(chan int64, 1)
	w := &batchWriter{ops: ops, clock: clock.NewFake(time.Unix(1_800_000_000, 0)), batchSize: 2, depth: 1,
		busy: func() bool { return true }, starting: func() bool { return starting },
		commitRecords: func(context.Context, []*recordOp) []*recordOp {
			select {
			case first <- sent.Load():
			default:
			}
			return nil
		}}
	done := make(chan struct{})
	go func() {
		defer close(done)
		w.run(t.Context())
	}()
	for i := range n {
		ops <- op{record: &recordOp{rec: store.AttemptRecord{ExecutionID: int64(i + 1), Finished: true}}}
		sent.Add(1)
	}
	close(ops) // stopping: what is left is committed
	<-done
	return <-first
}

// TestABurstsRecordsWaitForItsLastAttemptsToStart: while attempts wait to start, records
// are kept back (their commits would take the CPU the burst's last attempts need) up to
// pileStarting batches: 100 records, none committed before the writer stops. Fails with the
// bound of attempts under way (pileUnderWay: the first batch commits at 8 records).
func TestABurstsRecordsWaitForItsLastAttemptsToStart(t *testing.T) {
	if got := recordsWritten(t, true, 100); got != 100 {
		t.Fatalf("first batch committed after %d of 100 records received, want all of them", got)
	}
}

// TestRecordsOfAttemptsUnderWayPileUpToFourBatches: with no attempt waiting to start (those
// under way wait on their targets, not on the CPU), records wait only until pileUnderWay
// batches pile up: the first batch commits at the 8th record.
func TestRecordsOfAttemptsUnderWayPileUpToFourBatches(t *testing.T) {
	if got := recordsWritten(t, false, 100); got < 7 || got > 8 {
		t.Fatalf("first batch committed after %d records received, want 8 (4 batches of 2)", got)
	}
}
