package dispatch

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/clock"
)

// op is one write for the batch writer: a claim (from the loop) or a record (from a worker).
type op struct {
	claim  *claimOp
	record *recordOp
}

type claimOp struct {
	entry  *entry
	job    *store.Job // decoded from def
	def    string
	target string
	due    bool // due when claimed (not ahead): it takes capacity
	claim  store.ExecutionClaim
}

type recordOp struct {
	exec    store.Execution // the execution as attempted
	job     *store.Job      // its job as attempted
	rec     store.AttemptRecord
	outcome string // "completed", "failed" or "faulted" when the record finishes the execution
	tries   int
}

// maxRecordWait bounds how long a record waits for the attempts under way to end before it is
// committed anyway (a slow target must not hold back the history of the others).
const maxRecordWait = 250 * time.Millisecond

// schedulerClaimsInFlight is how many claim batches the leader's scheduler commits at once.
const schedulerClaimsInFlight = 4

// maxRecordTries bounds how often a batch of records is retried after a failed commit; past it
// the records are dropped (their executions stay claimed and run again on the next start).
const maxRecordTries = 10

// writer commits claims and records in batches: it takes what is queued (up to BatchSize of
// each), commits the claims in one transaction and the records in another, reports to the
// loop, and starts over. While it commits, new work queues up, so batches grow with load and a
// lone fire is committed at once (no flush delay). Claims have priority over records.
func (d *Dispatcher) writer(ctx context.Context) {
	wctx := context.WithoutCancel(ctx) // finish the last commits during shutdown
	// The leader's scheduler commits up to schedulerClaimsInFlight claim batches at once (each
	// its own transaction, on its own connection): its store is a server that commits
	// concurrent transactions together and runs them on several cores. Cancels wait for the
	// batches in flight and go before the claims that follow them, as with one at a time.
	depth := 1
	if d.cfg.Role == RoleScheduler {
		depth = schedulerClaimsInFlight
	}
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
				since = d.clock.Now()
			}
			records = append(records, o.record)
		}
	}
	open := true
	// Records wait while attempts wait to start or are under way (a burst of attempts due
	// together: committing its first records would take the CPU its last attempts need), unless
	// they pile up, have waited maxRecordWait or the dispatcher is stopping.
	recordsNow := func() bool {
		return len(records) > 0 && (len(records) >= 4*d.cfg.BatchSize || !open || !d.tasks.busy() ||
			d.clock.Now().Sub(since) >= maxRecordWait)
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
		if len(claims) == 0 && len(cancels) == 0 && !recordsNow() {
			var wait <-chan time.Time
			if len(records) > 0 {
				if timer == nil || !timerSince.Equal(since) {
					if timer != nil {
						timer.Stop()
					}
					timer, timerSince = d.clock.NewTimer(maxRecordWait-d.clock.Now().Sub(since)), since
				}
				wait = timer.C()
			}
			var (
				o        op
				received bool
			)
			select {
			case o, received = <-d.ops:
				if !received {
					open = false
				}
			case <-d.tasks.idle:
			case <-wait:
				timer = nil // fired
			}
			if !received {
				continue
			}
			add(o)
		}
	drain:
		for len(claims) < d.cfg.BatchSize && len(records) < 4*d.cfg.BatchSize && open {
			select {
			case o, ok := <-d.ops:
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
			n := min(len(cancels), d.cfg.BatchSize)
			batch := cancels[:n:n]
			cancels = cancels[n:]
			if failed := d.commitRecords(wctx, batch); len(failed) > 0 {
				cancels = append(failed, cancels...)
				t := d.clock.NewTimer(time.Duration(failed[0].tries) * 100 * time.Millisecond)
				select {
				case <-t.C():
				case <-ctx.Done():
					t.Stop()
				}
			}
			continue
		}
		if len(claims) > 0 {
			n := min(len(claims), d.cfg.BatchSize)
			batch := claims[:n:n]
			claims = claims[n:]
			if depth == 1 {
				d.commitClaims(wctx, batch)
			} else {
				slots <- struct{}{}
				inFlight.Go(func() {
					d.commitClaims(wctx, batch)
					<-slots
				})
			}
		}
		// Claims go first (they start attempts: lateness), records when no claim waits or when
		// they pile up.
		if recordsNow() && (len(claims) == 0 || len(records) >= 4*d.cfg.BatchSize || !open) {
			n := min(len(records), d.cfg.BatchSize)
			batch := records[:n:n]
			records = records[n:]
			since = d.clock.Now()
			if failed := d.commitRecords(wctx, batch); len(failed) > 0 {
				records = append(failed, records...)
				// Back off before trying the failed ones again.
				t := d.clock.NewTimer(time.Duration(failed[0].tries) * 100 * time.Millisecond)
				select {
				case <-t.C():
				case <-ctx.Done():
					t.Stop()
				}
			}
		}
	}
}

