package dispatch

import (
	"context"
	"sync"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/clock"
)

// op is one write for a batch writer: a claim or a cancellation (the scheduler's), a record
// (the executor's workers' or, among replicas, its cancellations).
type op struct {
	claim  *claimOp
	record *recordOp
}

type claimOp struct {
	entry  *entry
	job    *store.Job // decoded from the entry's definition (the leader's: a stub)
	target string
	due    bool // due when claimed (not ahead): it takes capacity
	skip   bool // the misfire policy Skip's record (claim.Skip): nothing runs
	claim  store.ExecutionClaim
}

type recordOp struct {
	exec    store.Execution // the execution as attempted
	job     *store.Job      // its job as attempted
	rec     store.AttemptRecord
	outcome string // "completed", "failed" or "faulted" when the record finishes the execution
	tries   int
}

// cancelRecord is the record that deletes an execution whose attempt has not started, with no
// history (owner: the executor that owns it, "" for an unowned one).
func cancelRecord(x *store.Execution, owner string) *recordOp {
	return &recordOp{exec: *x, rec: store.AttemptRecord{ExecutionID: x.ID, JobID: x.JobID, Finished: true, Cancelled: true,
		Owner: owner}}
}

// Records wait for the attempts under way until this many batches pile up, and for attempts
// that wait to start until pileStarting do: a burst's records are kept back until its last
// attempts have started (committing them would take the CPU those need), within a bound on the
// memory they hold (about 1.3 kB each).
const (
	pileUnderWay = 4
	pileStarting = 64
)

// maxRecordWait bounds how long a record waits for the attempts under way to end before it is
// committed anyway (a slow target must not hold back the history of the others).
const maxRecordWait = 250 * time.Millisecond

// schedulerClaimsInFlight is how many claim batches the leader's scheduler commits at once.
const schedulerClaimsInFlight = 4

// maxRecordTries bounds how often a batch of records is retried after a failed commit; past it
// the records are dropped (their executions stay claimed and run again on the next start).
const maxRecordTries = 10

// batchWriter commits an actor's writes in batches: the scheduler's claims and cancellations,
// the executor's records. It takes what is queued (up to batchSize of each), commits the
// cancellations first, then the claims in one transaction and the records in another, and
// starts over. While it commits, new work queues up, so batches grow with load and a lone fire
// is committed at once (no flush delay). Claims have priority over records.
type batchWriter struct {
	ops       chan op
	clock     clock.Clock
	batchSize int
	// depth is how many claim batches are committed at once: the leader's store is a server
	// that commits concurrent transactions together and runs them on several cores.
	depth int
	// busy reports whether attempts wait to start or are under way, and idle is signalled when
	// none is left (the executor's: its records wait for them).
	busy func() bool
	// starting reports whether attempts wait to start: records may then pile up to pileStarting
	// batches instead of pileUnderWay.
	starting      func() bool
	idle          <-chan struct{}
	commitClaims  func(context.Context, []*claimOp)
	commitRecords func(context.Context, []*recordOp) []*recordOp
}

func (w *batchWriter) isBusy() bool { return w.busy != nil && w.busy() }

// pile is how many records may wait now.
func (w *batchWriter) pile() int {
	if w.starting != nil && w.starting() {
		return pileStarting * w.batchSize
	}
	return pileUnderWay * w.batchSize
}

func (w *batchWriter) run(ctx context.Context) {
	wctx := context.WithoutCancel(ctx) // finish the last commits during shutdown
	// Cancels wait for the claim batches in flight and go before the claims that follow them.
	depth := max(w.depth, 1)
	slots := make(chan struct{}, depth)
	var inFlight sync.WaitGroup
	defer inFlight.Wait()
	var (
		claims  []*claimOp
		records []*recordOp
		cancels []*recordOp // cancelled executions: committed first, before the claims that follow them
		since   time.Time   // when the oldest record waiting came
	)
	add := func(o op) {
		if o.claim != nil {
			claims = append(claims, o.claim)
		}
		if o.record != nil && o.record.rec.Cancelled {
			cancels = append(cancels, o.record)
			return
		}
		if o.record != nil {
			if len(records) == 0 {
				since = w.clock.Now()
			}
			records = append(records, o.record)
		}
	}
	open := true
	// Records wait while attempts wait to start or are under way (a burst of attempts due
	// together: committing its first records would take the CPU its last attempts need), unless
	// they pile up (pile), have waited maxRecordWait or the dispatcher is stopping.
	var pile int // w.pile(), read as the loop starts and after it waited
	recordsNow := func() bool {
		return len(records) > 0 && (len(records) >= pile || !open || !w.isBusy() ||
			w.clock.Now().Sub(since) >= maxRecordWait)
	}
	// One timer per group of waiting records (since), made when the writer first waits for it.
	var (
		timer      clock.Timer
		timerSince time.Time
	)
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for open || len(claims) > 0 || len(records) > 0 || len(cancels) > 0 {
		pile = w.pile()
		if len(claims) == 0 && len(cancels) == 0 && !recordsNow() {
			var wait <-chan time.Time
			if len(records) > 0 {
				if timer == nil || !timerSince.Equal(since) {
					if timer != nil {
						timer.Stop()
					}
					timer, timerSince = w.clock.NewTimer(maxRecordWait-w.clock.Now().Sub(since)), since
				}
				wait = timer.C()
			}
			var (
				o        op
				received bool
			)
			select {
			case o, received = <-w.ops:
				if !received {
					open = false
				}
			case <-w.idle:
			case <-wait:
				timer = nil // fired
			}
			if !received {
				continue
			}
			add(o)
			pile = w.pile()
		}
	drain:
		for len(claims) < w.batchSize && len(records) < pile && open {
			select {
			case o, ok := <-w.ops:
				if !ok {
					open = false
					break drain
				}
				add(o)
			default:
				break drain
			}
		}
		if len(cancels) > 0 {
			inFlight.Wait()
			n := min(len(cancels), w.batchSize)
			batch := cancels[:n:n]
			cancels = cancels[n:]
			if failed := w.commitRecords(wctx, batch); len(failed) > 0 {
				cancels = append(failed, cancels...)
				t := w.clock.NewTimer(time.Duration(failed[0].tries) * 100 * time.Millisecond)
				select {
				case <-t.C():
				case <-ctx.Done():
					t.Stop()
				}
			}
			continue
		}
		if len(claims) > 0 {
			n := min(len(claims), w.batchSize)
			batch := claims[:n:n]
			claims = claims[n:]
			if depth == 1 {
				w.commitClaims(wctx, batch)
			} else {
				slots <- struct{}{}
				inFlight.Go(func() {
					w.commitClaims(wctx, batch)
					<-slots
				})
			}
		}
		// Claims go first (they start attempts: lateness), records when no claim waits or when
		// they pile up.
		if recordsNow() && (len(claims) == 0 || len(records) >= pile || !open) {
			n := min(len(records), w.batchSize)
			batch := records[:n:n]
			records = records[n:]
			since = w.clock.Now()
			if failed := w.commitRecords(wctx, batch); len(failed) > 0 {
				records = append(failed, records...)
				// Back off before trying the failed ones again.
				t := w.clock.NewTimer(time.Duration(failed[0].tries) * 100 * time.Millisecond)
				select {
				case <-t.C():
				case <-ctx.Done():
					t.Stop()
				}
			}
		}
	}
}

