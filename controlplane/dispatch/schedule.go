package dispatch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/jobstate"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/recurrence"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"
)

// put adds or replaces the entry of a job as read from the store; a job that cannot fire is
// dropped.
func (l *loop) put(j *store.Job) {
	defKey, err := definitionKey(&j.Properties)
	if err != nil {
		err = fmt.Errorf("encode job %d: %w", j.ID, err)
	}
	l.putKeyed(j, keys{schedule: scheduleKey(&j.Properties), definition: defKey, err: err})
}

// putKeyed is put with j's keys computed (a load shares them between the jobs whose properties
// are the same text).
func (l *loop) putKeyed(j *store.Job, k keys) {
	old := l.entries[j.ID]
	if !jobstate.Schedulable(j.State, j.CollectionState, j.Status.NextExecutionTime) {
		l.drop(j.ID)
		return
	}
	key := k.scheduleOf(j)
	var sr *sharedRule
	if old != nil && old.rule.key == key {
		sr = old.rule // the schedule did not change
	} else {
		r, err := l.rules.acquire(key, j)
		if err != nil {
			l.s.log.Error("job has an invalid schedule: not scheduled", "job_id", j.ID, "job", j.Key.Name, "error", err.Error())
			l.drop(j.ID)
			return
		}
		l.drop(j.ID)
		sr = r
	}
	rule := sr.rule
	if old != nil {
		l.heap.remove(&old.slot)
	}
	defKey, err := k.definition, k.err
	if err != nil {
		l.s.log.Error("job cannot be kept: not scheduled", "job_id", j.ID, "job", j.Key.Name, "error", err.Error())
		l.drop(j.ID)
		return
	}
	next := jobstate.StoredInstant(rule, j.Status.NextExecutionTime)
	var started int64
	aheadStarted := &atomic.Int64{}
	if old != nil {
		old.parked = false
		aheadStarted = old.aheadStarted
		started = max(old.started, aheadStarted.Load())
		var startedAt time.Time
		if started != 0 {
			startedAt = time.Unix(0, started)
		}
		n, ok := jobstate.ResumeAfter(rule, next, startedAt)
		if !ok {
			if l.entries[j.ID] != nil {
				l.drop(j.ID)
			} else {
				l.rules.release(sr)
			}
			return
		}
		next = n
	}
	e := &entry{id: j.ID, name: j.Key.Name, coll: l.colls.acquire(j.CollectionID, j.Key.CollectionKey), def: l.acquireDef(defKey, j),
		rule: sr, next: next, version: j.Version, execCount: count32(j.Status.ExecutionCount), started: started, aheadStarted: aheadStarted}
	if cur := l.entries[j.ID]; cur != nil {
		l.releaseDef(cur.def)
		l.colls.release(cur.coll)
	}
	l.push(l.claimAt(e), e)
	l.entries[j.ID] = e
}

// prefetch reads, in one JobGetMany, the jobs that the changes among evs make the loop reload:
// after a burst of API writes (60,000 job PUTs, through any replica) the loop would otherwise
// read them one round trip each, and still be reading when they fall due. The jobs are read
// after every event of evs was posted, so each read is at least as new as the change it answers,
// as a JobGetByID in reload would be. A single change, or a failed read, leaves reload to read.
func (l *loop) prefetch(ctx context.Context, evs []schedulerEvent) {
	var ids []int64
	for _, e := range evs {
		ev, ok := e.(jobChanged)
		if !ok || ev.job != nil {
			continue // a job written here is not read back
		}
		if e := l.entries[ev.id]; e != nil && e.claiming {
			continue // reloaded when its claim is answered
		}
		ids = append(ids, ev.id)
	}
	if len(ids) < 2 {
		return
	}
	fetched := make(map[int64]*store.Job, len(ids))
	for len(ids) > 0 {
		n := min(len(ids), DefaultLoadPage)
		jobs, err := l.s.store.JobGetMany(ctx, store.JobGetManyParams{IDs: ids[:n]})
		if err != nil {
			l.s.log.Error("reloading changed jobs", "jobs", n, "error", err.Error())
			return
		}
		for _, id := range ids[:n] {
			fetched[id] = nil // not found, unless read below
		}
		for _, j := range jobs {
			fetched[j.ID] = j
		}
		ids = ids[n:]
	}
	l.fetched = fetched
}