func (d *Dispatcher) commitClaims(ctx context.Context, batch []*claimOp) {
	params := store.ExecutionClaimManyParams{Claims: make([]store.ExecutionClaim, len(batch)), Now: d.clock.Now(), Term: d.cfg.Term}
	for i, c := range batch {
		params.Claims[i] = c.claim
	}
	res, err := d.store.ExecutionClaimMany(ctx, params)
	if err != nil {
		d.log.Error("committing claims: they will be tried again", "claims", len(batch), "error", err.Error())
	}
	if errors.Is(err, store.ErrStaleTerm) && d.cfg.OnStaleTerm != nil {
		d.cfg.OnStaleTerm()
	}
	if err == nil && d.cfg.OnTakeable != nil {
		for _, r := range res {
			if r.Err == nil {
				d.cfg.OnTakeable() // the executors take them
				break
			}
		}
	}
	d.inbox.post(event{kind: evClaimed, claims: batch, claimResults: res, claimErr: err})
}

// commitRecords commits one batch and returns the records to try again.
func (d *Dispatcher) commitRecords(ctx context.Context, batch []*recordOp) []*recordOp {
	params := store.AttemptRecordManyParams{Records: make([]store.AttemptRecord, len(batch)), Now: d.clock.Now()}
	for i, r := range batch {
		params.Records[i] = r.rec
	}
	res, err := d.store.AttemptRecordMany(ctx, params)
	if err != nil {
		var retry []*recordOp
		for _, r := range batch {
			r.tries++
			if r.tries < maxRecordTries {
				retry = append(retry, r)
			} else {
				d.pendingRecords.Add(-1)
				d.log.Error("giving up recording an attempt: its execution runs again on the next start (with replicas: once its lease ends)",
					"job_id", r.rec.JobID, "execution_tag", r.exec.Tag, "error", err.Error())
				if d.cfg.Role == RoleExecutor {
					d.owned.remove(r.rec.ExecutionID) // not renewed: rescued once its lease ends
				}
			}
		}
		d.log.Error("committing attempt records", "records", len(batch), "retrying", len(retry), "error", err.Error())
		return retry
	}
	executor := d.cfg.Role == RoleExecutor
	for i, r := range batch {
		if r.exec.Manual && (r.rec.Finished || res[i].Gone) {
			d.manualDone(r.exec.JobID, r.exec.Tag)
		}
		if executor && (r.rec.Finished || res[i].Gone) {
			d.owned.remove(r.rec.ExecutionID)
		}
		if res[i].Gone {
			if executor && !r.rec.Cancelled {
				// Deleted with its job, or rescued from this replica after its lease ran out (it
				// runs again elsewhere, with its tag): this attempt is not recorded.
				d.log.Info("attempt not recorded: its execution is no longer this replica's", "job_id", r.rec.JobID,
					"execution_tag", r.exec.Tag)
			}
			continue
		}
		if r.outcome != "" {
			d.m.executions.WithLabelValues(r.outcome).Inc()
			if d.cfg.OnOutcome != nil {
				d.cfg.OnOutcome(Outcome{
					JobID: r.rec.JobID, Job: r.job.Key, Tag: r.exec.Tag, Outcome: r.outcome, Missed: r.exec.Missed,
					Scheduled: r.exec.Scheduled, End: r.rec.History.EndTime,
				})
			}
		}
		if res[i].State == store.JobStateFaulted && r.rec.Faulted {
			d.log.Warn("job faulted", "job_id", r.rec.JobID, "execution_tag", r.exec.Tag, "faulted_after", d.cfg.FaultedAfter)
		}
		if d.cfg.OnRecord != nil && !r.rec.Cancelled {
			d.cfg.OnRecord(r.rec, res[i])
		}
	}
	d.inbox.post(event{kind: evRecorded, records: batch, recordResults: res})
	return nil
}
