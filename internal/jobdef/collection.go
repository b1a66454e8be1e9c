package jobdef

import (
	"fmt"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/internal/jobstate"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/recurrence"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"
)

// Limits are the effective limits of a job collection: its SKU's defaults, overridden by its quota.
type Limits struct {
	MaxJobCount      int    // jobs in the collection
	MaxJobOccurrence int    // the largest recurrence count; 0: no limit
	MaxRecurrence    Period // the shortest time between two executions
	Authentication   bool   // whether outbound authentication is allowed
}

// Period is a recurrence frequency with an interval, such as 1 Hour.
type Period struct {
	Frequency string // Minute, Hour, Day, Week, Month
	Interval  int
}

func (p Period) String() string {
	if p.Interval == 1 {
		return "1 " + p.Frequency
	}
	return fmt.Sprintf("%d %ss", p.Interval, p.Frequency)
}

// maxSpan is the longest After(t) - t can be for a t in a zone (fixed: one without transitions),
// when it is known: the interval for minutes and hours (elapsed time), and in a fixed zone for
// days and weeks, 31 days per month for months.
func (p Period) maxSpan(fixedZone bool) (time.Duration, bool) {
	n := int64(p.Interval)
	switch p.Frequency {
	case "Minute":
		return time.Duration(n) * time.Minute, true
	case "Hour":
		return time.Duration(n) * time.Hour, true
	}
	if !fixedZone {
		return 0, false
	}
	days := n * 31 // months
	switch p.Frequency {
	case "Day":
		days = n
	case "Week":
		days = 7 * n
	}
	return time.Duration(days) * 24 * time.Hour, true
}

// After returns t plus the period (calendar days, weeks and months in t's location).
func (p Period) After(t time.Time) time.Time {
	switch p.Frequency {
	case "Minute":
		return t.Add(time.Duration(p.Interval) * time.Minute)
	case "Hour":
		return t.Add(time.Duration(p.Interval) * time.Hour)
	case "Day":
		return t.AddDate(0, 0, p.Interval)
	case "Week":
		return t.AddDate(0, 0, 7*p.Interval)
	default:
		return t.AddDate(0, p.Interval, 0)
	}
}

// SkuLimits returns a SKU's defaults (SPEC 2): Free 5 jobs, 1 hour, no outbound authentication;
// Standard and P10Premium 50 jobs, 1 minute; P20Premium 1000 jobs, 1 minute.
func SkuLimits(sku string) Limits {
	switch sku {
	case SkuFree:
		return Limits{MaxJobCount: 5, MaxRecurrence: Period{"Hour", 1}}
	case SkuP20Premium:
		return Limits{MaxJobCount: 1000, MaxRecurrence: Period{"Minute", 1}, Authentication: true}
	default: // Standard, P10Premium
		return Limits{MaxJobCount: 50, MaxRecurrence: Period{"Minute", 1}, Authentication: true}
	}
}

// CollectionLimits returns the effective limits of a (normalized, valid) collection.
func CollectionLimits(p *wire.JobCollectionProperties) Limits {
	sku := SkuStandard
	if p != nil && p.Sku != nil && p.Sku.Name != "" {
		sku = p.Sku.Name
	}
	l := SkuLimits(sku)
	if p == nil || p.Quota == nil {
		return l
	}
	q := p.Quota
	if q.MaxJobCount != nil {
		l.MaxJobCount = *q.MaxJobCount
	}
	if q.MaxJobOccurrence != nil {
		l.MaxJobOccurrence = *q.MaxJobOccurrence
	}
	if r := q.MaxRecurrence; r != nil && r.Frequency != "" {
		l.MaxRecurrence = Period{Frequency: r.Frequency, Interval: 1}
		if r.Interval != nil {
			l.MaxRecurrence.Interval = *r.Interval
		}
	}
	return l
}

