package main

import (
	"testing"
	"time"
)

func TestJobDefinitionEvery(t *testing.T) {
	o := options{every: 10 * time.Minute, spread: 10 * time.Minute}
	now := time.Date(2026, 11, 25, 22, 47, 13, 0, time.UTC)
	base := cycleBase(o, now)
	if want := time.Date(2026, 11, 25, 21, 40, 0, 0, time.UTC); !base.Equal(want) {
		t.Fatalf("cycleBase = %s, want %s (a 10-minute boundary an hour or more before)", base, want)
	}
	for _, tc := range []struct {
		i     int
		start string
	}{{0, "2026-11-25T21:40:00Z"}, {1, "2026-11-25T21:40:01Z"}, {599, "2026-11-25T21:49:59Z"}, {600, "2026-11-25T21:40:00Z"}, {1234, "2026-11-25T21:40:34Z"}} {
		p := jobDefinition(o, tc.i, base, "http://sink/fire").Properties
		if p.StartTime != tc.start || p.Recurrence.Frequency != "Minute" || *p.Recurrence.Interval != 10 {
			t.Errorf("job %d: start %s, every %d %s; want %s, every 10 Minute", tc.i, p.StartTime, *p.Recurrence.Interval, p.Recurrence.Frequency, tc.start)
		}
	}
	// Without --every: every minute, as before.
	o = options{spread: 10 * time.Second}
	base = cycleBase(o, now)
	if want := time.Date(2026, 11, 25, 21, 47, 0, 0, time.UTC); !base.Equal(want) {
		t.Errorf("cycleBase every minute = %s, want %s", base, want)
	}
	p := jobDefinition(o, 13, base, "http://sink/fire").Properties
	if p.StartTime != "2026-11-25T21:47:03Z" || *p.Recurrence.Interval != 1 || p.Action.Request.URI != "http://sink/fire" {
		t.Errorf("every minute, job 13: start %s, interval %d, uri %s", p.StartTime, *p.Recurrence.Interval, p.Action.Request.URI)
	}
}
