// Package testsignal carries typed signals from the code under test to the test: a decision
// point passed ("the loop is idle with nothing in flight"), with the values it decided on. A
// Signal is inert until a test calls Init, so the code pays one nil check when it is not under
// test. Tests wait for the signal of the decision point and assert on its values, instead of
// waiting for "nothing happened for a while", which passes when the code is merely slow.
package testsignal

import (
	"fmt"
	"time"
)

// bufferSize bounds the signals a test may leave unread; further ones are dropped.
const bufferSize = 1024

// Signal is a typed signal of a value T. The zero value is disabled.
type Signal[T any] struct {
	ch chan T
}

// Init enables the signal (tests only); call it before the code under test runs.
func (s *Signal[T]) Init() {
	s.ch = make(chan T, bufferSize)
}

// Enabled reports whether a test listens (Init was called).
func (s *Signal[T]) Enabled() bool { return s.ch != nil }

// Signal sends v when enabled; it never blocks (a full buffer drops v).
func (s *Signal[T]) Signal(v T) {
	if s.ch == nil {
		return
	}
	select {
	case s.ch <- v:
	default:
	}
}

// Wait returns the next signal whose value satisfies match, skipping the others, or an error
// once timeout has passed without one.
func (s *Signal[T]) Wait(timeout time.Duration, match func(T) bool) (T, error) {
	var zero T
	if s.ch == nil {
		return zero, fmt.Errorf("testsignal: %T was not initialised", s)
	}
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	var last T
	seen := false
	for {
		select {
		case v := <-s.ch:
			if match(v) {
				return v, nil
			}
			last, seen = v, true
		case <-deadline.C:
			if seen {
				return zero, fmt.Errorf("testsignal: no matching %T within %s; the last one was %+v", zero, timeout, last)
			}
			return zero, fmt.Errorf("testsignal: no %T within %s", zero, timeout)
		}
	}
}

// Drain discards the signals sent so far and returns how many there were.
func (s *Signal[T]) Drain() int {
	n := 0
	for {
		select {
		case <-s.ch:
			n++
		default:
			return n
		}
	}
}
