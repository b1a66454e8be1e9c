package jobstate_test

import (
	"strings"
	"testing"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/internal/jobstate"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/recurrence"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"
)

func TestStartAtIsDeterministicAndWithinTheJitter(t *testing.T) {
	rule, err := recurrence.Compile("2026-12-01T00:00:00Z", &wire.JobRecurrence{Frequency: "Day", Jitter: "PT5M"}, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	day := ts(t, "2026-12-01T00:00:00Z")
	// Pinned: every replica and every preview computes these, on any machine.
	for _, tc := range []struct {
		key, scheduled, want string
	}{
		{"sub/rg/jobs/nightly", "2026-12-01T00:00:00Z", "2026-12-01T00:00:02.646Z"},
		{"sub/rg/jobs/nightly", "2026-12-02T00:00:00Z", "2026-12-02T00:04:32.846Z"},
		{"sub/rg/jobs/other", "2026-12-01T00:00:00Z", "2026-12-01T00:01:58.651Z"},
	} {
		if got := jobstate.StartAt(rule, tc.key, ts(t, tc.scheduled)).UTC().Format(time.RFC3339Nano); got != tc.want {
			t.Errorf("StartAt(%s, %s) = %s, want %s", tc.key, tc.scheduled, got, tc.want)
		}
	}
	// Spread over [0, 5 min): 1,000 jobs at one midnight are not one instant.
	seen := map[time.Duration]bool{}
	lo, hi := 5*time.Minute, time.Duration(0)
	for i := range 1000 {
		off := jobstate.StartAt(rule, "job"+string(rune('a'+i%26))+string(rune('0'+i/26)), day).Sub(day)
		if off < 0 || off >= 5*time.Minute {
			t.Fatalf("offset %v outside [0, 5m)", off)
		}
		seen[off] = true
		lo, hi = min(lo, off), max(hi, off)
	}
	if len(seen) < 990 || lo > 5*time.Second || hi < 4*time.Minute+55*time.Second {
		t.Errorf("1,000 jobs: %d distinct offsets from %v to %v", len(seen), lo, hi)
	}
	// Without jitter the start is the scheduled time.
	plain, err := recurrence.Compile("2026-12-01T00:00:00Z", &wire.JobRecurrence{Frequency: "Day"}, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if got := jobstate.StartAt(plain, "sub/rg/jobs/nightly", day); !got.Equal(day) {
		t.Errorf("no jitter: %v", got)
	}
}

func TestStartAtNeverReachesTheNextOccurrence(t *testing.T) {
	// 01:30 and 03:30 in Berlin are two hours apart, so 1h59m is a valid jitter; on the
	// spring-forward day they are one hour apart and the start must stay before 03:30.
	rule, err := recurrence.Compile("2026-03-28T01:30:00", &wire.JobRecurrence{Frequency: "Day", TimeZone: "Europe/Berlin",
		Schedule: &wire.JobRecurrenceSchedule{Hours: []int{1, 3}, Minutes: []int{30}}, Jitter: "PT1H59M"}, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	scheduled := ts(t, "2026-03-29T00:30:00Z") // 01:30 CET
	next, _ := rule.Next(scheduled)
	if want := ts(t, "2026-03-29T01:30:00Z"); !next.Equal(want) {
		t.Fatalf("next %v, want %v", next, want)
	}
	for i := range 200 {
		key := "job" + string(rune('a'+i%26)) + string(rune('0'+i/26))
		if at := jobstate.StartAt(rule, key, scheduled); at.Before(scheduled) || !at.Before(next) {
			t.Fatalf("%s starts at %v: outside [%v, %v)", key, at, scheduled, next)
		}
	}
}

// PreviewRuns: excluded dates are left out (and do not count toward count), each run starts at
// (pinned, as TestStartAtIsDeterministicAndWithinTheJitter)
// the job's StartAt with a key, at its scheduled time without.
func TestPreviewRunsHonourJitterAndExcludedDates(t *testing.T) {
	rule, err := recurrence.Compile("2026-12-01T00:00:00Z", &wire.JobRecurrence{Frequency: "Day", Count: intp(3), Jitter: "PT5M",
		ExcludeDates: []string{"2026-12-02"}}, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	now := ts(t, "2026-11-30T00:00:00Z")
	format := func(runs []jobstate.Run) (s []string) {
		for _, r := range runs {
			s = append(s, r.Scheduled.UTC().Format(time.RFC3339Nano)+" "+r.Start.UTC().Format(time.RFC3339Nano))
		}
		return s
	}
	got := format(jobstate.PreviewRuns(rule, "sub/rg/jobs/nightly", now, 0, 10))
	want := []string{
		"2026-12-01T00:00:00Z 2026-12-01T00:00:02.646Z",
		"2026-12-03T00:00:00Z 2026-12-03T00:03:27.72Z",
		"2026-12-04T00:00:00Z 2026-12-04T00:00:17.815Z",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("with the key:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	got = format(jobstate.PreviewRuns(rule, "", now, 0, 10))
	want = []string{"2026-12-01T00:00:00Z 2026-12-01T00:00:00Z", "2026-12-03T00:00:00Z 2026-12-03T00:00:00Z", "2026-12-04T00:00:00Z 2026-12-04T00:00:00Z"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("without a key:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
