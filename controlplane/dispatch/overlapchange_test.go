package dispatch_test

import (
	"testing"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/dispatch"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/jobdef"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/jobstate"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"
)

// changeByOwner changes a stored job as the API's PUT does (a change: store.JobPutParams.CancelWaiting,
// at the version read) and tells the dispatcher of the job as written.
func (e *env) changeByOwner(id int64, change func(*wire.JobProperties)) *store.Job {
	e.t.Helper()
	cur := e.job(id)
	upd := *cur
	change(&upd.Properties)
	stored, _, err := e.store.JobPut(e.t.Context(), store.JobPutParams{Job: upd, ExpectVersion: cur.Version, Now: e.clock.Now(),
		CancelWaiting: jobstate.WaitingOnChange(jobdef.OverlapOf(&cur.Properties))})
	if err != nil {
		e.t.Fatal(err)
	}
	e.disp.JobWritten(stored)
	return stored
}

// waitingOf lists the tags of the job's executions waiting (buffered).
func (e *env) waitingOf(jobID int64) []string {
	e.t.Helper()
	tags := []string{}
	for _, x := range e.unfinished() {
		if x.JobID == jobID && x.DueAt.Equal(store.BufferedDueAt) {
			tags = append(tags, x.Tag)
		}
	}
	return tags
}

// bufferOneWaiting starts a BufferOne job whose first occurrence (09:01) hangs and whose second
// (09:02) is buffered: the running tag, the buffered occurrence and the target's release.
func bufferOneWaiting(e *env, tg *target, name string) (j *store.Job, running string, b dispatch.Buffered, release func()) {
	e.t.Helper()
	j, release = slowJob(e, tg, name, jobstate.OverlapBufferOne)
	e.start()
	e.quiet(at(1))
	e.clock.Set(at(1))
	running = tg.next(e.t).Header.Get("x-ms-execution-tag")
	e.clock.Set(at(2))
	b, err := e.disp.TestSignals.Buffered.Wait(wait, func(b dispatch.Buffered) bool { return b.Scheduled.Equal(at(2)) })
	if err != nil {
		e.t.Fatal(err)
	}
	got := e.job(j.ID)
	equal(e.t, "while it waits", []any{e.waitingOf(j.ID), got.Status.ExecutionCount, got.Status.LastExecutionTime.Equal(at(1))},
		[]any{[]string{b.Tag}, 2, true})
	return j, running, b, release
}

// A change of a job other than disabling it (here its note) cancels the occurrence waiting for
// its unfinished execution, as it cancels an occurrence claimed ahead (SPEC 5): when the running
// one ends nothing runs in its place; the job runs as changed from its next occurrence.
func TestOverlapChangeCancelsTheWaitingOccurrence(t *testing.T) {
	tg := newTarget(t)
	e := newOverlapEnv(t, nil)
	j, _, _, release := bufferOneWaiting(e, tg, "changed")
	e.changeByOwner(j.ID, func(p *wire.JobProperties) { p.Note = "changed while one waits" })
	got := e.job(j.ID)
	equal(t, "after the change", []any{e.waitingOf(j.ID), got.Status.ExecutionCount}, []any{[]string{}, 1})

	release()
	r := e.record()
	equal(t, "the first recorded", r.History.ExpectedExecutionTime.Equal(at(1)), true)
	tg.noHit(t)
	e.quiet(at(3))
	e.clock.Set(at(3))
	equal(t, "then its next occurrence", tg.next(t).Header.Get("x-ms-scheduler-expected-execution-time"), at(3).Format(time.RFC3339))
	e.record()
	lines, _ := summary(e.history(j))
	equal(t, "history", lines, []string{"Completed 09:01", "Completed 09:03"})
	equal(t, "executionCount", e.job(j.ID).Status.ExecutionCount, 2)
}

// The policy changed from BufferOne to Allow while an occurrence waits, and the running
// execution then runs again after a restart: its record asks for no release (the policy as
// loaded is Allow), yet nothing is left waiting for ever: the change cancelled it.
func TestOverlapPolicyChangedToAllowLeavesNothingWaiting(t *testing.T) {
	tg := newTarget(t)
	e := newOverlapEnv(t, func(c *dispatch.Config) { c.ShutdownGrace = 10 * time.Millisecond })
	j, running, _, release := bufferOneWaiting(e, tg, "allowed")
	e.changeByOwner(j.ID, func(p *wire.JobProperties) { p.Overlap = jobstate.OverlapAllow })
	equal(t, "after the change", e.waitingOf(j.ID), []string{})

	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		e.stop()
	}()
	// The hanging attempt is cut short once the stop's grace period passed on the fake clock.
	for waiting := true; waiting; {
		select {
		case <-stopped:
			waiting = false
		case <-time.After(time.Millisecond):
			e.clock.Advance(20 * time.Millisecond)
		}
	}
	release()
	e.start()
	equal(t, "the unfinished execution again", tg.next(t).Header.Get("x-ms-execution-tag"), running)
	e.record()
	equal(t, "nothing waits", e.waitingOf(j.ID), []string{})
	lines, _ := summary(e.history(j))
	equal(t, "history", lines, []string{"Completed 09:01"})
	equal(t, "executionCount", e.job(j.ID).Status.ExecutionCount, 1)
}

// A buffered occurrence starts when it is released: the job's lastExecutionTime is the running
// one's while it waits (bufferOneWaiting checks it) and becomes the release's time then.
func TestOverlapBufferedLastExecutionTimeIsItsStart(t *testing.T) {
	tg := newTarget(t)
	e := newOverlapEnv(t, nil)
	j, _, b, release := bufferOneWaiting(e, tg, "last")
	end := at(2).Add(30 * time.Second)
	e.clock.Set(end)
	release()
	e.record()
	equal(t, "the buffered one runs", tg.next(t).Header.Get("x-ms-execution-tag"), b.Tag)
	got := e.job(j.ID)
	equal(t, "lastExecutionTime", got.Status.LastExecutionTime.UTC().Format(time.RFC3339), end.Format(time.RFC3339))
	e.record()
}
