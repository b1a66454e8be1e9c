package storetest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
)

func testHistoryPurge(t *testing.T, d store.Driver) {
	ctx := t.Context()
	putCollection(t, d, "c", "Enabled")
	j := putJob(t, d, "c", "j", "Enabled", t0)
	k := putJob(t, d, "c", "k", "Enabled", t0)
	// j: 4 executions of 2 attempts each, ending a day apart; k: 1 execution.
	for i := range 4 {
		cur := getJob(t, d, j.ID)
		e := claim(t, d, scheduledClaim(cur, fmt.Sprintf("j%d", i), t0)).Execution
		for a := range 2 {
			h := entry(e, store.ActionMain, store.HistoryFailed, a, fmt.Sprintf("j%d.%d", i, a))
			h.EndTime = t0.Add(time.Duration(i) * 24 * time.Hour)
			record(t, d, store.AttemptRecord{ExecutionID: e.ID, JobID: j.ID, History: h, Next: t0, Phase: store.ActionMain, Attempt: a + 1})
		}
	}
	ek := claim(t, d, scheduledClaim(k, "k", t0)).Execution
	hk := entry(ek, store.ActionMain, store.HistoryCompleted, 0, "k")
	hk.EndTime = t0.Add(3 * 24 * time.Hour)
	record(t, d, store.AttemptRecord{ExecutionID: ek.ID, JobID: k.ID, History: hk, Next: t0, Phase: store.ActionMain, Attempt: 1})

	msgs := func(job *store.Job) []string {
		out := []string{}
		for _, h := range history(t, d, job, store.HistoryListParams{}) {
			out = append(out, h.Message)
		}
		sort.Strings(out)
		return out
	}
	// Older than a day after t0: execution j0 goes.
	n, err := d.HistoryPurge(ctx, store.HistoryPurgeParams{Before: t0.Add(24 * time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	equal(t, "deleted by age", n, int64(2))
	equal(t, "j after the age purge", msgs(j), []string{"j1.0", "j1.1", "j2.0", "j2.1", "j3.0", "j3.1"})
	// Keep the last 2 executions per job: j1 goes, k stays.
	n, err = d.HistoryPurge(ctx, store.HistoryPurgeParams{Before: t0, KeepPerJob: 2})
	if err != nil {
		t.Fatal(err)
	}
	equal(t, "deleted by count", n, int64(2))
	equal(t, "j after the count purge", msgs(j), []string{"j2.0", "j2.1", "j3.0", "j3.1"})
	equal(t, "k after the count purge", msgs(k), []string{"k"})
}

func testJobPurgeFinal(t *testing.T, d store.Driver) {
	ctx := t.Context()
	putCollection(t, d, "c", "Enabled")
	done := putJob(t, d, "c", "done", "Completed", time.Time{})     // final since t0
	faulted := putJob(t, d, "c", "faulted", "Faulted", time.Time{}) // final since t0
	live := putJob(t, d, "c", "live", "Enabled", t0)
	disabled := putJob(t, d, "c", "disabled", "Disabled", time.Time{})
	// Re-putting a final job keeps the time it became final.
	if _, _, err := d.JobPut(ctx, store.JobPutParams{Job: newJob("c", "done", "Completed", time.Time{}), Now: t0.Add(48 * time.Hour)}); err != nil {
		t.Fatal(err)
	}
	n, err := d.JobPurgeFinal(ctx, store.JobPurgeFinalParams{Before: t0})
	if err != nil {
		t.Fatal(err)
	}
	equal(t, "purged before they ended", n, int64(0))
	n, err = d.JobPurgeFinal(ctx, store.JobPurgeFinalParams{Before: t0.Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	equal(t, "purged after they ended", n, int64(2))
	for _, id := range []int64{done.ID, faulted.ID} {
		_, err := d.JobGetByID(ctx, store.JobGetByIDParams{ID: id})
		wantErr(t, "purged job", err, store.ErrNotFound)
	}
	for _, id := range []int64{live.ID, disabled.ID} {
		getJob(t, d, id)
	}

	// A job faulted by the dispatcher is final from that record's Now.
	j := putJob(t, d, "c", "j", "Enabled", t0)
	e := claim(t, d, scheduledClaim(j, "x", t0.Add(time.Minute))).Execution
	_, err = d.AttemptRecordMany(ctx, store.AttemptRecordManyParams{Now: t0.Add(10 * time.Hour), Records: []store.AttemptRecord{
		{ExecutionID: e.ID, JobID: j.ID, History: entry(e, store.ActionMain, store.HistoryFailed, 0, "x"), Failure: true, Finished: true, Faulted: true, FaultedAfter: 1},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if n, err = d.JobPurgeFinal(ctx, store.JobPurgeFinalParams{Before: t0.Add(10 * time.Hour)}); err != nil || n != 0 {
		t.Fatalf("purge at the fault time: n=%d err=%v, want 0", n, err)
	}
	if n, err = d.JobPurgeFinal(ctx, store.JobPurgeFinalParams{Before: t0.Add(11 * time.Hour)}); err != nil || n != 1 {
		t.Fatalf("purge after the fault time: n=%d err=%v, want 1", n, err)
	}

	// Many at once (more than a driver deletes per transaction).
	for i := range 120 {
		putJob(t, d, "c", fmt.Sprintf("done-%03d", i), "Completed", time.Time{})
	}
	if n, err = d.JobPurgeFinal(ctx, store.JobPurgeFinalParams{Before: t0.Add(time.Hour)}); err != nil || n != 120 {
		t.Fatalf("purge of 120 completed jobs: n=%d err=%v, want 120", n, err)
	}
	if c, err := d.JobCount(ctx, store.JobCountParams{Collection: collectionKey("c")}); err != nil || c != 2 {
		t.Fatalf("jobs left: %d, %v; want 2 (live and disabled)", c, err)
	}
}

// testHistoryPurgeAcrossJobs purges beyond the bound jobs whose IDs lie in different ranges of
// the purge's walk (a first one, one on a range's upper end, the last one alone in its range,
// empty ranges between), one of them with more entries beyond than one statement deletes. The
// jobs and their history are loaded (store.Dumper) with those IDs.
func testHistoryPurgeAcrossJobs(t *testing.T, d store.Driver) {
	ctx := t.Context()
	dumper, ok := d.(store.Dumper)
	if !ok {
		t.Fatalf("%T is no store.Dumper", d)
	}
	putCollection(t, d, "c", "Enabled")
	putJob(t, d, "c", "template", "Enabled", t0)
	var jobs, hist store.DumpTable
	for _, tab := range store.DumpTables() {
		switch tab.Name {
		case "jobs":
			jobs = tab
		case "history":
			hist = tab
		}
	}
	var template store.DumpRow
	err := dumper.Dump(ctx, func(r store.DumpReader) error {
		return r.Rows(ctx, jobs, func(row store.DumpRow) error { template = row; return nil })
	})
	if err != nil {
		t.Fatal(err)
	}
	// id: execution count (every execution one history entry, numbered 1..count).
	counts := map[int64]int{7: 5, 2000: 5003, 4001: 2}
	var jobRows, histRows []store.DumpRow
	var hid int64
	for _, id := range []int64{7, 2000, 4001} {
		row := slices.Clone(template)
		name := fmt.Sprintf("j%d", id)
		row[0], row[2], row[3], row[9] = id, name, store.NameKey(name), int64(counts[id])
		jobRows = append(jobRows, row)
		for r := 1; r <= counts[id]; r++ {
			hid++
			histRows = append(histRows, store.DumpRow{hid, id, hid, fmt.Sprintf("t%d", hid), store.ActionMain,
				store.HistoryCompleted, "", int64(0), int64(r), t0, t0, t0.Add(time.Hour)})
		}
	}
	if err := dumper.Load(ctx, jobs, jobRows); err != nil {
		t.Fatal(err)
	}
	if err := dumper.Load(ctx, hist, histRows); err != nil {
		t.Fatal(err)
	}
	if err := dumper.LoadDone(ctx); err != nil {
		t.Fatal(err)
	}
	pauses := 0
	pause := func(context.Context) error { pauses++; return nil }
	n, err := d.HistoryPurge(ctx, store.HistoryPurgeParams{Before: t0, KeepPerJob: 2, Pause: pause})
	if err != nil {
		t.Fatal(err)
	}
	equal(t, "deleted beyond the last 2 executions", n, int64(3+5001))
	// One statement for j7's 3; j2000's 5,001 in chunks of 500: ten full, one of 1.
	equal(t, "pauses after the statements that deleted", pauses, 1+11)
	kept := map[int64][]int64{}
	err = dumper.Dump(ctx, func(r store.DumpReader) error {
		return r.Rows(ctx, hist, func(row store.DumpRow) error {
			job, _ := row[1].(int64)
			repeat, _ := row[8].(int64)
			kept[job] = append(kept[job], repeat)
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	equal(t, "repeat counts kept per job", kept, map[int64][]int64{7: {4, 5}, 2000: {5002, 5003}, 4001: {1, 2}})
}

// testJobPurgeFinalRace purges finished jobs of several collections (more than one purge
// statement's worth) while each is put again, run now (refused: final, or not found: purged)
// and each collection is written: every write succeeds, each in turn. On PostgreSQL the purge
// locks the collections' rows before their jobs', as every other write does (its delete locked
// the jobs and then, in the job count's trigger, their collections, and PostgreSQL aborted one
// side of a deadlock with a job's put, which locks the collection and then the job).
func testJobPurgeFinalRace(t *testing.T, d store.Driver) {
	ctx := t.Context()
	const collections, jobs = 3, 40
	for round := range 5 {
		var (
			versions []int64
			finished []*store.Job
		)
		for c := range collections {
			versions = append(versions, putCollection(t, d, fmt.Sprintf("r%dc%d", round, c), "Enabled").Version)
			for i := range jobs {
				finished = append(finished, putJob(t, d, fmt.Sprintf("r%dc%d", round, c), fmt.Sprintf("j%02d", i), "Completed", time.Time{}))
			}
		}
		errs := make(chan error, collections*(2*jobs+1)+1)
		for _, j := range finished {
			go func() {
				res, err := d.ExecutionClaimMany(ctx, store.ExecutionClaimManyParams{Now: t0, Claims: []store.ExecutionClaim{manualClaim(j, "now")}})
				var refused *store.RunRefusedError
				switch {
				case err != nil:
				case errors.As(res[0].Err, &refused) || errors.Is(res[0].Err, store.ErrNotFound):
				default:
					err = fmt.Errorf("run now of %s: %+v", j.Key.Name, res[0])
				}
				errs <- err
			}()
		}
		go func() {
			_, err := d.JobPurgeFinal(ctx, store.JobPurgeFinalParams{Before: t0.Add(time.Hour)})
			errs <- err
		}()
		for c := range collections {
			name := fmt.Sprintf("r%dc%d", round, c)
			for i := range jobs {
				go func() { // replaced before its purge, or created again after it
					_, _, err := d.JobPut(ctx, store.JobPutParams{Job: newJob(name, fmt.Sprintf("j%02d", i), "Completed", time.Time{}), Now: t0})
					errs <- err
				}()
			}
			go func() {
				_, _, err := d.CollectionPut(ctx, store.CollectionPutParams{Collection: newCollection(name, "Enabled"),
					ExpectVersion: versions[c], Now: t0})
				errs <- err
			}()
		}
		for range collections*(2*jobs+1) + 1 {
			if err := <-errs; err != nil {
				t.Fatalf("round %d: %v", round, err)
			}
		}
		// Whatever was put again after its purge is final since t0 as well and goes now.
		if _, err := d.JobPurgeFinal(ctx, store.JobPurgeFinalParams{Before: t0.Add(time.Hour)}); err != nil {
			t.Fatalf("round %d: purge again: %v", round, err)
		}
		for c := range collections {
			if n, err := d.JobCount(ctx, store.JobCountParams{Collection: collectionKey(fmt.Sprintf("r%dc%d", round, c))}); err != nil || n != 0 {
				t.Fatalf("round %d: jobs left in c%d: %d, %v; want 0", round, c, n, err)
			}
		}
	}
}
