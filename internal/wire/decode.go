package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/schedulerhq/terraform-provider-scheduler/internal/ascii"
)

// Decode strictly decodes a JSON document into v (a pointer to one of this package's types):
// unknown fields, wrong JSON types and malformed JSON are reported as Problems with the JSON path
// of each (e.g. "properties.recurrence.schedule.monthDays[2]: expected an integer, got a string"),
// all of them, never only the first. Property names match ASCII-case-insensitively, as Azure's do
// (a name with a non-ASCII letter that Unicode folds onto an ASCII one, such as "ſtate", is an
// unknown field). A null value leaves the field as it is (absent). It never panics.
//
// Decode answers one way for one document, whatever the order encoding/json or a map would see
// its members in: a document that is not valid UTF-8 is refused (one Problem naming the byte), and
// so is a member that appears twice in one object, in the same spelling or in another case
// ("properties" and "Properties"), at any depth, maps and free-form values included (a Problem
// at the repeated member's path).
//
// On success v holds exactly what encoding/json would have decoded; on failure v is unchanged and
// the error is a Problems. Malformed JSON is one Problem with an empty path whose message gives the
// line, column and byte offset.
func Decode(data []byte, v any) error {
	rv := reflect.ValueOf(v)
	if !rv.IsValid() || rv.Kind() != reflect.Pointer || rv.IsNil() {
		return fmt.Errorf("wire.Decode: need a non-nil pointer, got %T", v)
	}
	if p, ok := utf8Problem(data); !ok {
		return Problems{p}
	}
	if !json.Valid(data) {
		return Problems{syntaxProblem(data)}
	}
	ps, plain := duplicates(data)
	if len(ps) > 0 {
		return ps
	}
	// Fast path: when every member name is plain ASCII, the names mean the same to encoding/json
	// and to check (they differ only on Unicode foldings such as "ſtate"), and a document that
	// encoding/json decodes strictly into a zero value is one check accepts: decode it once. A
	// document it refuses takes the path below, which names every problem.
	if plain && rv.Elem().IsZero() {
		fresh := reflect.New(rv.Type().Elem())
		if strictDecode(data, fresh.Interface()) == nil {
			rv.Elem().Set(fresh.Elem())
			return nil
		}
	}
	return decodeChecked(data, v, rv.Type().Elem())
}

// strictDecode is encoding/json's decoding of data into v with unknown fields refused.
func strictDecode(data []byte, v any) error {
	strict := json.NewDecoder(bytes.NewReader(data))
	strict.DisallowUnknownFields()
	if err := strict.Decode(v); err != nil {
		return fmt.Errorf("strict decode: %w", err)
	}
	return nil
}

// decodeChecked decodes valid, duplicate-free JSON into v (a pointer to t) after checking it
// against t: every problem named with its path, v unchanged when there is one.
func decodeChecked(data []byte, v any, t reflect.Type) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		// json.Valid accepted it, so this cannot happen; report it rather than panic.
		return Problems{{Message: fmt.Sprintf("invalid JSON: %v", err)}}
	}
	var ps Problems
	check(&ps, "", doc, t)
	if len(ps) > 0 {
		return ps
	}
	// The document fits the type: let encoding/json fill v, so the result is its result.
	if err := strictDecode(data, v); err != nil {
		return Problems{{Message: fmt.Sprintf("invalid document: %v", errors.Unwrap(err))}}
	}
	return nil
}

// utf8Problem reports the first byte of data that is not valid UTF-8 (ok is false), with its line
// and column like a syntax error.
func utf8Problem(data []byte) (Problem, bool) {
	if utf8.Valid(data) {
		return Problem{}, true
	}
	off := 0
	for off < len(data) {
		r, n := utf8.DecodeRune(data[off:])
		if r == utf8.RuneError && n <= 1 {
			break
		}
		off += n
	}
	line := 1 + bytes.Count(data[:off], []byte("\n"))
	col := off - bytes.LastIndexByte(data[:off], '\n')
	return Problem{Message: fmt.Sprintf("the document is not valid UTF-8: byte 0x%02X at line %d, column %d (byte %d)", data[off], line, col, off)}, false
}

