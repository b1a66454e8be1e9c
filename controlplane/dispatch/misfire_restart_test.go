package dispatch_test

import (
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/jobstate"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"
)

// A daemon stopped for ten minutes of due occurrences (an every-minute job; the first ran at
// 09:01; restarted at 09:11:30 on the same store file; the daemon's threshold is one minute):
// each misfire policy does what it says, and the job then carries on on schedule.
//   - RunOnce: the missed occurrences are coalesced into one execution, expected at 09:11.
//   - Skip: the nine missed by more than the threshold (09:02 to 09:10) are skipped, recorded in
//     one Skipped entry saying how many and from when to when; 09:11, late by 30 s, runs.
//   - RunAll: each of the ten runs, with its own tag and expected time.
func TestMisfirePoliciesAfterTenMinutesDown(t *testing.T) {
	restart := at(11).Add(30 * time.Second)
	for _, tc := range []struct {
		policy  string
		history []string
		count   int
		message string // of the entry expected at 09:02 (Skip) or 09:11 (RunOnce)
	}{
		{jobstate.MisfireRunOnce, []string{"Completed 09:01", "Completed 09:11"}, 2,
			"9 missed occurrence(s) before 2026-06-01T09:11:00Z were coalesced into this execution (misfire threshold 1m0s)."},
		{jobstate.MisfireSkip, []string{"Completed 09:01", "Skipped 09:02", "Completed 09:11"}, 2,
			jobstate.MisfireSkippedMessage(9, at(2), at(10), time.Minute)},
		{jobstate.MisfireRunAll, []string{"Completed 09:01", "Completed 09:02", "Completed 09:03", "Completed 09:04", "Completed 09:05",
			"Completed 09:06", "Completed 09:07", "Completed 09:08", "Completed 09:09", "Completed 09:10", "Completed 09:11"}, 11, ""},
	} {
		t.Run(tc.policy, func(t *testing.T) {
			tg := newTarget(t)
			e := newEnv(t, t0, nil)
			props := everyMinute(at(1))
			props.Action = httpAction(tg.URL + "/m")
			props.Misfire = &wire.JobMisfire{Policy: tc.policy}
			j := e.putJob("m", props, "Enabled")
			e.start()
			e.quiet(at(1).Add(-lookahead))
			e.clock.Set(at(1))
			tg.next(t)
			e.record()
			e.quiet(at(2).Add(-lookahead))
			e.stop()

			e.clock.Set(restart) // ten minutes of occurrences went by while it was down
			e.start()
			var expected []string
			for range len(tc.history) - 1 - strings.Count(strings.Join(tc.history, ","), "Skipped") {
				expected = append(expected, tg.next(t).Header.Get("x-ms-scheduler-expected-execution-time"))
				e.record()
			}
			e.quiet(at(12).Add(-lookahead))
			tg.noHit(t)
			sort.Strings(expected)
			if tc.policy != jobstate.MisfireRunAll {
				equal(t, "what ran after the restart", expected, []string{at(11).Format(time.RFC3339)})
			}
			lines, skipped := summary(e.history(j))
			equal(t, "history", lines, tc.history)
			equal(t, "executionCount", e.job(j.ID).Status.ExecutionCount, tc.count)
			hs := e.history(j)
			switch tc.policy {
			case jobstate.MisfireSkip:
				equal(t, "the one Skipped entry", skipped, []string{tc.message})
			case jobstate.MisfireRunOnce:
				msg := ""
				for _, h := range hs {
					if h.ExpectedExecutionTime.Equal(at(11)) {
						msg = h.Message
					}
				}
				equal(t, "coalesced", strings.HasPrefix(msg, tc.message), true)
			}

			// And on schedule after that.
			e.clock.Set(at(12))
			equal(t, "next on schedule", tg.next(t).Header.Get("x-ms-scheduler-expected-execution-time"), at(12).Format(time.RFC3339))
			r := e.record()
			equal(t, "recorded", r.History.Status, store.HistoryCompleted)
		})
	}
}
