package dispatch

import (
	"context"
	"crypto/rand"
	"time"

	"github.com/google/uuid"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/jobstate"
)

// capacity is what a loop turn may claim: claims are sized to the free capacity of the workers
// (Workers plus one batch of claims, less the attempts under way or waiting for a worker) and of
// each target (TargetConcurrency plus one batch, less its attempts queued or under way), so
// that a backlog waits in the store, unclaimed, where misfire coalescing finds it. An
// occurrence due now takes one unit of both; one claimed ahead takes none (the burst of
// occurrences due together is claimed ahead in full) but is not claimed while there is no
// capacity left.
type capacity struct {
	l       *loop
	free    int
	targets map[string]int
}

// capacity is the room of this turn. While a backlog waits (entries parked), room is handed out
// only once a refill's worth is free (half a batch, for the workers and for a target): claiming each slot as it frees
// made a claim transaction per attempt or two in a burst (16 times the transactions of whole
// batches; BenchmarkFires lost a fifth of its fires/s). The queue still holds a batch beyond the workers, so
// they do not wait for the refill.
func (l *loop) capacity() *capacity {
	cfg := l.s.cfg
	if !l.s.to.room() {
		// The executors size what they take to their workers; the leader claims what falls due
		// (a target's claims in the writer bounded as below).
		return &capacity{l: l, free: capacityUnbounded}
	}
	free := cfg.Workers + cfg.BatchSize - l.s.to.workerLoad() - l.claimingDueAll
	if l.parkedN > 0 && free < l.refill() {
		free = 0
	}
	return &capacity{l: l, free: free}
}

// refill is the capacity a backlog waits for before more of it is claimed.
func (l *loop) refill() int { return max(1, l.s.cfg.BatchSize/2) }

// admit says whether e's occurrence may be claimed now, and takes its capacity.
func (c *capacity) admit(e *entry, now time.Time) bool {
	if c.free <= 0 {
		return false
	}
	if c.targets == nil {
		c.targets = map[string]int{}
	}
	tf, ok := c.targets[e.def.target]
	if !ok {
		cfg := c.l.s.cfg
		tf = cfg.TargetConcurrency + cfg.BatchSize - c.l.s.to.laneLoad(e.def.target) - c.l.claimingDue[e.def.target]
		if len(c.l.parked[e.def.target]) > 0 && tf < c.l.refill() {
			tf = 0 // a backlog of this target waits for a refill
		}
	}
	if tf <= 0 {
		c.targets[e.def.target] = tf
		return false
	}
	if !e.startAt().After(now) {
		c.free--
		tf--
	}
	c.targets[e.def.target] = tf
	return true
}

// park keeps a due entry that cannot be claimed yet.
func (l *loop) park(e *entry) {
	e.parked = true
	l.parked[e.def.target] = append(l.parked[e.def.target], e)
	l.parkedN++
	// The backlog gauge counts it before the signal says it is parked.
	l.s.parked.Store(int64(l.parkedN))
	l.s.signals.Parked.Signal(Parked{JobID: e.id, Due: e.next})
}

// unpark claims the parked entries that capacity now admits, oldest first in each target.
func (l *loop) unpark(now time.Time, room *capacity, claims []*claimOp) []*claimOp {
	for t, es := range l.parked {
		if room.free <= 0 {
			break
		}
		i := 0
		for ; i < len(es); i++ {
			e := es[i]
			if !e.parked || l.entries[e.id] != e {
				continue // changed or dropped since
			}
			if !room.admit(e, now) {
				break
			}
			e.parked = false
			claims = append(claims, l.claim(e, now))
		}
		l.parkedN -= i
		if i == len(es) {
			delete(l.parked, t)
		} else {
			clear(es[:i])
			l.parked[t] = es[i:]
		}
	}
	return claims
}

// claim builds the claim of e's due occurrence, coalescing misfired ones (or, under the misfire
// policy Skip, skipping them: see skipClaim). A job with an overlap policy has the store apply
// the overlap rule to it (run, buffer or skip).
func (l *loop) claim(e *entry, now time.Time) *claimOp {
	jitterKey := e.jitterKey()
	c := jobstate.ClaimWith(e.rule.rule, jitterKey, e.next, int(e.execCount), now, e.def.misfire)
	if c.Skipped > 0 {
		return l.skipClaim(e, c, now)
	}
	scheduled, missed, next := c.Scheduled, c.Missed, c.Next
	start := scheduled // when it starts: scheduled plus the job's jitter; it still reports scheduled
	if jitterKey != "" {
		start = jobstate.StartAt(e.rule.rule, jitterKey, scheduled)
	}
	e.claiming = true
	// The attempt's definition, decoded once here. The leader's scheduler runs no attempt (an
	// executor takes the execution and loads its job): it keeps the job's collection, which its
	// cancellations need, and decodes nothing in a burst of claims.
	var job *store.Job
	if l.s.to.decodes() {
		job = l.job(e)
	} else {
		job = &store.Job{ID: e.id, CollectionID: e.coll.id, Version: e.version}
	}
	return &claimOp{
		entry:  e,
		job:    job,
		target: e.def.target,
		due:    !start.After(now),
		claim: store.ExecutionClaim{
			Execution: store.Execution{
				JobID: e.id, Tag: newUUID(), Scheduled: scheduled, Missed: missed, Phase: store.ActionMain,
				DueAt: start, ClaimedAt: now,
			},
			ExpectVersion:     e.version,
			NextExecutionTime: next,
			Overlap:           overlapOf(e),
			SkipNext:          skipNext(e, scheduled),
		},
	}
}

