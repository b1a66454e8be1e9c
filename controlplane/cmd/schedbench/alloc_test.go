package main

import (
	"strings"
	"testing"
)

func TestParseAllocs(t *testing.T) {
	text := `# HELP go_memstats_mallocs_total Total number of heap objects allocated, both live and gc-ed.
# TYPE go_memstats_mallocs_total counter
go_memstats_mallocs_total 1.234567e+06
go_memstats_alloc_bytes_total 9.87654321e+08
go_memstats_alloc_bytes 1.2e+07
go_memstats_frees_total 1e+06
`
	a, err := parseAllocs(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	if a.mallocs != 1234567 || a.bytes != 987654321 {
		t.Errorf("parseAllocs = %+v, want mallocs 1234567, bytes 987654321 (not alloc_bytes, the live heap)", a)
	}
	b := allocCounters{mallocs: a.mallocs + 7000, bytes: a.bytes + 1000000}
	if got := a.perUnit(b, 1000, "fire"); got != "7 allocations and 1000 B per fire" {
		t.Errorf("perUnit = %q", got)
	}
	for _, bad := range []string{"go_memstats_mallocs_total 12\n", "go_memstats_mallocs_total x\ngo_memstats_alloc_bytes_total 1\n"} {
		if _, err := parseAllocs(strings.NewReader(bad)); err == nil {
			t.Errorf("parseAllocs(%q): no error", bad)
		}
	}
}
