package wire

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestDecodeReportsEveryProblemWithItsPath(t *testing.T) {
	doc := `{
  "properties": {
    "startTime": 5,
    "recurrence": {
      "frequency": "Month",
      "interval": "2",
      "count": 1.5,
      "schedule": {"monthDays": [1, 2, "3", 4.0], "hours": {}, "minutes": [99999999999999999999]},
      "colour": "red"
    },
    "action": {
      "type": "ServiceBusQueue",
      "serviceBusQueueMessage": {"queueName": 1, "namespace": true, "customMessageProperties": {"a": 1}},
      "request": {"headers": []}
    }
  },
  "bogus": null
}`
	var got JobDefinition
	err := Decode([]byte(doc), &got)
	ps, ok := err.(Problems)
	if !ok {
		t.Fatalf("Decode error = %v (%T), want Problems", err, err)
	}
	want := Problems{
		{"bogus", "unknown field (allowed: id, type, name, properties)"},
		{"properties.action.request.headers", "expected an object, got an array"},
		{"properties.action.serviceBusQueueMessage.customMessageProperties.a", "expected a string, got a number"},
		{"properties.action.serviceBusQueueMessage.namespace", "expected a string, got a boolean"},
		{"properties.action.serviceBusQueueMessage.queueName", "expected a string, got a number"},
		{"properties.recurrence.colour", "unknown field (allowed: frequency, interval, count, endTime, timeZone, schedule, jitter, excludeDates)"},
		{"properties.recurrence.count", "expected an integer, got 1.5"},
		{"properties.recurrence.interval", "expected an integer, got a string"},
		{"properties.recurrence.schedule.hours", "expected an array, got an object"},
		{"properties.recurrence.schedule.minutes[0]", "the integer 99999999999999999999 is out of range"},
		{"properties.recurrence.schedule.monthDays[2]", "expected an integer, got a string"},
		{"properties.recurrence.schedule.monthDays[3]", "expected an integer, got 4.0"},
		{"properties.startTime", "expected a string, got a number"},
	}
	if !reflect.DeepEqual(ps, want) {
		t.Errorf("problems:\n%v\nwant:\n%v", ps, want)
	}
	if !reflect.DeepEqual(got, JobDefinition{}) {
		t.Errorf("v changed on failure: %+v", got)
	}
}

func TestDecodeMalformedJSONGivesPosition(t *testing.T) {
	cases := []struct {
		doc  string
		want string
	}{
		{"{\n  \"startTime\": \"x\",\n  }", "invalid JSON at line 3, column 3 (byte 24): invalid character '}' looking for beginning of object key string"},
		{"", "invalid JSON at line 1, column 1 (byte 0): unexpected end of JSON input"},
		{`{"state": "Enabled"`, "invalid JSON at line 1, column 20 (byte 19): unexpected end of JSON input"},
		{`{} x`, "invalid JSON at line 1, column 4 (byte 3): invalid character 'x' after top-level value"},
	}
	for _, c := range cases {
		var p JobProperties
		err := Decode([]byte(c.doc), &p)
		want := Problems{{Message: c.want}}
		if !reflect.DeepEqual(err, want) {
			t.Errorf("Decode(%q) = %#v, want %#v", c.doc, err, want)
		}
	}
}

func TestDecodeCaseInsensitiveNullAndEmbedded(t *testing.T) {
	doc := `{"StartTime":"2012-08-04T00:00Z","ACTION":{"type":"serviceBusQueue",
	"serviceBusQueueMessage":{"queuename":"q1","Namespace":"ns","authentication":{"sasKeyName":"k"},
	"brokeredMessageProperties":{"forcePersistence":true}}},
	"recurrence":{"frequency":"week","interval":null,"schedule":{"weekDays":["monday"],"hours":[10,22]},"count":10},
	"status":null}`
	var got JobProperties
	if err := Decode([]byte(doc), &got); err != nil {
		t.Fatalf("Decode: %v", err)
	}
	var std JobProperties
	if err := json.Unmarshal([]byte(doc), &std); err != nil {
		t.Fatalf("json.Unmarshal: %v", err)
	}
	if !reflect.DeepEqual(got, std) {
		t.Errorf("Decode = %+v, encoding/json = %+v", got, std)
	}
	if got.StartTime != "2012-08-04T00:00Z" || got.Action.ServiceBusQueueMessage.QueueName != "q1" ||
		got.Action.ServiceBusQueueMessage.Namespace != "ns" || got.Recurrence.Interval != nil ||
		*got.Recurrence.Count != 10 || got.Recurrence.Schedule.Hours[1] != 22 ||
		!*got.Action.ServiceBusQueueMessage.BrokeredMessageProperties.ForcePersistence {
		t.Errorf("unexpected decode: %+v", got)
	}
}

func TestDecodeNeedsPointer(t *testing.T) {
	var p JobProperties
	if err := Decode([]byte(`{}`), p); err == nil || err.Error() != "wire.Decode: need a non-nil pointer, got wire.JobProperties" {
		t.Errorf("Decode(non-pointer) = %v", err)
	}
}

