// Package ascii is the one ASCII case fold: A-Z become a-z and every other byte is kept. It is
// not strings.ToLower, which also lowers non-ASCII letters, nor strings.EqualFold, which also
// folds U+017F to 's' and U+212A to 'k'. Names (arm), recurrence keywords and the members of
// the API's JSON bodies (wire) compare by it.
package ascii

// Lower returns s with its ASCII upper-case letters lowered; s itself when it has none (no
// allocation).
func Lower(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; 'A' <= c && c <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if 'A' <= b[j] && b[j] <= 'Z' {
					b[j] += 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}

// EqualFold reports whether a and b are equal once both are lowered as Lower lowers them
// (Lower(a) == Lower(b)), without allocating.
func EqualFold[T string | []byte](a, b T) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}
