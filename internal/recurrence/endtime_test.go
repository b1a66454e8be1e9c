package recurrence

import (
	"strings"
	"testing"
	"time"
)

// TestEndTimeWithoutOffsetIsReadInTheRulesZone pins SPEC section 3 as the schedules guide states
// it: an endTime written without an offset is wall-clock time in the rule's zone (the timeZone,
// else the offset written in startTime, else UTC), not UTC; one written with an offset is that
// instant. Each case's last occurrence is the one a UTC reading would get wrong.
func TestEndTimeWithoutOffsetIsReadInTheRulesZone(t *testing.T) {
	now := time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name, start, rec string
		end              string // the rule's endTime, RFC 3339 in its zone
		want             []string
	}{
		{"the startTime's offset", "2026-03-01T09:00:00-08:00", `{"frequency":"Day","endTime":"2026-03-03T09:00:00"}`,
			"2026-03-03T09:00:00-08:00", []string{"2026-03-01T17:00:00Z", "2026-03-02T17:00:00Z", "2026-03-03T17:00:00Z"}},
		{"a date alone, at midnight of the startTime's offset", "2026-03-01T09:00:00-08:00", `{"frequency":"Day","endTime":"2026-03-03"}`,
			"2026-03-03T00:00:00-08:00", []string{"2026-03-01T17:00:00Z", "2026-03-02T17:00:00Z"}},
		{"the timeZone, across its DST change", "2026-03-28T09:00:00", `{"frequency":"Day","timeZone":"Europe/Berlin","endTime":"2026-03-30T09:00:00"}`,
			"2026-03-30T09:00:00+02:00", []string{"2026-03-28T08:00:00Z", "2026-03-29T07:00:00Z", "2026-03-30T07:00:00Z"}},
		{"the timeZone wins over the startTime's offset", "2026-03-01T09:00:00-08:00", `{"frequency":"Day","timeZone":"Asia/Tokyo","endTime":"2026-03-04T02:00:00"}`,
			"2026-03-04T02:00:00+09:00", []string{"2026-03-01T17:00:00Z", "2026-03-02T17:00:00Z", "2026-03-03T17:00:00Z"}},
		{"UTC when neither gives a zone", "2026-03-01T09:00:00", `{"frequency":"Day","endTime":"2026-03-03T09:00:00"}`,
			"2026-03-03T09:00:00Z", []string{"2026-03-01T09:00:00Z", "2026-03-02T09:00:00Z", "2026-03-03T09:00:00Z"}},
		{"an explicit offset is that instant", "2026-03-01T09:00:00-08:00", `{"frequency":"Day","endTime":"2026-03-03T09:00:00Z"}`,
			"2026-03-03T01:00:00-08:00", []string{"2026-03-01T17:00:00Z", "2026-03-02T17:00:00Z"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, err := compileJSON(t, c.start, c.rec)
			if err != nil {
				t.Fatal(err)
			}
			end, ok := r.EndTime()
			if !ok || end.Format(time.RFC3339) != c.end {
				t.Errorf("EndTime = %s, %v; want %s", end.Format(time.RFC3339), ok, c.end)
			}
			var got []string
			for _, o := range r.Occurrences(now, 0, 10) {
				got = append(got, o.UTC().Format(time.RFC3339))
			}
			if strings.Join(got, " ") != strings.Join(c.want, " ") {
				t.Errorf("occurrences %v, want %v", got, c.want)
			}
		})
	}
}
