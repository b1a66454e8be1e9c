package jobdef

import (
	"testing"

	"github.com/schedulerhq/terraform-provider-scheduler/internal/recurrence"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"
)

// FuzzValidate: whatever decodes, Validate never panics, and a job it accepts keeps its rule
// when its times are rewritten in RFC 3339 (what the daemon stores).
func FuzzValidate(f *testing.F) {
	for _, s := range []string{
		`{"action":{"type":"Https","request":{"uri":"https://e.com","method":"GET"}}}`,
		`{"startTime":"2012-08-04T00:00Z","action":{"type":"http","request":{"uri":"http://e.com","method":"PUT","headers":{"A":"b"}}},"recurrence":{"frequency":"week","schedule":{"weekDays":["monday"],"hours":[10,22]},"count":10,"endTime":"2012-11-04"}}`,
		`{"startTime":"2026-03-29T02:30:00","action":{"type":"Https","request":{"uri":"https://e.com","method":"GET","authentication":{"type":"Basic","username":"u","password":"p"}}},"recurrence":{"frequency":"Day","timeZone":"Europe/Berlin"}}`,
		`{"action":{"type":"Https","request":{"uri":"https://e.com","method":"GET"},"retryPolicy":{"retryType":"fixed","retryInterval":"00:00:30","retryCount":3}},"recurrence":{"frequency":"Month","schedule":{"monthlyOccurrences":[{"day":"friday","occurrence":-1}],"monthDays":[-1,15]}}}`,
		`{"state":"disabled","action":{"type":"StorageQueue","queueMessage":{"queueName":"q"}}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var p wire.JobProperties
		if wire.Decode(data, &p) != nil {
			return
		}
		Normalize(&p)
		rule, ps := Validate(&p, created)
		if len(ps) > 0 {
			if rule != nil {
				t.Fatal("a rule with problems")
			}
			return
		}
		FormatTimes(&p, rule)
		again, err := recurrence.Compile(p.StartTime, p.Recurrence, created)
		if err != nil {
			t.Fatalf("formatted times %q %+v do not compile: %v", p.StartTime, p.Recurrence, err)
		}
		if !again.Anchor().Equal(rule.Anchor()) {
			t.Fatalf("anchor %v became %v", rule.Anchor(), again.Anchor())
		}
	})
}