// reload re-reads one job (or takes it from the jobs prefetched for this turn's events).
func (l *loop) reload(ctx context.Context, id int64) {
	if e := l.entries[id]; e != nil && e.claiming {
		e.dirty = true
		return
	}
	if j, ok := l.fetched[id]; ok {
		l.s.pauses.observe(id, j)
		if j == nil {
			l.drop(id)
			return
		}
		l.put(j)
		return
	}
	j, err := l.s.store.JobGetByID(ctx, store.JobGetByIDParams{ID: id})
	if errors.Is(err, store.ErrNotFound) {
		l.s.pauses.observe(id, nil)
		l.drop(id)
		return
	}
	if err != nil {
		l.s.log.Error("reloading a job", "job_id", id, "error", err.Error())
		again(ctx, l.s.clock, &l.s.inbox, schedulerEvent(jobChanged{id: id}))
		return
	}
	l.s.pauses.observe(id, j)
	l.put(j)
}

type sharedTarget struct {
	key  string
	refs int
}

// intern returns the loop's copy of a target, counted until releaseTarget.
func (l *loop) intern(t string) string {
	if c := l.targets[t]; c != nil {
		c.refs++
		return c.key
	}
	l.targets[t] = &sharedTarget{key: t, refs: 1}
	return t
}

func (l *loop) releaseTarget(t string) {
	if c := l.targets[t]; c != nil {
		if c.refs--; c.refs <= 0 {
			delete(l.targets, t)
		}
	}
}

// drop forgets a job: out of the heap, its rule released.
func (l *loop) drop(id int64) {
	if e := l.entries[id]; e != nil {
		l.heap.remove(&e.slot)
		e.parked = false
		l.rules.release(e.rule)
		l.releaseDef(e.def)
		l.colls.release(e.coll)
		delete(l.entries, id)
	}
}

// reloadCollection drops every job of a collection and loads back the ones that can fire; the
// occurrences claimed ahead of the others (the collection disabled, suspended or deleted) are
// cancelled.
func (l *loop) reloadCollection(ctx context.Context, id int64) {
	defer func() {
		for _, jid := range l.s.to.aheadJobsOfCollection(id) {
			if e := l.entries[jid]; e != nil && e.coll.id == id {
				continue // still schedulable
			}
			l.cancelAhead(ctx, jid)
		}
	}()
	for jid, e := range l.entries {
		if e.coll.id == id {
			if e.claiming {
				e.dirty = true
				continue
			}
			l.drop(jid)
		}
	}
	err := l.list(ctx, store.JobListSchedulableParams{CollectionID: id}, func(j *store.Job, k keys) {
		if e := l.entries[j.ID]; e != nil && e.claiming {
			return
		}
		l.putKeyed(j, k)
	})
	if err != nil {
		l.s.log.Error("reloading a collection", "collection_id", id, "error", err.Error())
		again(ctx, l.s.clock, &l.s.inbox, schedulerEvent(collectionChanged{id: id}))
	}
}

// job is an entry's job for an attempt (its properties shared, read-only); nil when its
// definition cannot be decoded (the worker then loads it).
func (l *loop) job(e *entry) *store.Job {
	p, err := e.def.properties()
	if err != nil {
		l.s.log.Error("decoding a job: loading it from the store instead", "job_id", e.id, "error", err.Error())
		return nil
	}
	return &store.Job{
		ID: e.id, CollectionID: e.coll.id, Properties: *p, Version: e.version,
		Key:   store.JobKey{CollectionKey: e.coll.key, Name: e.name},
		State: store.JobStateEnabled, CollectionState: store.CollectionStateEnabled,
	}
}

// scheduleKey identifies what a job's rule is compiled from (see keys.scheduleOf): startTime and
// recurrence; the creation time is added when there is no startTime (it is then the anchor).
func scheduleKey(p *wire.JobProperties) string {
	rec, err := json.Marshal(p.Recurrence)
	if err != nil {
		rec = []byte(fmt.Sprintf("%p", p)) // never shared
	}
	return p.StartTime + "\x00" + string(rec)
}

// ruleCache shares compiled rules between jobs with the same schedule (often most of them:
// compiled rules are the largest part of a job's memory), counting the jobs that use each.
type ruleCache map[string]*sharedRule

type sharedRule struct {
	rule *recurrence.Rule
	key  string // the map's key, shared by the entries that use the rule
	refs int
}

// acquire returns the shared rule of key (j's schedule), counted until release.
func (c ruleCache) acquire(key string, j *store.Job) (*sharedRule, error) {
	if r := c[key]; r != nil {
		r.refs++
		return r, nil
	}
	rule, err := recurrence.Compile(j.Properties.StartTime, j.Properties.Recurrence, j.CreatedAt)
	if err != nil {
		return nil, err
	}
	r := &sharedRule{rule: rule, key: key, refs: 1}
	c[key] = r
	return r, nil
}

func (c ruleCache) release(r *sharedRule) {
	if r == nil {
		return
	}
	if r.refs--; r.refs <= 0 && c[r.key] == r {
		delete(c, r.key)
	}
}