// ValidateCollection checks a job collection's properties: sku, state (Deleted is not writable),
// quota counts and maxRecurrence.
func ValidateCollection(p *wire.JobCollectionProperties) wire.Problems {
	var ps problems
	if p == nil {
		return nil
	}
	if p.Sku != nil {
		ps.enum("sku.name", p.Sku.Name, skuNames)
	}
	if p.State != "" {
		if s, ok := Canonical(p.State, collectionStates); !ok {
			ps.add("state", "%q is not one of Enabled, Disabled, Suspended", p.State)
		} else if s == StateDeleted {
			ps.add("state", "Deleted is set by the scheduler; a collection can be written Enabled, Disabled or Suspended")
		}
	}
	if q := p.Quota; q != nil {
		if q.MaxJobCount != nil && *q.MaxJobCount < 1 {
			ps.add("quota.maxJobCount", "%d is below 1", *q.MaxJobCount)
		}
		if q.MaxJobOccurrence != nil && *q.MaxJobOccurrence < 1 {
			ps.add("quota.maxJobOccurrence", "%d is below 1", *q.MaxJobOccurrence)
		}
		if r := q.MaxRecurrence; r != nil {
			ps.enum("quota.maxRecurrence.frequency", r.Frequency, frequencies)
			if r.Interval != nil && *r.Interval < 1 {
				ps.add("quota.maxRecurrence.interval", "%d is below 1", *r.Interval)
			}
		}
	}
	return ps.list
}

// Violation is a collection limit a job exceeds (a 409 in the API).
type Violation struct {
	Limit   string // maxJobCount, maxJobOccurrence, maxRecurrence or authentication
	Message string
}

func (v *Violation) Error() string { return v.Message }

// CheckLimits checks a valid job against its collection's limits (except maxJobCount, which the
// store checks atomically): its count against maxJobOccurrence, any two of its next 1,000
// executions from now against maxRecurrence, and outbound authentication on a Free collection.
// done is how many times the job has executed. It returns nil when the job fits.
func CheckLimits(p *wire.JobProperties, rule *recurrence.Rule, l Limits, now time.Time, done int) *Violation {
	if !l.Authentication && p.Action != nil {
		has := HasAuthentication(p.Action.Request)
		if e := p.Action.ErrorAction; e != nil && HasAuthentication(e.Request) {
			has = true
		}
		if has {
			return &Violation{Limit: "authentication", Message: "the collection's sku (Free) does not allow outbound authentication: use a Standard or Premium collection"}
		}
	}
	if l.MaxJobOccurrence > 0 && rule.Count() > l.MaxJobOccurrence {
		return &Violation{Limit: "maxJobOccurrence", Message: fmt.Sprintf("recurrence.count %d exceeds the collection's maxJobOccurrence %d", rule.Count(), l.MaxJobOccurrence)}
	}
	if !rule.Recurring() || l.MaxRecurrence.Interval < 1 {
		return nil
	}
	// A rule whose candidates are never closer than the longest the period can be fits without
	// enumerating them (most rules: one candidate per minute, hour, day...).
	if gap, ok := rule.MinGap(); ok {
		if span, ok := l.MaxRecurrence.maxSpan(rule.FixedZone()); ok && gap >= span {
			return nil
		}
	}
	occ := jobstate.Preview(rule, now, done, 1000)
	// The "once, immediately" run of a job without startTime is not a recurrence: only the
	// candidates after it count (an hourly job created at 10:30 on the hour runs at 10:30, 11:00).
	if first, immediate, ok := rule.First(now); ok && immediate && len(occ) > 0 && occ[0].Equal(first) {
		occ = occ[1:]
	}
	for i := 1; i < len(occ); i++ {
		if l.MaxRecurrence.After(occ[i-1]).After(occ[i]) {
			return &Violation{Limit: "maxRecurrence", Message: fmt.Sprintf(
				"the job recurs faster than the collection's maxRecurrence (%s): executions at %s and %s are closer than that",
				l.MaxRecurrence, occ[i-1].Format(time.RFC3339), occ[i].Format(time.RFC3339))}
		}
	}
	return nil
}
