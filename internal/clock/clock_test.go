package clock_test

import (
	"testing"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/internal/clock"
)

var t0 = time.Date(2026, 11, 18, 12, 0, 0, 0, time.UTC)

// fired returns what t's channel holds now (the fake fires synchronously: Advance, Set, Reset
// and NewTimer have sent before they return), failing on more than one value.
func fired(t *testing.T, tm clock.Timer) (time.Time, bool) {
	t.Helper()
	select {
	case v := <-tm.C():
		select {
		case w := <-tm.C():
			t.Fatalf("a timer delivered twice: %v and %v", v, w)
		default:
		}
		return v, true
	default:
		return time.Time{}, false
	}
}

func TestFakeNowAdvanceSet(t *testing.T) {
	f := clock.NewFake(t0)
	if got := f.Now(); !got.Equal(t0) {
		t.Fatalf("Now = %v, want %v", got, t0)
	}
	f.Advance(90 * time.Second)
	if got, want := f.Now(), t0.Add(90*time.Second); !got.Equal(want) {
		t.Fatalf("after Advance: %v, want %v", got, want)
	}
	f.Set(t0.Add(time.Hour))
	if got, want := f.Now(), t0.Add(time.Hour); !got.Equal(want) {
		t.Fatalf("after Set: %v, want %v", got, want)
	}
	f.Set(t0) // never backwards
	if got, want := f.Now(), t0.Add(time.Hour); !got.Equal(want) {
		t.Fatalf("Set backwards moved the clock to %v, want it kept at %v", got, want)
	}
}

// TestFakeTimerFiresAtItsDeadline: not a nanosecond before, at the deadline exactly, once, with
// the clock's time when it fired.
func TestFakeTimerFiresAtItsDeadline(t *testing.T) {
	f := clock.NewFake(t0)
	tm := f.NewTimer(time.Minute)
	f.Advance(time.Minute - time.Nanosecond)
	if v, ok := fired(t, tm); ok {
		t.Fatalf("fired at %v, a nanosecond before its deadline", v)
	}
	f.Advance(time.Nanosecond)
	if v, ok := fired(t, tm); !ok || !v.Equal(t0.Add(time.Minute)) {
		t.Fatalf("at its deadline: fired %v %v, want %v", ok, v, t0.Add(time.Minute))
	}
	f.Advance(time.Hour)
	if v, ok := fired(t, tm); ok {
		t.Fatalf("fired again at %v", v)
	}
	if tm.Stop() {
		t.Fatal("Stop of a fired timer reports it active")
	}
}

// TestFakeTimerSentTheTimeItFired: a timer passed over by a long Advance receives the clock's
// new time, as a real timer receives the time it fired.
func TestFakeTimerSentTheTimeItFired(t *testing.T) {
	f := clock.NewFake(t0)
	tm := f.NewTimer(time.Second)
	f.Set(t0.Add(time.Hour))
	if v, ok := fired(t, tm); !ok || !v.Equal(t0.Add(time.Hour)) {
		t.Fatalf("fired %v %v, want %v", ok, v, t0.Add(time.Hour))
	}
}

func TestFakeTimerOfNoDurationFiresAtOnce(t *testing.T) {
	f := clock.NewFake(t0)
	for _, d := range []time.Duration{0, -time.Second} {
		if v, ok := fired(t, f.NewTimer(d)); !ok || !v.Equal(t0) {
			t.Fatalf("NewTimer(%v): fired %v %v, want at once at %v", d, ok, v, t0)
		}
	}
}

func TestFakeTimerStop(t *testing.T) {
	f := clock.NewFake(t0)
	tm := f.NewTimer(time.Minute)
	if !tm.Stop() {
		t.Fatal("Stop of an active timer reports it inactive")
	}
	if tm.Stop() {
		t.Fatal("a second Stop reports the timer active")
	}
	f.Advance(time.Hour)
	if v, ok := fired(t, tm); ok {
		t.Fatalf("a stopped timer fired at %v", v)
	}
}

// TestFakeTimerReset: Reset moves an active timer's deadline (from now), re-arms a fired or
// stopped one, and reports whether it was active.
func TestFakeTimerReset(t *testing.T) {
	f := clock.NewFake(t0)
	tm := f.NewTimer(time.Minute)
	f.Advance(30 * time.Second)
	if !tm.Reset(time.Minute) { // now due at t0+90s
		t.Fatal("Reset of an active timer reports it inactive")
	}
	f.Advance(59 * time.Second)
	if v, ok := fired(t, tm); ok {
		t.Fatalf("fired at %v at its old deadline, after a Reset", v)
	}
	f.Advance(time.Second)
	if v, ok := fired(t, tm); !ok || !v.Equal(t0.Add(90*time.Second)) {
		t.Fatalf("after Reset: fired %v %v, want %v", ok, v, t0.Add(90*time.Second))
	}
	if tm.Reset(time.Second) {
		t.Fatal("Reset of a fired timer reports it active")
	}
	f.Advance(time.Second)
	if _, ok := fired(t, tm); !ok {
		t.Fatal("a fired timer did not fire again after Reset")
	}
	tm.Stop()
	if tm.Reset(0) {
		t.Fatal("Reset of a stopped timer reports it active")
	}
	if _, ok := fired(t, tm); !ok {
		t.Fatal("Reset(0) did not fire at once")
	}
}

// TestFakeTimerCreatedSignals: every NewTimer and Reset signals TimerCreated (tests wait on it
// to know the code under test waits for time to pass); Advance does not.
func TestFakeTimerCreatedSignals(t *testing.T) {
	f := clock.NewFake(t0)
	count := func() int {
		n := 0
		for {
			select {
			case <-f.TimerCreated():
				n++
			default:
				return n
			}
		}
	}
	tm := f.NewTimer(time.Minute)
	f.NewTimer(time.Hour)
	if n := count(); n != 2 {
		t.Fatalf("%d signals after two NewTimer, want 2", n)
	}
	f.Advance(time.Minute)
	if n := count(); n != 0 {
		t.Fatalf("%d signals after Advance, want 0", n)
	}
	tm.Reset(time.Minute)
	if n := count(); n != 1 {
		t.Fatalf("%d signals after Reset, want 1", n)
	}
}

// TestFakeConcurrentUse: timers made, reset, stopped and fired from several goroutines while the
// clock advances (run with -race); every timer that was never stopped fires.
func TestFakeConcurrentUse(t *testing.T) {
	f := clock.NewFake(t0)
	const n = 8
	done := make(chan clock.Timer, n)
	for i := range n {
		go func() {
			tm := f.NewTimer(time.Duration(i+1) * time.Second)
			tm.Reset(time.Duration(i+1) * time.Second)
			done <- tm
		}()
	}
	timers := make([]clock.Timer, 0, n)
	for range n {
		timers = append(timers, <-done)
		f.Advance(time.Millisecond)
	}
	f.Advance(time.Minute)
	for i, tm := range timers {
		if _, ok := fired(t, tm); !ok {
			t.Fatalf("timer %d never fired", i)
		}
	}
}