// strictStd is what encoding/json says about data (one whole document, as json.Unmarshal wants)
// with unknown fields disallowed.
func strictStd(data []byte, v any) error {
	if !json.Valid(data) {
		return json.Unmarshal(data, v)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

func FuzzDecode(f *testing.F) {
	f.Add([]byte(`{"properties":{"startTime":"2012-08-04T00:00Z","recurrence":{"frequency":"week","schedule":{"weekDays":["monday"],"hours":[10,22]}}}}`))
	f.Add([]byte(`{"properties":{"action":{"serviceBusTopicMessage":{"topicPath":"t","message":"m","customMessageProperties":{"a":"b"}}}}}`))
	f.Add([]byte(`{"properties":{"recurrence":{"interval":1e2,"count":-0,"schedule":{"monthDays":[1,-1]}}}}`))
	f.Add([]byte(`{"Properties":{"RECURRENCE":null},"name":"x","id":"y"}`))
	f.Add([]byte(`[1,2,{"a":null}]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var got JobDefinition
		err := Decode(data, &got)
		if !utf8.Valid(data) {
			// Refused, where encoding/json would replace the bytes (TestDecodeRefusesInvalidUTF8).
			if err == nil {
				t.Fatalf("Decode accepted a document that is not valid UTF-8")
			}
			return
		}
		var std JobDefinition
		stdErr := strictStd(data, &std)
		if (err == nil) != (stdErr == nil) {
			t.Fatalf("Decode err = %v, encoding/json err = %v", err, stdErr)
		}
		if err == nil && !reflect.DeepEqual(got, std) {
			t.Fatalf("Decode = %+v, encoding/json = %+v", got, std)
		}
		if err != nil {
			ps, ok := err.(Problems)
			if !ok || len(ps) == 0 {
				t.Fatalf("error %v is not a non-empty Problems", err)
			}
		}
	})
}

func TestDecodeRefusesInvalidUTF8(t *testing.T) {
	for _, tc := range []struct{ doc, want string }{
		{"\xff", "the document is not valid UTF-8: byte 0xFF at line 1, column 1 (byte 0)"},
		{"{\"id\":\"a\xfeb\"}", "the document is not valid UTF-8: byte 0xFE at line 1, column 9 (byte 8)"},
		{"{\n\"id\":\n\"\xed\xa0\x80\"}", "the document is not valid UTF-8: byte 0xED at line 3, column 2 (byte 9)"},
		{"{\"a\xc3\":1}", "the document is not valid UTF-8: byte 0xC3 at line 1, column 4 (byte 3)"},
	} {
		var v JobDefinition
		err := Decode([]byte(tc.doc), &v)
		if ps, ok := err.(Problems); !ok || len(ps) != 1 || ps[0].Path != "" || ps[0].Message != tc.want {
			t.Errorf("Decode(%q) = %v, want %q", tc.doc, err, tc.want)
		}
	}
}

func TestDecodeRefusesRepeatedMembers(t *testing.T) {
	for _, tc := range []struct {
		doc  string
		want Problems
	}{
		{`{"properties":{},"Properties":{}}`, Problems{{"Properties", `repeats the member "properties" in another case; a member may appear once in an object (names are case-insensitive)`}}},
		{`{"id":"a","id":"b"}`, Problems{{"id", "appears twice; a member may appear once in an object (names are case-insensitive)"}}},
		{`{"properties":{"action":{"request":{"headers":{"A":"1","a":"2","B":"3"}}},"recurrence":{"schedule":{"monthlyOccurrences":[{},{"occurrence":1,"OCCURRENCE":2}]}}}}`, Problems{
			{"properties.action.request.headers.a", `repeats the member "A" in another case; a member may appear once in an object (names are case-insensitive)`},
			{"properties.recurrence.schedule.monthlyOccurrences[1].OCCURRENCE", `repeats the member "occurrence" in another case; a member may appear once in an object (names are case-insensitive)`},
		}},
		// Maps are walked too, and names compare with the Unicode folding encoding/json uses.
		{`{"properties":{"action":{"serviceBusQueueMessage":{"customMessageProperties":{"x":"1","X":"2"}}}}}`, Problems{
			{"properties.action.serviceBusQueueMessage.customMessageProperties.X", `repeats the member "x" in another case; a member may appear once in an object (names are case-insensitive)`}}},
		{`{"name":"a","\u212Aey":1,"key":2}`, Problems{{"key", "repeats the member \"\u212Aey\" in another case; a member may appear once in an object (names are case-insensitive)"}}},
	} {
		var v JobDefinition
		err := Decode([]byte(tc.doc), &v)
		if ps, ok := err.(Problems); !ok || !reflect.DeepEqual(ps, tc.want) {
			t.Errorf("Decode(%s) = %#v, want %#v", tc.doc, err, tc.want)
		}
	}
	// Members of different objects may share names.
	if err := Decode([]byte(`{"name":"a","properties":{"action":{"request":{"headers":{"name":"x"}}}}}`), &JobDefinition{}); err != nil {
		t.Errorf("names in different objects: %v", err)
	}
}

func TestDecodeMatchesMemberNamesASCIICaseInsensitively(t *testing.T) {
	var v JobDefinition
	if err := Decode([]byte(`{"NAME":"a","Properties":{"STATE":"Enabled"}}`), &v); err != nil || v.Name != "a" || v.Properties.State != "Enabled" {
		t.Fatalf("ASCII case: %v %+v", err, v)
	}
	err := Decode([]byte(`{"properties":{"ſtate":"Enabled"}}`), &v)
	if ps, ok := err.(Problems); !ok || len(ps) != 1 || ps[0].Path != "properties.ſtate" || !strings.HasPrefix(ps[0].Message, "unknown field") {
		t.Errorf("ſtate: %v, want an unknown field", err)
	}
}

// TestDuplicatesInLargeObjects: past 32 members an object's names are kept in a map; the answer
// is the same.
func TestDuplicatesInLargeObjects(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"tags":{`)
	for i := range 40 {
		fmt.Fprintf(&b, `"t%d":"v",`, i)
	}
	b.WriteString(`"T3":"x","t39":"y","T\u0034\u0030":"z"},"properties":{"state":"Enabled","State":"Disabled"}}`)
	want := Problems{
		{"tags.T3", `repeats the member "t3" in another case; a member may appear once in an object (names are case-insensitive)`},
		{"tags.t39", "appears twice; a member may appear once in an object (names are case-insensitive)"},
		{"properties.State", `repeats the member "state" in another case; a member may appear once in an object (names are case-insensitive)`},
	}
	if ps := Duplicates([]byte(b.String())); !reflect.DeepEqual(ps, want) {
		t.Errorf("Duplicates = %v\nwant %v", ps, want)
	}
	// Escaped names are names: "\u0074\u0034\u0030" is t40, a new member.
	if ps := Duplicates([]byte(`{"t40":1,"\u0074\u0034\u0031":2,"a":[{"x":1},{"x":1,"X":2}]}`)); !reflect.DeepEqual(ps, Problems{
		{"a[1].X", `repeats the member "x" in another case; a member may appear once in an object (names are case-insensitive)`},
	}) {
		t.Errorf("escaped names, arrays: %v", ps)
	}
}

// FuzzDecodeFastPath: Decode's fast path (one strict decode when every member name is plain
// ASCII) answers exactly as the checked path does, value and problems, for any document.
func FuzzDecodeFastPath(f *testing.F) {
	f.Add([]byte(`{"properties":{"startTime":"2012-08-04T00:00Z","recurrence":{"frequency":"week","schedule":{"weekDays":["monday"],"hours":[10,22]}}}}`))
	f.Add([]byte(`{"properties":{"action":{"type":"Http","request":{"uri":"http://x","method":"GET","headers":{"A":"1"}}},"state":"enabled"}}`))
	f.Add([]byte(`{"properties":{"recurrence":{"interval":"1","count":1.5,"schedule":{"monthDays":[1,"x"]}}},"nope":1}`))
	f.Add([]byte(`{"properties":{"ſtate":"Enabled"}}`))
	f.Add([]byte(`{"properties":{"st\u0061te":"Enabled","recurrence":{"interval":99999999999999999999}}}`))
	f.Add([]byte(`{"Properties":{"RECURRENCE":null},"name":"x","id":"y"}`))
	f.Add([]byte(`[1,2,{"a":null}]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var fast JobDefinition
		err := Decode(data, &fast)
		var checked JobDefinition
		var want error
		if _, ok := utf8Problem(data); ok && json.Valid(data) && len(Duplicates(data)) == 0 {
			want = decodeChecked(data, &checked, reflect.TypeFor[JobDefinition]())
		} else {
			want = Decode(data, &checked) // refused before either path
		}
		if !reflect.DeepEqual(err, want) {
			t.Fatalf("Decode err = %#v, checked path err = %#v", err, want)
		}
		if !reflect.DeepEqual(fast, checked) {
			t.Fatalf("Decode = %+v, checked path = %+v", fast, checked)
		}
	})
}

// TestDecodeIntoAFilledValue: a value that is not zero is decoded into as encoding/json would
// (members absent from the document keep their values), not replaced.
func TestDecodeIntoAFilledValue(t *testing.T) {
	v := JobDefinition{Name: "kept", Properties: &JobProperties{State: "Disabled"}}
	if err := Decode([]byte(`{"id":"x","properties":{"startTime":"2026-01-01T00:00:00Z"}}`), &v); err != nil {
		t.Fatal(err)
	}
	if v.Name != "kept" || v.ID != "x" || v.Properties.StartTime != "2026-01-01T00:00:00Z" || v.Properties.State != "Disabled" {
		t.Errorf("Decode into a filled value = %+v, properties %+v", v, *v.Properties)
	}
}
