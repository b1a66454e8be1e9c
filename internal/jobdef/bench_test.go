package jobdef

import (
	"testing"

	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"
)

// BenchmarkValidate measures validating (and compiling) a job like the seed documents' example,
// as the provider does at plan time and the API on every write.
func BenchmarkValidate(b *testing.B) {
	var p wire.JobProperties
	js := `{"startTime":"2012-08-04T00:00Z","action":{"type":"http","retryPolicy":{"retryType":"none"},"request":{"uri":"http://contoso.com/foo",` +
		`"method":"PUT","body":"Posting from a timer","headers":{"Content-Type":"application/json"}},"errorAction":{"type":"http","request":` +
		`{"uri":"http://contoso.com/notifyError","method":"POST"}}},"recurrence":{"frequency":"week","interval":1,"schedule":{"weekDays":` +
		`["monday","wednesday","friday"],"hours":[10,22]},"count":10,"endTime":"2012-11-04"},"state":"disabled"}`
	if err := wire.Decode([]byte(js), &p); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for range b.N {
		if _, ps := Validate(&p, created); len(ps) > 0 {
			b.Fatal(ps)
		}
	}
}
