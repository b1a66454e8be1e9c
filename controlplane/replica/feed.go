package replica

import (
	"context"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/clock"
)

// Defaults of the change feed's reader.
const (
	// DefaultFeedInterval is how often a replica reads the change feed for changes it was not
	// notified of, and checks that its own notifications reach it.
	DefaultFeedInterval = 2 * time.Second
	// DefaultFeedRetention is how long the leader keeps the feed's changes: a replica that has
	// not read it for half as long reloads its schedule instead.
	DefaultFeedRetention = 10 * time.Minute
	// maxSeen bounds the sequence numbers remembered to deliver each change once.
	maxSeen = 1 << 16
)

// feed is a replica's reader of the store's change feed: the backstop of notifications. Every
// FeedInterval, after every LISTEN and when it starts, it reads the changes committed since it
// last read and delivers those no notification delivered (each change once, whichever came
// first). It also sends itself a ping notification each time: one not heard back by the next
// read means the LISTEN connection is dead without having failed (a connection dropped
// silently), and the replica listens again on a new one.
type feed struct {
	r      *Replica
	store  store.ChangeFeed
	now    chan struct{} // read at once (after a LISTEN)
	swept  prometheus.Counter
	reads  prometheus.Counter
	failed prometheus.Counter

	mu     sync.Mutex
	seen   map[int64]bool // seq -> delivered by the feed (true) or by a notification (false)
	pinged int64          // the last ping sent
	ponged int64          // the last ping heard back (or sent before the last LISTEN)
}

func newFeed(r *Replica, st store.ChangeFeed) *feed {
	return &feed{
		r: r, store: st, now: make(chan struct{}, 1), seen: map[int64]bool{},
		swept: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "scheduler_changes_swept_total",
			Help: "Changes made through other replicas that reached this one by the change feed, not by a notification (a notification missed or late).",
		}),
		reads: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "scheduler_change_feed_reads_total", Help: "Reads of the change feed.",
		}),
		failed: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "scheduler_change_feed_read_errors_total", Help: "Reads of the change feed that failed (read again at the next interval).",
		}),
	}
}

func (f *feed) collectors() []prometheus.Collector {
	return []prometheus.Collector{f.swept, f.reads, f.failed}
}

// readNow asks for a read at once.
func (f *feed) readNow() {
	select {
	case f.now <- struct{}{}:
	default:
	}
}

// notified takes a change that a notification delivered: it reports whether it is news (the
// feed did not deliver it first).
func (f *feed) notified(c store.Change) bool {
	if c.Seq == 0 {
		return true
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if byFeed, ok := f.seen[c.Seq]; ok && byFeed {
		delete(f.seen, c.Seq)
		return false
	}
	f.remember(c.Seq, false)
	return true
}

// fromFeed takes a change the feed read: it reports whether it is news (no notification
// delivered it first).
func (f *feed) fromFeed(c store.Change) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if byFeed, ok := f.seen[c.Seq]; ok && !byFeed {
		delete(f.seen, c.Seq) // the feed returns each change once: forgotten
		return false
	}
	f.remember(c.Seq, true)
	return true
}

// remember records seq; past maxSeen (changes notified and not read, or read and never
// notified: a reader far behind, a listener that is dead) it forgets them all, at the price of
// delivering some twice.
func (f *feed) remember(seq int64, byFeed bool) {
	if len(f.seen) >= maxSeen {
		clear(f.seen)
	}
	f.seen[seq] = byFeed
}

// pong records a ping heard back.
func (f *feed) pong(n int64) {
	f.mu.Lock()
	f.ponged = max(f.ponged, n)
	f.mu.Unlock()
}

// run reads the feed until ctx is done. The first read places the cursor (before the replica
// elects or listens, so that nothing committed after a schedule is loaded escapes it); when it
// is placed again (the first read failed, or the cursor fell behind the feed's retention) the
// leader's schedule is loaded again.
func (f *feed) run(ctx context.Context, placed chan<- struct{}) {
	var (
		cursor    store.ChangeCursor
		lastRead  time.Time
		lastPrune time.Time
	)
	clk := f.r.cfg.Clock
	interval, retention := f.r.cfg.FeedInterval, f.r.cfg.FeedRetention
	read := func(ctx context.Context) {
		now := clk.Now()
		if cursor.Next != 0 && now.Sub(lastRead) > retention/2 {
			f.r.log.Warn("the change feed was not read for too long: reloading the schedule", "since", lastRead)
			cursor = store.ChangeCursor{}
		}
		replace := cursor.Next == 0
		changes, next, err := f.store.ChangesSince(ctx, cursor)
		f.reads.Inc()
		switch {
		case ctx.Err() != nil:
			return
		case err != nil:
			f.failed.Inc()
			f.r.log.Warn("reading the change feed", "error", err.Error())
		default:
			cursor, lastRead = next, now
			if replace {
				if placed != nil {
					close(placed)
					placed = nil
				} else {
					f.r.resyncNow()
				}
			}
			for _, c := range changes {
				if c.Origin != f.store.Origin() && f.fromFeed(c) {
					f.swept.Inc()
					f.r.deliver(c)
				}
			}
		}
		f.checkListener(ctx)
		if f.r.Leading() && now.Sub(lastPrune) >= time.Minute {
			if n, err := f.store.ChangesPrune(ctx, retention); err != nil {
				f.r.log.Warn("pruning the change feed", "error", err.Error())
			} else {
				lastPrune = now
				if n > 0 {
					f.r.log.Debug("pruned the change feed", "changes", n)
				}
			}
		}
	}
	if ctx.Err() != nil {
		return
	}
	read(ctx)
	clock.Every(ctx, clk, interval, f.now, read)
}

// checkListener listens again when the ping sent two reads ago was not heard back (one read
// ago may still be on its way behind a burst of notifications), and sends the next.
func (f *feed) checkListener(ctx context.Context) {
	if !f.r.listening.Load() {
		return // not listening: nothing to check, the listener is at it
	}
	f.mu.Lock()
	lost := f.ponged < f.pinged-1
	n := f.pinged + 1
	f.mu.Unlock()
	if lost {
		f.r.log.Warn("a notification this replica sent itself never came back: listening again on a new connection")
		f.listened()
		f.r.relisten()
		return
	}
	if err := f.r.notifier.Notify(ctx, store.Change{Kind: store.ChangePing, ID: n, Origin: f.r.cfg.ID}); err != nil {
		if ctx.Err() == nil {
			f.r.log.Warn("notifying a ping", "error", err.Error())
		}
		return
	}
	f.mu.Lock()
	f.pinged = n
	f.mu.Unlock()
}

// listened forgets the pings sent before a new LISTEN.
func (f *feed) listened() {
	f.mu.Lock()
	f.ponged = f.pinged
	f.mu.Unlock()
}
