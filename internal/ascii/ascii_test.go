package ascii_test

import (
	"testing"

	"github.com/schedulerhq/terraform-provider-scheduler/internal/ascii"
)

// TestFold: ASCII letters fold, nothing else does (U+017F and U+212A, which strings.EqualFold
// folds onto 's' and 'k', the Latin-1 letters, invalid bytes); Lower and EqualFold agree, on
// strings and on bytes.
func TestFold(t *testing.T) {
	for _, tc := range []struct {
		a, b  string
		equal bool
	}{
		{"sub1", "SUB1", true},
		{"Team-A", "team-a", true},
		{"@[`{", "@[`{", true},
		{"@", "`", false},
		{"[", "{", false},
		{"Z", "z", true},
		{"sub1", "ſub1", false},
		{"key", "\u212Aey", false},
		{"\xff", "\xfe", false},
		{"\xc0", "\xe0", false},
		{"a", "a ", false},
		{"É", "é", false},
		{"", "", true},
	} {
		if got := ascii.EqualFold(tc.a, tc.b); got != tc.equal {
			t.Errorf("EqualFold(%q, %q) = %v, want %v", tc.a, tc.b, got, tc.equal)
		}
		if got := ascii.EqualFold([]byte(tc.a), []byte(tc.b)); got != tc.equal {
			t.Errorf("EqualFold([]byte(%q), []byte(%q)) = %v, want %v", tc.a, tc.b, got, tc.equal)
		}
		if got := ascii.Lower(tc.a) == ascii.Lower(tc.b); got != tc.equal {
			t.Errorf("Lower(%q) == Lower(%q) is %v, want %v", tc.a, tc.b, got, tc.equal)
		}
	}
	for in, want := range map[string]string{"AbC-\xff": "abc-\xff", "abc": "abc", "ÉTÉ": "ÉtÉ", "AZ@[": "az@[", "": ""} {
		if got := ascii.Lower(in); got != want {
			t.Errorf("Lower(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestLowerKeepsALowerString: a string with nothing to lower is returned as is, without a copy.
func TestLowerKeepsALowerString(t *testing.T) {
	s := "already-lower-0123"
	if n := testing.AllocsPerRun(100, func() { _ = ascii.Lower(s) }); n != 0 {
		t.Fatalf("Lower of a lower-case string allocates %v times", n)
	}
}
