package storetest

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/jobstate"
)

// testRuleStates drives the driver through jobstate.StateTable, the table of the rules' own
// test: a job is listed by JobListSchedulable (and the overview's JobListNext) exactly when
// jobstate.Schedulable says so, a
// scheduled claim of it succeeds exactly when jobstate.Claimable does (else ErrConflict), and
// JobPurgeFinal deletes it exactly when jobstate.Final does. The SQL of those methods is the
// rules' twin: this pins both to the same rows.
func testRuleStates(t *testing.T, d store.Driver) {
	ctx := t.Context()
	jobs := make([]*store.Job, len(jobstate.StateTable))
	made := map[string]bool{}
	for i, c := range jobstate.StateTable {
		coll := "rule-" + strings.ToLower(c.Collection)
		if !made[coll] {
			putCollection(t, d, coll, c.Collection)
			made[coll] = true
		}
		var next time.Time
		if c.Scheduled {
			next = t0.Add(time.Minute)
		}
		jobs[i] = putJob(t, d, coll, fmt.Sprintf("j%d", i), c.State, next)
	}
	listed, err := d.JobListSchedulable(ctx, store.JobListSchedulableParams{})
	if err != nil {
		t.Fatal(err)
	}
	isListed := map[int64]bool{}
	for _, j := range listed {
		isListed[j.ID] = true
	}
	soonest, err := d.JobListNext(ctx, store.JobListNextParams{})
	if err != nil {
		t.Fatal(err)
	}
	isNext := map[int64]bool{}
	for _, j := range soonest {
		isNext[j.ID] = true
	}
	for i, c := range jobstate.StateTable {
		j := jobs[i]
		what := fmt.Sprintf("row %d (%s, collection %s, scheduled %v)", i, c.State, c.Collection, c.Scheduled)
		equal(t, what+": listed schedulable", isListed[j.ID], c.Schedulable)
		equal(t, what+": listed by JobListNext", isNext[j.ID], c.Schedulable)
		res, err := d.ExecutionClaimMany(ctx, store.ExecutionClaimManyParams{
			Claims: []store.ExecutionClaim{scheduledClaim(j, fmt.Sprintf("tag-%d", i), t0.Add(2*time.Minute))}, Now: t0})
		if err != nil {
			t.Fatalf("%s: claim: %v", what, err)
		}
		equal(t, what+": claimed", res[0].Err == nil, c.Claimable)
		if !c.Claimable && !errors.Is(res[0].Err, store.ErrConflict) {
			t.Fatalf("%s: claim error = %v, want ErrConflict", what, res[0].Err)
		}
	}
	if _, err := d.JobPurgeFinal(ctx, store.JobPurgeFinalParams{Before: t0.Add(time.Second)}); err != nil {
		t.Fatal(err)
	}
	for i, c := range jobstate.StateTable {
		_, err := d.JobGetByID(ctx, store.JobGetByIDParams{ID: jobs[i].ID})
		what := fmt.Sprintf("row %d (%s): purged as final", i, c.State)
		equal(t, what, errors.Is(err, store.ErrNotFound), c.Final)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			t.Fatal(err)
		}
	}
}

// testRuleRecord drives the driver through jobstate.RecordTable, the table of Record.Apply's own
// test: each row's job (state, consecutive faults, next execution, another execution stored)
// gets the row's record, all rows in one batch and then again one record per call, and the job's
// counters, state, next execution and version, and the record's result, are what the rule says.
// The driver's record SQL is the rule's twin: this pins both to the same rows.
func testRuleRecord(t *testing.T, d store.Driver) {
	ctx := t.Context()
	for _, batch := range []bool{true, false} {
		coll := fmt.Sprintf("rule-batch-%v", batch)
		putCollection(t, d, coll, "Enabled")
		before := make([]*store.Job, len(jobstate.RecordTable))
		records := make([]store.AttemptRecord, len(jobstate.RecordTable))
		for i, c := range jobstate.RecordTable {
			var next time.Time
			if c.Job.Scheduled {
				next = t0.Add(time.Hour)
			}
			job := newJob(coll, fmt.Sprintf("r%d", i), c.Job.State, next)
			job.Status.ConsecutiveFaults = c.Job.ConsecutiveFaults
			j, _, err := d.JobPut(ctx, store.JobPutParams{Job: job, Now: t0})
			if err != nil {
				t.Fatal(err)
			}
			e := claim(t, d, manualClaim(j, fmt.Sprintf("%s-r%d", coll, i))).Execution
			if c.Job.OtherExecutions {
				claim(t, d, store.ExecutionClaim{Execution: store.Execution{JobID: j.ID, Tag: fmt.Sprintf("%s-r%d-other", coll, i),
					Scheduled: t0, Phase: store.ActionMain, DueAt: t0.Add(time.Hour), ClaimedAt: t0}})
			}
			before[i] = getJob(t, d, j.ID)
			status := store.HistoryCompleted
			if c.Record.Failure || c.Record.Faulted {
				status = store.HistoryFailed
			}
			r := store.AttemptRecord{ExecutionID: e.ID, JobID: j.ID, History: entry(e, store.ActionMain, status, 0, c.Name),
				Failure: c.Record.Failure, Finished: c.Record.Finished, Faulted: c.Record.Faulted, FaultedAfter: c.Record.FaultedAfter}
			if !c.Record.Finished {
				r.Next, r.Phase, r.Attempt = t0.Add(time.Minute), store.ActionMain, 1
				if c.Record.Failure {
					r.Phase, r.Attempt = store.ActionError, 0
				}
			}
			records[i] = r
		}
		results := make([]store.AttemptRecordResult, 0, len(records))
		if batch {
			res, err := d.AttemptRecordMany(ctx, store.AttemptRecordManyParams{Records: records, Now: t0.Add(time.Minute)})
			if err != nil {
				t.Fatal(err)
			}
			results = res
		} else {
			for _, r := range records {
				results = append(results, record(t, d, r))
			}
		}
		for i, c := range jobstate.RecordTable {
			b, w := before[i], c.Want
			what := fmt.Sprintf("batch %v, %s", batch, c.Name)
			want := store.AttemptRecordResult{}
			wantJob := *b
			if w.Changed {
				want = store.AttemptRecordResult{State: w.State, Version: b.Version + 1, Previous: b.Version}
				wantJob.Version++
			}
			equal(t, what+": result", results[i], want)
			wantJob.State = w.State
			wantJob.Status.FailureCount += w.Failures
			wantJob.Status.FaultedCount += w.Faults
			wantJob.Status.ConsecutiveFaults = w.ConsecutiveFaults
			if w.Final {
				wantJob.Status.NextExecutionTime = time.Time{}
			}
			got := getJob(t, d, b.ID)
			equal(t, what+": state", got.State, wantJob.State)
			equal(t, what+": status", got.Status, wantJob.Status)
			equal(t, what+": version", got.Version, wantJob.Version)
		}
	}
}
