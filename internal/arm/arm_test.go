package arm

import (
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	kinds := []Kind{Subscription, ResourceGroup, Collection, Job}
	for _, ok := range []string{"a", "sub1", "00000000-0000-0000-0000-000000000001", "Team_A.prod-1", "x..y", ".hidden", "-", strings.Repeat("a", 64)} {
		for _, k := range kinds {
			if err := Check(k, ok); err != nil {
				t.Errorf("Check(%v, %q) = %v, want nil", k, ok, err)
			}
		}
	}
	if err := Check(ResourceGroup, "rg(1)"); err != nil {
		t.Errorf("a resource group may hold parentheses: %v", err)
	}
	for _, k := range []Kind{Subscription, Collection, Job} {
		if err := Check(k, "rg(1)"); err == nil || !strings.Contains(err.Error(), `character '('`) {
			t.Errorf("Check(%v, rg(1)) = %v, want the '(' refused", k, err)
		}
	}
	for _, tc := range []struct {
		name, want string
	}{
		{"", "is empty"},
		{".", "dot segment"},
		{"..", "dot segment"},
		{"a.", "ends with '.'"},
		{"\xff", "not valid UTF-8"},
		{"\xfe", "not valid UTF-8"},
		{"a\xffb", "not valid UTF-8"},
		{"ſub1", "non-ASCII character U+017F at byte 0"},
		{"\u212Aey", "non-ASCII character U+212A"},
		{"caf\u00e9", "non-ASCII character U+00E9 at byte 3"},
		{"a?b", `character '?' at byte 1`},
		{"a%2Fb", `character '%' at byte 1`},
		{"a/b", `character '/' at byte 1`},
		{`a\b`, `character '\\' at byte 1`},
		{"a b", `character ' ' at byte 1`},
		{" a", `character ' ' at byte 0`},
		{"a\x00", `character '\x00' at byte 1`},
		{"a\nb", `character '\n' at byte 1`},
		{"a\x7f", `character '\x7f' at byte 1`},
		{"a#b", `character '#' at byte 1`},
		{"a;b", `character ';' at byte 1`},
		{strings.Repeat("j", 101), "is 101 characters long; at most 100 are allowed"},
	} {
		err := Check(Job, tc.name)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "the job name ") {
			t.Errorf("Check(Job, %q) = %v, want an error naming the job name and containing %q", tc.name, err, tc.want)
		}
	}
	for k, n := range map[Kind]int{Subscription: 64, ResourceGroup: 90, Collection: 100, Job: 100} {
		if err := Check(k, strings.Repeat("a", n)); err != nil {
			t.Errorf("%v of %d characters: %v", k, n, err)
		}
		if err := Check(k, strings.Repeat("a", n+1)); err == nil {
			t.Errorf("%v of %d characters accepted", k, n+1)
		}
	}
	if got := Check(Subscription, "s\xff").Error(); got != `the subscription id "s\xff" is not valid UTF-8; only ASCII letters, digits, '-', '_' and '.' are allowed` {
		t.Errorf("message %s", got)
	}
}

// TestFoldIsNotEqualFold: the names U+017F and U+212A fold onto under strings.EqualFold are
// different names here, and ASCII case is one name.
func TestFoldIsNotEqualFold(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		same bool
	}{
		{"sub1", "SUB1", true},
		{"Team-A", "team-a", true},
		{"sub1", "ſub1", false},
		{"key", "\u212Aey", false},
		{"\xff", "\xfe", false},
		{"a", "a ", false},
		{"É", "é", false},
	} {
		if got := Same(tc.a, tc.b); got != tc.same {
			t.Errorf("Same(%q, %q) = %v, want %v", tc.a, tc.b, got, tc.same)
		}
		if got := Fold(tc.a) == Fold(tc.b); got != tc.same {
			t.Errorf("Fold(%q) == Fold(%q) is %v, want %v", tc.a, tc.b, got, tc.same)
		}
	}
	if Fold("AbC-\xff") != "abc-\xff" || Fold("abc") != "abc" {
		t.Errorf("Fold: %q %q", Fold("AbC-\xff"), Fold("abc"))
	}
}

func TestIDs(t *testing.T) {
	if got := JobID("Sub", "RG", "Coll", "Job"); got != "/subscriptions/Sub/resourceGroups/RG/providers/Microsoft.Scheduler/jobCollections/Coll/jobs/Job" {
		t.Errorf("JobID = %s", got)
	}
	a := CanonicalJobID("Sub", "RG", "Coll", "Job")
	if a != "/subscriptions/sub/resourceGroups/rg/providers/Microsoft.Scheduler/jobCollections/coll/jobs/job" {
		t.Errorf("CanonicalJobID = %s", a)
	}
	if a != CanonicalJobID("sub", "rg", "coll", "job") {
		t.Error("the canonical id depends on the spelling's case")
	}
	if a == CanonicalJobID("Sub", "RG", "Coll", "Job2") || a == CanonicalJobID("Sub", "RG2", "Coll", "Job") {
		t.Error("two jobs have one canonical id")
	}
}

func TestParseJobID(t *testing.T) {
	n, err := ParseJobID("/SUBSCRIPTIONS/Sub-1/resourcegroups/RG/providers/microsoft.scheduler/JobCollections/Ops/JOBS/Nightly")
	if err != nil || n != (JobName{"Sub-1", "RG", "Ops", "Nightly"}) ||
		n.Canonical() != "/subscriptions/sub-1/resourceGroups/rg/providers/Microsoft.Scheduler/jobCollections/ops/jobs/nightly" {
		t.Fatalf("%+v %q %v", n, n.Canonical(), err)
	}
	for id, want := range map[string]string{
		"subscriptions/s/resourceGroups/rg/providers/Microsoft.Scheduler/jobCollections/c/jobs/j": `"subscriptions/s/resourceGroups/rg/providers/Microsoft.Scheduler/jobCollections/c/jobs/j" is not a job's id ` + JobShape,
		"/subscriptions/s/resourceGroups/rg/providers/Microsoft.Scheduler/jobCollections/c":       `"/subscriptions/s/resourceGroups/rg/providers/Microsoft.Scheduler/jobCollections/c" is not a job's id ` + JobShape,
		"/subscriptions/s/resourceGroups/rg/providers/Microsoft.Web/jobCollections/c/jobs/j": `"/subscriptions/s/resourceGroups/rg/providers/Microsoft.Web/jobCollections/c/jobs/j" is not a job's id ` + JobShape +
			`: segment 6 is "Microsoft.Web", want "Microsoft.Scheduler"`,
		"/subscriptions/s/resourceGroups/rg/providers/Microsoft.Scheduler/jobCollections/c/jobs/a..": `"/subscriptions/s/resourceGroups/rg/providers/Microsoft.Scheduler/jobCollections/c/jobs/a.." is not a job's id: the job name "a.." ends with '.'; not allowed`,
	} {
		if _, err := ParseJobID(id); err == nil || err.Error() != want {
			t.Errorf("%s: %v, want %s", id, err, want)
		}
	}
}

func TestJobIDIn(t *testing.T) {
	if got, want := JobIDIn(CollectionID("Sub", "RG", "Coll"), "Job"), JobID("Sub", "RG", "Coll", "Job"); got != want {
		t.Errorf("JobIDIn = %s, want %s", got, want)
	}
}
