package jobdef

import (
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/internal/recurrence"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"
)

// FormatTimes rewrites startTime and recurrence.endTime of a valid job in RFC 3339 in the rule's
// zone (SPEC 3: "2012-08-04T00:00Z" becomes "2012-08-04T00:00:00Z", a date alone its midnight;
// fractions of a second are kept), the form the daemon returns unless the client prefers the
// times as written. Compiling the result gives the same rule.
func FormatTimes(p *wire.JobProperties, rule *recurrence.Rule) {
	if p.StartTime != "" {
		p.StartTime = rule.Anchor().In(rule.Location()).Format(time.RFC3339Nano)
	}
	if p.Recurrence != nil && p.Recurrence.EndTime != "" {
		if end, ok := rule.EndTime(); ok {
			p.Recurrence.EndTime = end.In(rule.Location()).Format(time.RFC3339Nano)
		}
	}
}
