package storetest

import (
	"errors"
	"testing"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
)

func manualClaim(j *store.Job, tag string) store.ExecutionClaim {
	return store.ExecutionClaim{Execution: store.Execution{JobID: j.ID, Tag: tag, Scheduled: t0, Manual: true, Phase: store.ActionMain,
		DueAt: t0, ClaimedAt: t0}}
}

// wantInFlight fails unless err is a *store.RunInFlightError naming tag (and an ErrConflict).
func wantInFlight(t *testing.T, what string, err error, tag string) {
	t.Helper()
	var inFlight *store.RunInFlightError
	if !errors.As(err, &inFlight) || inFlight.Tag != tag || !errors.Is(err, store.ErrConflict) {
		t.Fatalf("%s: error = %v, want a manual run in flight with tag %s", what, err, tag)
	}
}

// testManualRunInFlight: a job runs on request once at a time, whoever asks: a manual claim of
// a job whose manual execution is stored and unfinished fails naming that execution's tag (in
// another call, or earlier in the same call); scheduled claims and other jobs are not held up;
// once the run finished, the job runs on request again.
func testManualRunInFlight(t *testing.T, d store.Driver) {
	ctx := t.Context()
	putCollection(t, d, "c", "Enabled")
	j := putJob(t, d, "c", "j", "Enabled", t0.Add(time.Hour))
	other := putJob(t, d, "c", "other", "Enabled", t0.Add(time.Hour))
	first := claim(t, d, manualClaim(j, "m1")).Execution

	res, err := d.ExecutionClaimMany(ctx, store.ExecutionClaimManyParams{Now: t0, Claims: []store.ExecutionClaim{
		manualClaim(j, "m2"), manualClaim(other, "o1"), manualClaim(other, "o2"),
	}})
	if err != nil {
		t.Fatal(err)
	}
	wantInFlight(t, "second manual run of j", res[0].Err, "m1")
	if res[1].Err != nil {
		t.Fatalf("manual run of another job: %v", res[1].Err)
	}
	wantInFlight(t, "manual run of other twice in one call", res[2].Err, "o1")
	equal(t, "runs counted", []int{getJob(t, d, j.ID).Status.ExecutionCount, getJob(t, d, other.ID).Status.ExecutionCount}, []int{1, 1})

	j = getJob(t, d, j.ID)
	if r := claim(t, d, scheduledClaim(j, "s1", t0.Add(2*time.Hour))); r.Execution.Tag != "s1" {
		t.Fatalf("scheduled claim: %+v", r)
	}
	record(t, d, store.AttemptRecord{ExecutionID: first.ID, JobID: j.ID, History: entry(first, store.ActionMain, store.HistoryCompleted, 0, "ok"),
		Finished: true})
	if r := claim(t, d, manualClaim(j, "m3")); r.Execution.Tag != "m3" {
		t.Fatalf("manual run after the first finished: %+v", r)
	}
	tags := []string{}
	for _, e := range unfinished(t, d) {
		tags = append(tags, e.Tag)
	}
	equal(t, "executions stored", tags, []string{"o1", "s1", "m3"})
}

// testManualRunRace: two callers (two replicas) ask for a manual run of one job at the same
// time: exactly one run is claimed, the other caller is told its tag.
func testManualRunRace(t *testing.T, d store.Driver) {
	putCollection(t, d, "c", "Enabled")
	for round := range 10 {
		j := putJob(t, d, "c", "j"+string(rune('a'+round)), "Enabled", t0.Add(time.Hour))
		results := raceClaims(t, d, round, [2]store.ExecutionClaim{manualClaim(j, "left"), manualClaim(j, "right")})
		switch {
		case results[0].Err == nil && results[1].Err != nil:
			wantInFlight(t, "right lost", results[1].Err, "left")
		case results[1].Err == nil && results[0].Err != nil:
			wantInFlight(t, "left lost", results[0].Err, "right")
		default:
			t.Fatalf("round %d: results %+v, want exactly one claim", round, results)
		}
		equal(t, "execution count", getJob(t, d, j.ID).Status.ExecutionCount, 1)
	}
	equal(t, "executions", len(unfinished(t, d)), 10)
}