// overlapOf is the overlap policy a claim of e carries ("": none to apply).
func overlapOf(e *entry) string {
	if jobstate.Overlapping(e.def.overlap) {
		return e.def.overlap
	}
	return ""
}

// skipNext is e's next execution should the overlap rule skip its occurrence at scheduled.
func skipNext(e *entry, scheduled time.Time) time.Time {
	if !jobstate.Overlapping(e.def.overlap) {
		return time.Time{}
	}
	return jobstate.SkipNext(e.rule.rule, scheduled)
}

// skipClaim is the claim that records the occurrences the misfire policy Skip skipped (c.Skipped
// of them, from e's due one to c.LastSkipped) in one Skipped history entry; it runs nothing and
// moves the job's next execution to the first occurrence not skipped (c.Scheduled; zero when
// none is left), which the loop then claims as any other.
func (l *loop) skipClaim(e *entry, c jobstate.Claimed, now time.Time) *claimOp {
	e.claiming = true
	tag := uuid.NewString()
	msg := jobstate.MisfireSkippedMessage(c.Skipped, e.next, c.LastSkipped, e.def.misfire.Threshold)
	l.s.log.Info("missed occurrences skipped (misfire policy Skip)", "job_id", e.id, "occurrences", c.Skipped,
		"first", e.next, "last", c.LastSkipped)
	return &claimOp{
		entry:  e,
		target: e.def.target,
		skip:   true,
		claim: store.ExecutionClaim{
			Execution:         store.Execution{JobID: e.id, Tag: tag, Scheduled: e.next, Phase: store.ActionMain, DueAt: now, ClaimedAt: now},
			ExpectVersion:     e.version,
			NextExecutionTime: c.Scheduled,
			Skip: &store.HistoryEntry{ExecutionTag: tag, ActionName: store.ActionMain, Status: store.HistorySkipped, Message: msg,
				ExpectedExecutionTime: e.next, StartTime: now, EndTime: now},
		},
	}
}

func (l *loop) claimed(ctx context.Context, ev claimsCommitted) {
	for i, c := range ev.claims {
		l.s.pendingClaims.Add(-1)
		if c.due {
			if l.claimingDue[c.target]--; l.claimingDue[c.target] <= 0 {
				delete(l.claimingDue, c.target)
			}
			l.claimingDueAll--
		}
		e := c.entry
		e.claiming = false
		if ev.err != nil {
			// Nothing was committed: try again a little later.
			if l.entries[e.id] == e {
				l.push(l.s.clock.Now().Add(time.Second), e)
			}
			continue
		}
		res := ev.results[i]
		if res.Err != nil {
			// The job changed under us (an API write, a manual run) or is gone: reload it.
			if l.entries[e.id] == e {
				l.reload(ctx, e.id)
			}
			continue
		}
		x := res.Execution
		switch {
		case res.Skipped:
			// Nothing runs: the job moved on to the skip's next execution, its count unchanged.
			next := c.claim.NextExecutionTime
			if !c.skip {
				next = c.claim.SkipNext
				l.s.log.Info("occurrence skipped: the job's previous execution is unfinished (overlap policy)",
					"job_id", e.id, "overlap", c.claim.Overlap, "expected_execution_time", c.claim.Execution.Scheduled)
			}
			l.s.signals.Skipped.Signal(Skipped{JobID: e.id, Scheduled: c.claim.Execution.Scheduled})
			l.s.m.skipped.Inc()
			if l.entries[e.id] == e {
				e.version = res.Version
				l.settle(ctx, e, next)
			}
			continue
		case l.entries[e.id] != e:
			// Dropped while the claim was being committed (deleted, or it cannot fire any more):
			// the change wins.
			l.s.cancel(ctx, x)
			continue
		case res.Buffered:
			// Stored waiting: the record that ends the job's unfinished execution releases it.
			l.s.signals.Buffered.Signal(Buffered{JobID: e.id, Tag: x.Tag, Scheduled: x.Scheduled})
		case x.DueAt.After(l.s.clock.Now()):
			// Claimed ahead: the attempt starts when due, unless a change cancels it first.
			l.s.to.hold(x, c.job, c.target, e.aheadStarted)
		default:
			l.s.to.run(x, c.job, c.target) // the leader's: an executor takes it
			e.started = max(e.started, x.Scheduled.UnixNano())
		}
		e.version, e.execCount = res.Version, count32(x.RepeatCount)
		l.settle(ctx, e, c.claim.NextExecutionTime)
	}
}

// settle moves an entry whose claim was answered on to its next execution: reloaded when its
// job changed meanwhile, dropped when nothing is left, else back in the heap.
func (l *loop) settle(ctx context.Context, e *entry, next time.Time) {
	e.next = next
	switch {
	case e.dirty:
		e.dirty = false
		if e.changed { // the job changed while the claim was being committed: the change wins
			e.changed = false
			l.cancelAhead(ctx, e.id)
		}
		l.reload(ctx, e.id)
		if l.entries[e.id] == nil { // it cannot fire any more (its collection disabled...)
			l.cancelAhead(ctx, e.id)
		}
	case e.next.IsZero():
		l.drop(e.id) // nothing left: it completes when its execution ends
	default:
		l.push(l.claimAt(e), e)
	}
}

// newUUID returns a random (version 4) UUID as text, as uuid.NewString does, in one allocation
// (the text) instead of two: the 16 bytes are drawn on the stack. Every fire draws two (its
// execution tag and its attempt's client request ID).
func newUUID() string {
	var u uuid.UUID
	_, _ = rand.Read(u[:])  // crypto/rand.Read does not fail (it crashes the program if it cannot read)
	u[6] = u[6]&0x0f | 0x40 // version 4
	u[8] = u[8]&0x3f | 0x80 // RFC 4122 variant
	return u.String()
}
