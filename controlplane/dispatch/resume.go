package dispatch

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/clock"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/jobdef"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/jobstate"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/recurrence"
)

// resumeRetry is how long the resumer waits before it tries again a resume that failed.
const resumeRetry = time.Minute

// Resumed is a paused job that became Enabled by itself at its resumeAt (TestSignals.Resumed).
type Resumed struct {
	JobID int64
	At    time.Time // its resumeAt
	Next  time.Time // its next execution after the resume (zero: none, Completed)
}

// pauses are the jobs paused until a resumeAt, as the scheduler's resumer knows them: when each
// ends, and the job's version it was read at. The scheduler's loop tells it of every job it
// reads or is handed after a change (observe), so that a change costs the resumer no read of
// its own.
type pauses struct {
	mu   sync.Mutex
	at   map[int64]pause
	wake chan struct{}
}

// pause is when a job's pause ends and the version of the job that says so.
type pause struct {
	end     time.Time
	version int64
}

func newPauses() *pauses {
	return &pauses{at: map[int64]pause{}, wake: make(chan struct{}, 1)}
}

// observe takes note of a job as the scheduler's loop read it after a change (nil: deleted):
// paused until a resumeAt or not. A job older than the one it knows is ignored (a late event).
// It wakes the resumer, whose timer may have to move.
func (p *pauses) observe(id int64, j *store.Job) {
	var end time.Time
	if j != nil {
		if at, ok := pauseEnd(j); ok {
			end = at
		}
	}
	p.mu.Lock()
	old, had := p.at[id]
	switch {
	case !had && end.IsZero():
		p.mu.Unlock()
		return // neither paused before nor now: the commonest change
	case j == nil || end.IsZero() && j.Version >= old.version:
		delete(p.at, id)
	case !had || j.Version >= old.version:
		p.at[id] = pause{end: end, version: j.Version}
	}
	p.mu.Unlock()
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// set records when a job's pause ends (zero: it has none), as read at version.
func (p *pauses) set(id int64, end time.Time, version int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if end.IsZero() {
		delete(p.at, id)
		return
	}
	p.at[id] = pause{end: end, version: version}
}

// retry moves a job's pause end to at (a resume that failed is tried again then).
func (p *pauses) retry(id int64, at time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if ps, ok := p.at[id]; ok {
		ps.end = at
		p.at[id] = ps
	}
}

// due lists the jobs whose pause ends by now, and next is the earliest end after now (zero:
// none).
func (p *pauses) due(now time.Time) (ids []int64, next time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for id, ps := range p.at {
		switch at := ps.end; {
		case !now.Before(at):
			ids = append(ids, id)
		case next.IsZero() || at.Before(next):
			next = at
		}
	}
	return ids, next
}

// resumer enables each paused job when its resumeAt comes (SPEC 8: a pause that ends by itself),
// until ctx is done: it loads the paused jobs, hears of every job the loop reads after a change
// (pauses.observe), and sleeps on one timer until the earliest resumeAt. A job whose resumeAt passed while no
// scheduler ran (the daemon stopped, no leader) is enabled when the resumer starts, as of its
// resumeAt.
func (s *Scheduler) resumer(ctx context.Context) {
	for !s.loadPauses(ctx) {
		if !clock.Sleep(ctx, s.clock, resumeRetry) {
			return
		}
	}
	timer := s.clock.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		now := s.clock.Now()
		ids, next := s.pauses.due(now)
		for _, id := range ids {
			s.resume(ctx, id, now)
		}
		if len(ids) > 0 {
			continue // what failed waits for its retry time
		}
		if next.IsZero() {
			timer.Stop()
		} else {
			timer.Reset(next.Sub(now))
		}
		select {
		case <-ctx.Done():
			return
		case <-timer.C():
		case <-s.pauses.wake:
		}
	}
}

// loadPauses reads every paused job; false when the store failed (the resumer tries again).
func (s *Scheduler) loadPauses(ctx context.Context) bool {
	var after int64
	n := 0
	for {
		jobs, err := s.store.JobListPaused(ctx, store.JobListPausedParams{AfterID: after, Limit: DefaultLoadPage})
		if err != nil {
			if ctx.Err() == nil {
				s.log.Error("loading the paused jobs: trying again in a minute", "error", err.Error())
			}
			return false
		}
		for _, j := range jobs {
			after = j.ID
			if at, ok := pauseEnd(j); ok {
				s.pauses.set(j.ID, at, j.Version)
				n++
			}
		}
		if len(jobs) < DefaultLoadPage {
			if n > 0 {
				s.log.Info("paused jobs loaded", "jobs", n)
			}
			return true
		}
	}
}

// pauseEnd is when a job's pause ends by itself: ok when it is Disabled with a resumeAt.
func pauseEnd(j *store.Job) (time.Time, bool) {
	at, ok := jobdef.ResumeAt(&j.Properties)
	return at, ok && j.State == store.JobStateDisabled
}

// resume enables a job whose pause ended (jobstate.Resumed), unless it changed meanwhile.
func (s *Scheduler) resume(ctx context.Context, id int64, now time.Time) {
	retry := func(msg string, err error) {
		if ctx.Err() == nil {
			s.log.Error(msg+": trying again in a minute", "job_id", id, "error", err.Error())
			s.pauses.retry(id, now.Add(resumeRetry))
		}
	}
	for range 3 {
		j, err := s.store.JobGetByID(ctx, store.JobGetByIDParams{ID: id})
		if errors.Is(err, store.ErrNotFound) {
			s.pauses.set(id, time.Time{}, 0)
			return
		}
		if err != nil {
			retry("reading a job whose pause ended", err)
			return
		}
		at, ok := pauseEnd(j)
		if !ok {
			s.pauses.set(id, time.Time{}, j.Version) // changed meanwhile: enabled, or paused without end
			return
		}
		if !jobstate.ResumeDue(j.State, at, now) {
			s.pauses.set(id, at, j.Version) // paused until another time
			return
		}
		rule, err := recurrence.Compile(j.Properties.StartTime, j.Properties.Recurrence, j.CreatedAt)
		if err != nil {
			s.log.Error("a paused job's schedule cannot be read: it stays paused", "job_id", id, "error", err.Error())
			s.pauses.set(id, time.Time{}, j.Version)
			return
		}
		props := j.Properties.Clone()
		status := j.Status
		var state string
		status.NextExecutionTime, state = jobstate.Resumed(&props, rule, j.CollectionState, j.Status.ExecutionCount, at)
		_, _, err = s.store.JobPut(ctx, store.JobPutParams{
			Job: store.Job{Key: j.Key, Properties: props, State: state, Status: status}, ExpectVersion: j.Version, Now: now,
		})
		if errors.Is(err, store.ErrConflict) {
			continue // changed meanwhile: read it again
		}
		if err != nil {
			retry("enabling a job whose pause ended", err)
			return
		}
		s.pauses.set(id, time.Time{}, 0)
		s.log.Info("job resumed: its pause ended", "job_id", id, "job", j.Key.Name, "resume_at", at, "note", props.Note,
			"state", state, "next_execution_time", status.NextExecutionTime)
		s.inbox.post(jobChanged{id: id})
		s.signals.Resumed.Signal(Resumed{JobID: id, At: at, Next: status.NextExecutionTime})
		return
	}
	retry("enabling a job whose pause ended", store.ErrConflict)
}
