// Package arm is the one definition of what the four names of an Azure Scheduler resource may be
// (subscription id, resource group, job collection, job), how two names are compared, and the ARM
// ids built from them. The daemon's routes, its authorization check and its store keys all use it,
// so a name has one identity everywhere.
//
// The grammar is ASCII only, a subset of what Azure Resource Manager allows, chosen so that a name
// is never read two ways: by a URL parser (dot segments, percent-escapes, '?', '/'), by case
// folding (Unicode letters such as U+017F, which strings.EqualFold folds to 's' and
// strings.ToLower does not) or by a UTF-8 decoder (invalid bytes). A name that passes Check needs
// no escaping in a URL path, so the ARM id built from it is also the path that reaches it.
//
//	kind            length  characters
//	subscription    1-64    A-Z a-z 0-9 - _ .
//	resource group  1-90    A-Z a-z 0-9 - _ . ( )      (ARM's rule without its Unicode letters)
//	job collection  1-100   A-Z a-z 0-9 - _ .          (Azure Scheduler's rule)
//	job             1-100   A-Z a-z 0-9 - _ .          (Azure Scheduler's rule)
//
// No name may end with '.' (ARM's rule for resource groups; it also refuses the dot segments "."
// and ".."). Names compare ASCII-case-insensitively (Fold): "Team-A" and "team-a" are one name,
// and a record keeps the spelling it was created with.
package arm

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/schedulerhq/terraform-provider-scheduler/internal/ascii"
)

// Kind is which of the four names a value is.
type Kind int

// The kinds of names, outermost first.
const (
	Subscription Kind = iota
	ResourceGroup
	Collection
	Job
)

// String names the kind as error messages do ("job collection name").
func (k Kind) String() string {
	switch k {
	case Subscription:
		return "subscription id"
	case ResourceGroup:
		return "resource group name"
	case Collection:
		return "job collection name"
	case Job:
		return "job name"
	}
	return fmt.Sprintf("arm.Kind(%d)", int(k))
}

// MaxLen is the longest name of a kind, in bytes (= characters: names are ASCII).
func (k Kind) MaxLen() int {
	switch k {
	case Subscription:
		return 64
	case ResourceGroup:
		return 90
	default:
		return 100
	}
}

// allowed reports whether c may appear in a name of the kind.
func (k Kind) allowed(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '-', c == '_', c == '.':
		return true
	case c == '(' || c == ')':
		return k == ResourceGroup
	}
	return false
}

// characters describes the characters a kind allows, for error messages.
func (k Kind) characters() string {
	if k == ResourceGroup {
		return "ASCII letters, digits, '-', '_', '.', '(' and ')'"
	}
	return "ASCII letters, digits, '-', '_' and '.'"
}

// NameError is a name that is not in the grammar. Its message names the kind and quotes the value
// (Go-escaped, so invalid UTF-8 and control characters stay visible).
type NameError struct {
	Kind   Kind
	Name   string
	Reason string
}

func (e *NameError) Error() string {
	v := e.Name
	if len(v) > 120 {
		v = v[:120] + "..."
	}
	return fmt.Sprintf("the %s %q %s", e.Kind, v, e.Reason)
}

// Check returns nil when name is a valid name of the kind, else a *NameError saying why.
func Check(kind Kind, name string) error {
	fail := func(format string, args ...any) error {
		return &NameError{Kind: kind, Name: name, Reason: fmt.Sprintf(format, args...)}
	}
	switch {
	case name == "":
		return fail("is empty")
	case name == "." || name == "..":
		return fail("is a dot segment, which URLs resolve away; not allowed")
	case !utf8.ValidString(name):
		return fail("is not valid UTF-8; only %s are allowed", kind.characters())
	case len(name) > kind.MaxLen():
		return fail("is %d characters long; at most %d are allowed", len(name), kind.MaxLen())
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if kind.allowed(c) {
			continue
		}
		if c >= utf8.RuneSelf {
			r, _ := utf8.DecodeRuneInString(name[i:])
			return fail("contains the non-ASCII character %U at byte %d; only %s are allowed", r, i, kind.characters())
		}
		return fail("contains the character %q at byte %d; only %s are allowed", rune(c), i, kind.characters())
	}
	if strings.HasSuffix(name, ".") {
		return fail("ends with '.'; not allowed")
	}
	return nil
}

// Fold is the form names are compared by: ASCII letters lower-cased, every other byte kept. Two
// valid names are the same name exactly when their Folds are equal. It is not strings.ToLower,
// which also lowers non-ASCII letters, nor strings.EqualFold, which also folds U+017F to 's' and
// U+212A to 'k': both would let a name outside the grammar meet one inside it.
func Fold(name string) string { return ascii.Lower(name) }

// Same reports whether two names are one name (Fold(a) == Fold(b)).
func Same(a, b string) bool { return ascii.EqualFold(a, b) }

// Provider is the resource provider's segment in ARM ids.
const Provider = "Microsoft.Scheduler"

// CollectionID is the ARM id of a job collection, with the names as given:
// /subscriptions/{s}/resourceGroups/{rg}/providers/Microsoft.Scheduler/jobCollections/{c}.
func CollectionID(subscription, resourceGroup, collection string) string {
	return "/subscriptions/" + subscription + "/resourceGroups/" + resourceGroup +
		"/providers/" + Provider + "/jobCollections/" + collection
}

// JobID is the ARM id of a job, with the names as given: CollectionID + /jobs/{job}.
func JobID(subscription, resourceGroup, collection, job string) string {
	return JobIDIn(CollectionID(subscription, resourceGroup, collection), job)
}

// JobIDIn is the ARM id of a job in the collection whose ARM id is collectionID (CollectionID).
func JobIDIn(collectionID, job string) string { return collectionID + "/jobs/" + job }

// CanonicalJobID is the one spelling of a job's ARM id: the JobID of the folded names. Two keys
// that name the same job have the same CanonicalJobID, and two that name different jobs do not.
// It is what a value bound to a job (such as a sealed secret's associated data) should use.
func CanonicalJobID(subscription, resourceGroup, collection, job string) string {
	return JobID(Fold(subscription), Fold(resourceGroup), Fold(collection), Fold(job))
}