// Duplicates returns a Problem for every member of a JSON object (at any depth) whose name
// another member of the same object already has, exactly or in another case, under the folding
// encoding/json matches struct fields with (a superset of ASCII case). data must be valid JSON
// (json.Valid) in valid UTF-8. It scans the bytes once and allocates only for containers' paths,
// for names with escapes or non-ASCII letters, and for what it reports.
func Duplicates(data []byte) Problems {
	ps, _ := duplicates(data)
	return ps
}

// duplicates is Duplicates, and whether every member name of the document is plain (ASCII
// without escapes).
func duplicates(data []byte) (Problems, bool) {
	s := dupScanner{data: data, plain: true}
	s.value()
	return s.ps, s.plain
}

// dupScanner walks a valid JSON document byte by byte.
type dupScanner struct {
	data  []byte
	i     int
	ps    Problems
	plain bool // every member name so far is ASCII without escapes
	// path holds the members and indexes from the document down to the value being scanned:
	// its JSON path, spelled out only when a problem is reported.
	path []pathStep
}

// pathStep is a member (name) or an array element (index) of a JSON path.
type pathStep struct {
	name    member
	element bool // an array element: index, not name
	index   int
}

func (s *dupScanner) ws() {
	for s.i < len(s.data) {
		switch s.data[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// pathTo spells the JSON path of member m of the value at s.path (e.g. "properties.action"
// or "a[2].b").
func (s *dupScanner) pathTo(m *member) string {
	var p string
	for _, st := range append(s.path, pathStep{name: *m}) {
		if st.element {
			p = fmt.Sprintf("%s[%d]", p, st.index)
			continue
		}
		p = join(p, st.name.name())
	}
	return p
}

// value skips the value at s.i, checking the objects in it.
func (s *dupScanner) value() {
	s.ws()
	if s.i >= len(s.data) {
		return
	}
	switch s.data[s.i] {
	case '{':
		s.object()
	case '[':
		s.i++
		for n := 0; ; n++ {
			s.ws()
			if s.i >= len(s.data) || s.data[s.i] == ']' {
				s.i++
				return
			}
			s.path = append(s.path, pathStep{element: true, index: n})
			s.value()
			s.path = s.path[:len(s.path)-1]
			s.ws()
			if s.i < len(s.data) && s.data[s.i] == ',' {
				s.i++
			}
		}
	case '"':
		s.str()
	default:
		for s.i < len(s.data) {
			switch s.data[s.i] {
			case ',', ']', '}', ' ', '\t', '\n', '\r':
				return
			}
			s.i++
		}
	}
}

// str skips the string at s.i and returns its raw bytes (between the quotes) and whether they
// are plain: ASCII without escapes.
func (s *dupScanner) str() ([]byte, bool) {
	s.i++ // the opening quote
	start, plain := s.i, true
	for s.i < len(s.data) {
		switch c := s.data[s.i]; c {
		case '"':
			raw := s.data[start:s.i]
			s.i++
			return raw, plain
		case '\\':
			plain = false
			s.i += 2
		default:
			if c >= utf8.RuneSelf {
				plain = false
			}
			s.i++
		}
	}
	return s.data[start:], plain
}

// member is a name seen in an object.
type member struct {
	raw   []byte
	plain bool
	fold  string // foldName of the decoded name; computed when needed
}

func (m *member) name() string {
	if m.plain {
		return string(m.raw)
	}
	var v string
	if err := json.Unmarshal(append(append([]byte{'"'}, m.raw...), '"'), &v); err != nil {
		return string(m.raw)
	}
	return v
}

func (m *member) folded() string {
	if m.fold == "" {
		m.fold = foldName(m.name())
	}
	return m.fold
}

// same reports whether two names are one under foldName.
func same(a, b *member) bool {
	if a.plain && b.plain {
		return ascii.EqualFold(a.raw, b.raw)
	}
	return a.folded() == b.folded()
}

func (s *dupScanner) object() {
	s.i++ // {
	var first8 [8]member
	seen := first8[:0]
	var byFold map[string]string // folded name to first name, when an object has many members
	for {
		s.ws()
		if s.i >= len(s.data) || s.data[s.i] == '}' {
			s.i++
			return
		}
		raw, plain := s.str()
		s.plain = s.plain && plain
		m := member{raw: raw, plain: plain}
		first, dup := "", false
		if byFold != nil {
			first, dup = byFold[m.folded()]
		} else {
			for j := range seen {
				if same(&seen[j], &m) {
					first, dup = seen[j].name(), true
					break
				}
			}
		}
		if dup {
			what := "appears twice"
			if first != m.name() {
				what = fmt.Sprintf("repeats the member %q in another case", first)
			}
			s.ps.add(s.pathTo(&m), what+"; a member may appear once in an object (names are case-insensitive)")
		} else {
			switch {
			case byFold != nil:
				byFold[m.folded()] = m.name()
			case len(seen) == 32:
				byFold = make(map[string]string, 64)
				for j := range seen {
					byFold[seen[j].folded()] = seen[j].name()
				}
				byFold[m.folded()] = m.name()
			default:
				seen = append(seen, m)
			}
		}
		s.ws()
		s.i++ // :
		s.path = append(s.path, pathStep{name: m})
		s.value()
		s.path = s.path[:len(s.path)-1]
		s.ws()
		if s.i < len(s.data) && s.data[s.i] == ',' {
			s.i++
		}
	}
}

// foldName folds a member name so that two names encoding/json would match to one struct field
// (bytes.EqualFold) fold to the same string: every rune to the smallest of its case-folding orbit.
func foldName(s string) string {
	var b strings.Builder
	for _, r := range s {
		for {
			n := unicode.SimpleFold(r)
			if n <= r {
				r = n
				break
			}
			r = n
		}
		b.WriteRune(r)
	}
	return b.String()
}

// syntaxProblem locates the first syntax error of data.
func syntaxProblem(data []byte) Problem {
	var x any
	err := json.Unmarshal(data, &x)
	var se *json.SyntaxError
	if !errors.As(err, &se) {
		if err == nil {
			err = errors.New("unknown error")
		}
		return Problem{Message: fmt.Sprintf("invalid JSON: %v", err)}
	}
	// Offset counts the bytes read, the offending one included, except at the end of the input.
	off := se.Offset - 1
	if se.Offset >= int64(len(data)) && strings.HasPrefix(se.Error(), "unexpected end") {
		off = int64(len(data))
	}
	off = min(max(off, 0), int64(len(data)))
	line := 1 + bytes.Count(data[:off], []byte("\n"))
	col := off - int64(bytes.LastIndexByte(data[:off], '\n'))
	return Problem{Message: fmt.Sprintf("invalid JSON at line %d, column %d (byte %d): %s", line, col, off, se.Error())}
}

var unmarshalerType = reflect.TypeFor[json.Unmarshaler]()

// check walks the decoded value val against the Go type t and appends a Problem for every
// mismatch, at path.
func check(ps *Problems, path string, val any, t reflect.Type) {
	if val == nil {
		return // null: absent
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if reflect.PointerTo(t).Implements(unmarshalerType) || t.Kind() == reflect.Interface {
		return // decodes itself, or takes anything
	}
	switch t.Kind() {
	case reflect.String:
		if _, ok := val.(string); !ok {
			ps.add(path, "expected a string, got "+describe(val))
		}
	case reflect.Bool:
		if _, ok := val.(bool); !ok {
			ps.add(path, "expected a boolean, got "+describe(val))
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		checkInt(ps, path, val, t, false)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		checkInt(ps, path, val, t, true)
	case reflect.Float32, reflect.Float64:
		n, ok := val.(json.Number)
		if !ok {
			ps.add(path, "expected a number, got "+describe(val))
			return
		}
		if _, err := strconv.ParseFloat(string(n), t.Bits()); err != nil {
			ps.add(path, fmt.Sprintf("the number %s is out of range", n))
		}
	case reflect.Slice, reflect.Array:
		arr, ok := val.([]any)
		if !ok {
			ps.add(path, "expected an array, got "+describe(val))
			return
		}
		for i, e := range arr {
			check(ps, fmt.Sprintf("%s[%d]", path, i), e, t.Elem())
		}
	case reflect.Map:
		obj, ok := val.(map[string]any)
		if !ok {
			ps.add(path, "expected an object, got "+describe(val))
			return
		}
		if t.Key().Kind() != reflect.String {
			ps.add(path, "cannot be decoded (map key type "+t.Key().String()+")")
			return
		}
		for _, k := range sortedKeys(obj) {
			check(ps, join(path, k), obj[k], t.Elem())
		}
	case reflect.Struct:
		obj, ok := val.(map[string]any)
		if !ok {
			ps.add(path, "expected an object, got "+describe(val))
			return
		}
		fields := structFields(t)
		for _, k := range sortedKeys(obj) {
			f, ok := fields.lookup(k)
			if !ok {
				ps.add(join(path, k), "unknown field (allowed: "+strings.Join(fields.names, ", ")+")")
				continue
			}
			check(ps, join(path, f.name), obj[k], f.typ)
		}
	default:
		ps.add(path, "cannot be decoded (Go type "+t.String()+")")
	}
}

func checkInt(ps *Problems, path string, val any, t reflect.Type, unsigned bool) {
	n, ok := val.(json.Number)
	if !ok {
		ps.add(path, "expected an integer, got "+describe(val))
		return
	}
	var err error
	if unsigned {
		_, err = strconv.ParseUint(string(n), 10, t.Bits())
	} else {
		_, err = strconv.ParseInt(string(n), 10, t.Bits())
	}
	if err == nil {
		return
	}
	var ne *strconv.NumError
	if errors.As(err, &ne) && errors.Is(ne.Err, strconv.ErrRange) {
		ps.add(path, fmt.Sprintf("the integer %s is out of range", n))
		return
	}
	ps.add(path, "expected an integer, got "+string(n))
}

func (ps *Problems) add(path, msg string) {
	*ps = append(*ps, Problem{Path: path, Message: msg})
}

// describe names the JSON type of a value decoded with UseNumber.
func describe(val any) string {
	switch val.(type) {
	case string:
		return "a string"
	case json.Number:
		return "a number"
	case bool:
		return "a boolean"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	default:
		return "null"
	}
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// field is one JSON property of a struct.
type field struct {
	name string
	typ  reflect.Type
}

type fieldSet struct {
	byName map[string]field
	names  []string // JSON names, in declaration order
}

// lookup finds a field: exact name first, then ASCII-case-insensitively (the field names are
// ASCII; encoding/json would also match Unicode foldings such as "ſtate", which are unknown here).
func (fs fieldSet) lookup(key string) (field, bool) {
	if f, ok := fs.byName[key]; ok {
		return f, true
	}
	for _, n := range fs.names {
		if ascii.EqualFold(n, key) {
			return fs.byName[n], true
		}
	}
	return field{}, false
}

// structFields lists the JSON properties of struct type t, with the fields of embedded structs
// promoted (a shallower field hides a deeper one of the same name, as in encoding/json).
func structFields(t reflect.Type) fieldSet {
	fs := fieldSet{byName: map[string]field{}}
	type level struct {
		t     reflect.Type
		depth int
	}
	queue := []level{{t, 0}}
	depthOf := map[string]int{}
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		for i := range cur.t.NumField() {
			sf := cur.t.Field(i)
			tag := sf.Tag.Get("json")
			if tag == "-" {
				continue
			}
			name, _, _ := strings.Cut(tag, ",")
			ft := sf.Type
			if sf.Anonymous && name == "" {
				et := ft
				if et.Kind() == reflect.Pointer {
					et = et.Elem()
				}
				if et.Kind() == reflect.Struct {
					queue = append(queue, level{et, cur.depth + 1})
					continue
				}
			}
			if !sf.IsExported() {
				continue
			}
			if name == "" {
				name = sf.Name
			}
			if d, seen := depthOf[name]; seen && d <= cur.depth {
				continue
			}
			if _, seen := depthOf[name]; !seen {
				fs.names = append(fs.names, name)
			}
			depthOf[name] = cur.depth
			fs.byName[name] = field{name: name, typ: ft}
		}
	}
	return fs
}
