// Package clock injects time: the daemon, the dispatcher and the API take a Clock, tests pass a
// Fake and advance it instead of sleeping.
package clock

import (
	"sort"
	"sync"
	"time"
)

// Clock tells the time and makes timers.
type Clock interface {
	Now() time.Time
	// NewTimer fires once after d on the returned channel; Stop cancels it.
	NewTimer(d time.Duration) Timer
}

// Timer is a one-shot timer.
type Timer interface {
	C() <-chan time.Time
	// Stop prevents the timer from firing; it reports whether it stopped it.
	Stop() bool
	// Reset changes the timer to fire after d; it reports whether the timer had been active.
	Reset(d time.Duration) bool
}

// Real is the wall clock.
type Real struct{}

var _ Clock = Real{}

// Now returns time.Now().
func (Real) Now() time.Time { return time.Now() }

// NewTimer returns a time.Timer.
func (Real) NewTimer(d time.Duration) Timer { return realTimer{time.NewTimer(d)} }

type realTimer struct{ t *time.Timer }

func (r realTimer) C() <-chan time.Time        { return r.t.C }
func (r realTimer) Stop() bool                 { return r.t.Stop() }
func (r realTimer) Reset(d time.Duration) bool { return r.t.Reset(d) }

// Fake is a clock that moves only when told to. Timers fire (in time order) when Advance or Set
// passes their deadline. Safe for concurrent use.
type Fake struct {
	mu      sync.Mutex
	now     time.Time
	timers  []*fakeTimer
	created chan struct{}
}

var _ Clock = (*Fake)(nil)

// NewFake returns a Fake set to now.
func NewFake(now time.Time) *Fake {
	return &Fake{now: now, created: make(chan struct{}, 1024)}
}

// Now returns the fake time.
func (f *Fake) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

// NewTimer makes a timer due at Now()+d.
func (f *Fake) NewTimer(d time.Duration) Timer {
	f.mu.Lock()
	t := &fakeTimer{f: f, c: make(chan time.Time, 1)}
	t.at = f.now.Add(d)
	t.active = true
	f.timers = append(f.timers, t)
	fire := d <= 0
	f.mu.Unlock()
	if fire {
		f.fireDue()
	}
	select {
	case f.created <- struct{}{}:
	default:
	}
	return t
}

// TimerCreated is signalled each time a timer is created or reset: tests wait on it (with a
// timeout) to know the code under test is waiting for time to pass.
func (f *Fake) TimerCreated() <-chan struct{} { return f.created }

// Advance moves the clock forward by d, firing every timer due by then.
func (f *Fake) Advance(d time.Duration) {
	f.mu.Lock()
	f.now = f.now.Add(d)
	f.mu.Unlock()
	f.fireDue()
}

// Set moves the clock to t (never backwards), firing every timer due by then.
func (f *Fake) Set(t time.Time) {
	f.mu.Lock()
	if t.After(f.now) {
		f.now = t
	}
	f.mu.Unlock()
	f.fireDue()
}

func (f *Fake) fireDue() {
	type firing struct {
		t  *fakeTimer
		at time.Time // read under the lock: a Reset may change t.at once it is released
	}
	f.mu.Lock()
	var due []firing
	kept := f.timers[:0]
	for _, t := range f.timers {
		if t.active && !t.at.After(f.now) {
			t.active = false
			due = append(due, firing{t: t, at: t.at})
			continue
		}
		if t.active {
			kept = append(kept, t)
		}
	}
	f.timers = kept
	now := f.now
	f.mu.Unlock()
	sort.Slice(due, func(i, j int) bool { return due[i].at.Before(due[j].at) })
	for _, d := range due {
		select {
		case d.t.c <- now:
		default:
		}
	}
}

type fakeTimer struct {
	f      *Fake
	c      chan time.Time
	at     time.Time
	active bool
}

func (t *fakeTimer) C() <-chan time.Time { return t.c }

func (t *fakeTimer) Stop() bool {
	t.f.mu.Lock()
	defer t.f.mu.Unlock()
	was := t.active
	t.active = false
	return was
}

func (t *fakeTimer) Reset(d time.Duration) bool {
	t.f.mu.Lock()
	was := t.active
	t.at = t.f.now.Add(d)
	if !t.active {
		t.active = true
		t.f.timers = append(t.f.timers, t)
	}
	t.f.mu.Unlock()
	t.f.fireDue()
	select {
	case t.f.created <- struct{}{}:
	default:
	}
	return was
}
