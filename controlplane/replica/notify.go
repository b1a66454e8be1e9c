package replica

import (
	"context"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/clock"
)

// The notifications between replicas: listening to them, sending this replica's, and passing
// those of the others to its dispatchers.

// takeableNow tells every executor that executions wait to be taken: through the store (this
// replica's executor too hears it, so that all race for them alike), or at once without one.
func (r *Replica) takeableNow() {
	if r.notifier == nil {
		r.exec.Wake()
		return
	}
	select {
	case r.takeable <- struct{}{}:
	default: // one is pending: it wakes them all
	}
}

func (r *Replica) notify(c store.Change) {
	if r.notifier == nil {
		return
	}
	c.Origin = r.cfg.ID
	r.changes.Push(c) // the notifier goroutine sends them in order; a full queue holds the API back
}

// resyncNow makes the leader's scheduler load its schedule again.
func (r *Replica) resyncNow() {
	select {
	case r.resync <- struct{}{}:
	default:
	}
}

// relisten ends the current LISTEN: the replica listens again on a new connection.
func (r *Replica) relisten() {
	r.listenMu.Lock()
	cancel := r.listenCancel
	r.listenMu.Unlock()
	if cancel != nil {
		cancel()
	}
}

// listen passes the changes other replicas notify to this replica's dispatcher, listening again
// after a failure (and then reloading the schedule and reading the change feed: notifications
// may have been missed).
func (r *Replica) listen(ctx context.Context) {
	first := true
	for ctx.Err() == nil {
		lctx, cancel := context.WithCancel(ctx)
		r.listenMu.Lock()
		r.listenCancel = cancel
		r.listenMu.Unlock()
		err := r.notifier.Listen(lctx, func() {
			if r.feed != nil {
				r.feed.listened()
				r.feed.readNow()
			}
			r.listening.Store(true)
			// A change notified before this replica listened is missed: a dispatcher that was
			// already running (leading before the first listen, or across a reconnection)
			// loads everything again.
			if !first || r.current() != nil {
				select {
				case r.resync <- struct{}{}:
				default:
				}
			}
			first = false
		}, r.changed)
		cancel()
		r.listening.Store(false)
		if ctx.Err() != nil {
			return
		}
		r.log.Warn("listening to changes", "error", err.Error())
		if !clock.Sleep(ctx, r.cfg.Clock, relistenDelay) {
			return
		}
	}
}

func (r *Replica) changed(c store.Change) {
	switch c.Kind {
	case store.ChangeTakeable:
		r.exec.Wake() // this replica's own notification too
		return
	case store.ChangePing:
		if c.Origin == r.cfg.ID && r.feed != nil {
			r.feed.pong(c.ID)
		}
		return
	}
	if c.Origin == r.cfg.ID || r.feed != nil && c.Origin == r.feed.store.Origin() {
		return
	}
	if r.feed != nil && !r.feed.notified(c) {
		return // the change feed delivered it first
	}
	r.deliver(c)
}

// deliver passes a change made through another replica to this replica's dispatchers.
func (r *Replica) deliver(c store.Change) {
	d := r.current()
	switch c.Kind {
	case store.ChangeJob:
		if d != nil {
			d.JobChanged(c.ID)
		}
		r.exec.JobChanged(c.ID)
	case store.ChangeCollection:
		if d != nil {
			d.CollectionChanged(c.ID)
		}
		r.exec.CollectionChanged(c.ID)
	}
}

// relistenDelay and renotifyDelay are the waits (on the replica's clock) before listening again
// after a failed LISTEN and before sending a failed notification again.
const (
	relistenDelay = 250 * time.Millisecond
	renotifyDelay = 100 * time.Millisecond
)

// maxNotify bounds the changes sent in one notification round trip.
const maxNotify = 1024

// maxQueued bounds the changes made through this replica waiting to be notified; a full queue
// holds the API back (Push waits).
const maxQueued = 4096

// sendChanges notifies the changes made through this replica, in order: those queued together in
// one round trip (a burst of API writes costs one commit, not one each), with a pending
// ChangeTakeable.
func (r *Replica) sendChanges(ctx context.Context) {
	var batch []store.Change // grown to what a round trip carries, at most maxNotify
	takeable := store.Change{Kind: store.ChangeTakeable, Origin: r.cfg.ID}
	for {
		select {
		case <-ctx.Done():
			return
		case <-r.changes.Ready():
			batch = r.changes.Take(batch[:0], maxNotify)
		case <-r.takeable:
			batch = append(batch[:0], takeable)
		}
	drain:
		for len(batch) < maxNotify {
			n := len(batch)
			batch = r.changes.Take(batch, maxNotify-n)
			select {
			case <-r.takeable:
				batch = append(batch, takeable)
			default:
				if len(batch) == n {
					break drain
				}
			}
		}
		if len(batch) == 0 {
			continue // the token of changes an earlier round took
		}
		for ctx.Err() == nil {
			err := r.notifier.Notify(ctx, batch...)
			if err == nil {
				break
			}
			r.log.Warn("notifying changes", "changes", len(batch), "first_kind", batch[0].Kind, "first_id", batch[0].ID, "error", err.Error())
			clock.Sleep(ctx, r.cfg.Clock, renotifyDelay)
		}
	}
}
