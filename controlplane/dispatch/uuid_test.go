package dispatch

import (
	"testing"

	"github.com/google/uuid"
)

// TestNewUUID: newUUID draws distinct version 4 UUIDs of the RFC 4122 variant, in one allocation.
func TestNewUUID(t *testing.T) {
	seen := map[string]bool{}
	for range 1000 {
		s := newUUID()
		u, err := uuid.Parse(s)
		if err != nil || u.Version() != 4 || u.Variant() != uuid.RFC4122 || u.String() != s || seen[s] {
			t.Fatalf("%q: %v, version %d, variant %v, seen %v", s, err, u.Version(), u.Variant(), seen[s])
		}
		seen[s] = true
	}
	if raceDetector {
		return // the UUID's string escapes under the race detector's instrumentation: 2 allocations
	}
	if n := testing.AllocsPerRun(100, func() { _ = newUUID() }); n != 1 {
		t.Errorf("newUUID: %v allocations, want 1", n)
	}
}
