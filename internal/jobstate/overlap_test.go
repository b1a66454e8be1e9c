package jobstate_test

import (
	"testing"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/internal/jobstate"
)

func TestOverlap(t *testing.T) {
	for _, tc := range jobstate.OverlapTable {
		if got := jobstate.Overlap(tc.Policy, tc.Unfinished, tc.Buffered); got != tc.Want {
			t.Errorf("Overlap(%q, unfinished %v, buffered %v) = %v, want %v", tc.Policy, tc.Unfinished, tc.Buffered, got, tc.Want)
		}
	}
	if !jobstate.BufferedRuns(false) || jobstate.BufferedRuns(true) {
		t.Error("a buffered occurrence runs when, and only when, nothing of its job is unfinished")
	}
	for p, want := range map[string]bool{"": false, jobstate.OverlapAllow: false, jobstate.OverlapSkip: false, jobstate.OverlapBufferOne: true} {
		if got := jobstate.WaitingOnChange(p); got != want {
			t.Errorf("WaitingOnChange(%q) = %v, want %v (a change cancels a waiting occurrence; only BufferOne keeps one)", p, got, want)
		}
	}
	for p, want := range map[string]bool{"": false, jobstate.OverlapAllow: false, jobstate.OverlapSkip: true, jobstate.OverlapBufferOne: true} {
		if got := jobstate.Overlapping(p); got != want {
			t.Errorf("Overlapping(%q) = %v, want %v", p, got, want)
		}
	}
}

func TestSkippedMessages(t *testing.T) {
	first := time.Date(2026, 6, 1, 9, 0, 0, 0, time.UTC)
	for _, tc := range []struct{ got, want string }{
		{jobstate.OverlapSkippedMessage(jobstate.OverlapSkip, "tag-1"), "Skipped: the execution tag-1 is unfinished (overlap policy Skip)."},
		{jobstate.OverlapSkippedMessage(jobstate.OverlapBufferOne, "tag-1"),
			"Skipped: the execution tag-1 is unfinished and an occurrence already waits for it (overlap policy BufferOne)."},
		{jobstate.MisfireSkippedMessage(10, first, first.Add(9*time.Minute), time.Minute),
			"Skipped 10 occurrences from 2026-06-01T09:00:00Z to 2026-06-01T09:09:00Z: missed by more than the misfire threshold 1m0s (misfire policy Skip)."},
		{jobstate.MisfireSkippedMessage(1, first, first, time.Minute),
			"Skipped 1 occurrence (2026-06-01T09:00:00Z): missed by more than the misfire threshold 1m0s (misfire policy Skip)."},
	} {
		if tc.got != tc.want {
			t.Errorf("message\n got %q\nwant %q", tc.got, tc.want)
		}
	}
}
