package main

import (
	"os"
	"testing"
	"time"
)

func TestParseStatCPU(t *testing.T) {
	// A command name with a space and a parenthesis; utime 1234 and stime 56 ticks.
	stat := "4242 (sched (d) x) S 1 4242 4242 0 -1 4194560 1000 0 0 0 1234 56 0 0 20 0 9 0 100 2000000 500 18446744073709551615"
	got, err := parseStatCPU(stat)
	if err != nil {
		t.Fatal(err)
	}
	if want := 12900 * time.Millisecond; got != want {
		t.Errorf("parseStatCPU = %s, want %s", got, want)
	}
	for _, bad := range []string{"4242 sched S 1", "4242 (x) S 1 2 3", "4242 (x) S 1 4242 4242 0 -1 4194560 1000 0 0 0 12a4 56 0"} {
		if _, err := parseStatCPU(bad); err == nil {
			t.Errorf("parseStatCPU(%q): no error", bad)
		}
	}
}

func TestProcessCPUOfThisProcess(t *testing.T) {
	// Burn CPU (not wall time: the machine may be busy) until several ticks are counted.
	for {
		self, err := selfCPU()
		if err != nil {
			t.Fatal(err)
		}
		if self >= 5*clockTick {
			break
		}
	}
	got, err := processCPU(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	self, err := selfCPU()
	if err != nil {
		t.Fatal(err)
	}
	if got <= 0 || self <= 0 || got > self+clockTick || self > got+100*time.Millisecond {
		t.Errorf("processCPU = %s, selfCPU = %s: want both positive and within a tick or so of each other", got, self)
	}
}

func TestServerCPUSince(t *testing.T) {
	before := map[int]time.Duration{10: time.Second, 11: 2 * time.Second, 12: time.Second}
	now := map[int]time.Duration{10: 3 * time.Second, 11: 2 * time.Second, 13: 500 * time.Millisecond}
	// 10 used 2 s, 11 nothing, 12 closed (not counted), 13 opened since: all of its 0.5 s.
	if got := serverCPUSince(before, now); got != 2500*time.Millisecond {
		t.Errorf("serverCPUSince = %s, want 2.5s", got)
	}
}
