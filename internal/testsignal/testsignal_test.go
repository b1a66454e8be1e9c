package testsignal_test

import (
	"strings"
	"testing"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/internal/testsignal"
)

func TestDisabledSignalIsInert(t *testing.T) {
	var s testsignal.Signal[int]
	s.Signal(1) // no panic, no block
	if s.Enabled() {
		t.Fatal("a zero Signal says it is enabled")
	}
	if _, err := s.Wait(time.Millisecond, func(int) bool { return true }); err == nil || !strings.Contains(err.Error(), "not initialised") {
		t.Fatalf("Wait on a disabled signal: %v", err)
	}
}

func TestWaitSkipsToTheMatchingValue(t *testing.T) {
	var s testsignal.Signal[int]
	s.Init()
	for i := range 5 {
		s.Signal(i)
	}
	v, err := s.Wait(time.Second, func(v int) bool { return v == 3 })
	if err != nil || v != 3 {
		t.Fatalf("Wait = %d, %v; want 3", v, err)
	}
	if n := s.Drain(); n != 1 {
		t.Fatalf("left after the match: %d, want 1", n)
	}
}

func TestWaitTimesOutNamingTheLastValue(t *testing.T) {
	var s testsignal.Signal[int]
	s.Init()
	s.Signal(7)
	_, err := s.Wait(10*time.Millisecond, func(v int) bool { return v == 8 })
	if err == nil || !strings.Contains(err.Error(), "the last one was 7") {
		t.Fatalf("Wait: %v, want a timeout naming 7", err)
	}
}

func TestAFullBufferDropsInsteadOfBlocking(t *testing.T) {
	var s testsignal.Signal[int]
	s.Init()
	for i := range 2000 {
		s.Signal(i)
	}
	if n := s.Drain(); n != 1024 {
		t.Fatalf("buffered %d, want 1024", n)
	}
}