// commitRecordBatch commits one batch of records. On failure it returns the records to try
// again (giveUp is called for each tried maxRecordTries times) and the error; on success, the
// results.
func commitRecordBatch(ctx context.Context, st store.Driver, clk clock.Clock, batch []*recordOp,
	giveUp func(*recordOp, error)) ([]*recordOp, []store.AttemptRecordResult, error) {
	params := store.AttemptRecordManyParams{Records: make([]store.AttemptRecord, len(batch)), Now: clk.Now()}
	for i, r := range batch {
		params.Records[i] = r.rec
	}
	res, err := st.AttemptRecordMany(ctx, params)
	if err == nil {
		return nil, res, nil
	}
	var retry []*recordOp
	for _, r := range batch {
		r.tries++
		if r.tries < maxRecordTries {
			retry = append(retry, r)
		} else {
			giveUp(r, err)
		}
	}
	return retry, nil, err
}

// commitRecords commits one batch of the executor's records and returns the records to try
// again.
func (ex *Executor) commitRecords(ctx context.Context, batch []*recordOp) []*recordOp {
	retry, res, err := commitRecordBatch(ctx, ex.store, ex.clock, batch, func(r *recordOp, err error) {
		ex.pendingRecords.Add(-1)
		ex.log.Error("giving up recording an attempt: its execution runs again on the next start (with replicas: once its lease ends)",
			"job_id", r.rec.JobID, "execution_tag", r.exec.Tag, "error", err.Error())
		if ex.replica() {
			ex.owned.remove(r.rec.ExecutionID) // not renewed: rescued once its lease ends
		}
	})
	if err != nil {
		ex.log.Error("committing attempt records", "records", len(batch), "retrying", len(retry), "error", err.Error())
		return retry
	}
	replica := ex.replica()
	for i, r := range batch {
		if r.exec.Manual && (r.rec.Finished || res[i].Gone) {
			ex.manualDone(r.exec.JobID, r.exec.Tag)
		}
		if replica && (r.rec.Finished || res[i].Gone) {
			ex.owned.remove(r.rec.ExecutionID)
		}
		ex.backfillRecorded(r, res[i])
		if res[i].Gone {
			if replica && !r.rec.Cancelled {
				// Deleted with its job, or rescued from this replica after its lease ran out (it
				// runs again elsewhere, with its tag): this attempt is not recorded.
				ex.log.Info("attempt not recorded: its execution is no longer this replica's", "job_id", r.rec.JobID,
					"execution_tag", r.exec.Tag)
			}
			continue
		}
		if r.outcome != "" {
			ex.m.executions.WithLabelValues(r.outcome).Inc()
			if ex.cfg.OnOutcome != nil {
				ex.cfg.OnOutcome(Outcome{
					JobID: r.rec.JobID, Job: r.job.Key, Tag: r.exec.Tag, Outcome: r.outcome, Missed: r.exec.Missed,
					Scheduled: r.exec.Scheduled, End: r.rec.History.EndTime,
				})
			}
		}
		if res[i].State == store.JobStateFaulted && r.rec.Faulted {
			ex.log.Warn("job faulted", "job_id", r.rec.JobID, "execution_tag", r.exec.Tag, "faulted_after", ex.cfg.FaultedAfter)
		}
		if ex.cfg.OnRecord != nil && !r.rec.Cancelled {
			ex.cfg.OnRecord(r.rec, res[i])
		}
	}
	ex.inbox.post(recordsCommitted{records: batch, results: res})
	if replica && ex.starved.Load() {
		// What it owns is bounded too (room): the executions recorded here were still owned
		// until now, so the taker may have stopped for them rather than for its workers.
		ex.Wake()
	}
	return nil
}
