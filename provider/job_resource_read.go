package provider

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/schedulerhq/terraform-provider-scheduler/internal/client"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/jobdef"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/recurrence"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/retry"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"
)

// zoneOf is the zone the daemon writes the job's times in (SPEC 4.2), from its answer.
func zoneOf(p *wire.JobProperties) *time.Location {
	rule, err := recurrence.Compile(p.StartTime, p.Recurrence, time.Now())
	if err != nil || rule == nil {
		return time.UTC
	}
	return rule.Location()
}

// importedFromWire sets m from the API's answer for a job just imported (or listed for
// configuration generation): fromWire without a prior, except that an action's retryPolicy equal
// to the default (Fixed, 30 s, 4, however spelled, retry.Parse) is left out, as the
// configuration of such a job leaves the block out. Terraform refuses a planned block that the
// configuration leaves out, so the block cannot be kept and planned away: kept, the first plan
// after the import would remove it. A configuration that writes the default block explicitly
// plans adding it once instead (an update that sends the same policy). The error action's
// retryPolicy is always kept: without one it takes the main action's, which may not be the default.
func (m *jobModel) importedFromWire(id client.JobID, def *wire.JobDefinition) {
	m.fromWire(id, def, nil)
	if m.Action == nil || def.Properties == nil || def.Properties.Action == nil || def.Properties.Action.RetryPolicy == nil {
		return
	}
	if pol, problems := retry.Parse("action.retryPolicy", def.Properties.Action.RetryPolicy); len(problems) == 0 && pol == retry.Default() {
		m.Action.RetryPolicy = nil
	}
}

// fromWire sets m from the API's answer for job id; prior is the plan or state (nil on import).
func (m *jobModel) fromWire(id client.JobID, def *wire.JobDefinition, prior *jobModel) {
	fresh := prior == nil
	if fresh {
		prior = &jobModel{}
	}
	p := def.Properties
	if p == nil {
		p = &wire.JobProperties{}
	}
	instant := sameInstant(zoneOf(p))
	m.ID = types.StringValue(id.String())
	m.JobCollectionID = keepString(prior.JobCollectionID, id.CollectionID.String(), fresh, sameFold)
	m.Name = keepString(prior.Name, id.Name, fresh, sameFold)
	m.StartTime = keepString(prior.StartTime, p.StartTime, fresh, instant)

	live, _ := jobdef.CanonicalJobState(p.State)
	switch live {
	case jobdef.StateEnabled, jobdef.StateDisabled:
		m.State = keepEnum(prior.State, live, fresh)
	default: // Completed, Faulted: the configured state is still what the user asked for
		m.State = prior.State
		if m.State.IsNull() || m.State.IsUnknown() {
			m.State = enumOf(jobdef.StateEnabled)
		}
	}
	m.Status = statusObject(live, p.Status)

	m.Action = nil
	if a := p.Action; a != nil {
		pa := prior.Action
		if pa == nil {
			pa = &actionModel{}
		}
		m.Action = &actionModel{
			Type:                   keepEnum(pa.Type, a.Type, fresh),
			Request:                requestFromWire(a.Request, pa.Request, fresh),
			QueueMessage:           queueMessageFromWire(a.QueueMessage, pa.QueueMessage, fresh),
			ServiceBusQueueMessage: sbQueueFromWire(a.ServiceBusQueueMessage, pa.ServiceBusQueueMessage, fresh),
			ServiceBusTopicMessage: sbTopicFromWire(a.ServiceBusTopicMessage, pa.ServiceBusTopicMessage, fresh),
			RetryPolicy:            retryFromWire(a.RetryPolicy, pa.RetryPolicy, fresh),
			Timeout:                keepDuration(pa.Timeout, a.Timeout, fresh),
		}
		// An error action or a recurrence added outside Terraform shows as drift.
		if e := a.ErrorAction; e != nil {
			pe := pa.ErrorAction
			f := fresh || pe == nil
			if pe == nil {
				pe = &errorActionModel{}
			}
			m.Action.ErrorAction = &errorActionModel{
				Type:                   keepEnum(pe.Type, e.Type, f),
				Request:                requestFromWire(e.Request, pe.Request, f),
				QueueMessage:           queueMessageFromWire(e.QueueMessage, pe.QueueMessage, f),
				ServiceBusQueueMessage: sbQueueFromWire(e.ServiceBusQueueMessage, pe.ServiceBusQueueMessage, f),
				ServiceBusTopicMessage: sbTopicFromWire(e.ServiceBusTopicMessage, pe.ServiceBusTopicMessage, f),
				RetryPolicy:            retryFromWire(e.RetryPolicy, pe.RetryPolicy, f),
				Timeout:                keepDuration(pe.Timeout, e.Timeout, f),
			}
		}
	}
	m.Recurrence = recurrenceFromWire(p.Recurrence, prior.Recurrence, fresh || prior.Recurrence == nil, instant)
	m.whenFromWire(p, prior, fresh)
	if !fresh && !prior.RecurrenceDescription.IsUnknown() && !prior.RecurrenceDescription.IsNull() {
		// The words as planned: a one-shot planned "once, immediately" keeps them once it ran.
		m.RecurrenceDescription = prior.RecurrenceDescription
	} else {
		m.RecurrenceDescription = types.StringValue(describe(p.StartTime, p.Recurrence, time.Now(), false))
	}
}

func statusObject(live string, s *wire.JobStatus) types.Object {
	if s == nil {
		s = &wire.JobStatus{}
	}
	count := func(n *int) attr.Value {
		if n == nil {
			return types.Int64Value(0)
		}
		return types.Int64Value(int64(*n))
	}
	when := func(t string) attr.Value {
		if t == "" {
			return types.StringNull()
		}
		return types.StringValue(t)
	}
	state := types.StringNull()
	if live != "" {
		state = types.StringValue(live)
	}
	return types.ObjectValueMust(statusAttrTypes, map[string]attr.Value{
		"state":               state,
		"execution_count":     count(s.ExecutionCount),
		"failure_count":       count(s.FailureCount),
		"faulted_count":       count(s.FaultedCount),
		"last_execution_time": when(s.LastExecutionTime),
		"next_execution_time": when(s.NextExecutionTime),
	})
}

// secret keeps a write-only value from the configuration (the API never returns it).
func secret(prior types.String, fresh bool) types.String {
	if fresh || prior.IsUnknown() {
		return types.StringNull()
	}
	return prior
}

func requestFromWire(r *wire.HTTPRequest, prior *requestModel, fresh bool) *requestModel {
	if r == nil || (!fresh && prior == nil) {
		return nil
	}
	if prior == nil {
		prior = &requestModel{}
	}
	out := &requestModel{
		URI:     keepString(prior.URI, r.URI, fresh, sameString),
		Method:  keepEnum(prior.Method, r.Method, fresh),
		Body:    keepString(prior.Body, r.Body, fresh, sameString),
		Headers: keepStringMap(context.Background(), prior.Headers, r.Headers, fresh),
		Signing: signingFromWire(r.Signing, prior.Signing, fresh),
	}
	a := r.Authentication
	if a == nil || authBlock(a) == "" {
		return out
	}
	pa := prior.Authentication // nil: added outside Terraform, shown as drift
	if pa == nil {
		pa = &authenticationModel{}
	}
	out.Authentication = &authenticationModel{}
	switch authBlock(a) {
	case "basic":
		pb := pa.Basic
		if pb == nil {
			pb = &basicAuthModel{}
		}
		out.Authentication.Basic = &basicAuthModel{
			Username:          keepString(pb.Username, a.Username, fresh || pa.Basic == nil, sameString),
			Password:          secret(pb.Password, fresh),
			PasswordWOVersion: writeOnlyVersion(pb.PasswordWOVersion, fresh),
		}
	case "client_certificate":
		pc := pa.ClientCertificate
		if pc == nil {
			pc = &clientCertModel{}
		}
		computed := func(v string) types.String {
			if v == "" {
				return types.StringNull()
			}
			return types.StringValue(v)
		}
		out.Authentication.ClientCertificate = &clientCertModel{
			Pfx:                       secret(pc.Pfx, fresh),
			PfxWOVersion:              writeOnlyVersion(pc.PfxWOVersion, fresh),
			Password:                  secret(pc.Password, fresh),
			PasswordWOVersion:         writeOnlyVersion(pc.PasswordWOVersion, fresh),
			CertificateThumbprint:     computed(a.CertificateThumbprint),
			CertificateExpirationDate: computed(a.CertificateExpirationDate),
			CertificateSubjectName:    computed(a.CertificateSubjectName),
		}
	case "active_directory_oauth":
		po := pa.ActiveDirectoryOAuth
		f := fresh || po == nil
		if po == nil {
			po = &oauthModel{}
		}
		out.Authentication.ActiveDirectoryOAuth = &oauthModel{
			Tenant:          keepString(po.Tenant, a.Tenant, f, sameString),
			Audience:        keepString(po.Audience, a.Audience, f, sameString),
			ClientID:        keepString(po.ClientID, a.ClientID, f, sameString),
			Secret:          secret(po.Secret, fresh),
			SecretWOVersion: writeOnlyVersion(po.SecretWOVersion, fresh),
		}
	}
	return out
}

func retryFromWire(r *wire.RetryPolicy, prior *retryPolicyModel, fresh bool) *retryPolicyModel {
	if r == nil || (!fresh && prior == nil) {
		return nil
	}
	if prior == nil {
		prior = &retryPolicyModel{}
	}
	return &retryPolicyModel{
		RetryType:        keepEnum(prior.RetryType, r.RetryType, fresh),
		RetryInterval:    keepDuration(prior.RetryInterval, r.RetryInterval, fresh),
		RetryCount:       keepInt(prior.RetryCount, r.RetryCount, fresh),
		MaxRetryInterval: keepDuration(prior.MaxRetryInterval, r.MaxRetryInterval, fresh),
	}
}

func recurrenceFromWire(r *wire.JobRecurrence, prior *recurrenceModel, fresh bool, instant func(a, b string) bool) *recurrenceModel {
	if r == nil || (!fresh && prior == nil) {
		return nil
	}
	if prior == nil {
		prior = &recurrenceModel{}
	}
	out := &recurrenceModel{
		Frequency: keepEnum(prior.Frequency, r.Frequency, fresh),
		Interval:  keepInt(prior.Interval, r.Interval, fresh),
		Count:     keepInt(prior.Count, r.Count, fresh),
		EndTime:   keepString(prior.EndTime, r.EndTime, fresh, instant),
		TimeZone:  keepString(prior.TimeZone, r.TimeZone, fresh, sameString),
	}
	out.whenFromWire(r, prior)
	s := r.Schedule
	ps := prior.Schedule
	switch {
	case ps == nil && !fresh:
		return out
	case ps == nil && (s == nil || emptySchedule(s)):
		return out // import of a job without schedule
	}
	if s == nil {
		s = &wire.JobRecurrenceSchedule{} // an empty schedule is no schedule
	}
	if ps == nil {
		ps = &scheduleModel{
			Minutes: types.ListNull(types.Int64Type), Hours: types.ListNull(types.Int64Type),
			MonthDays: types.ListNull(types.Int64Type), WeekDays: types.ListNull(types.StringType),
		}
	}
	out.Schedule = &scheduleModel{
		Minutes:            keepIntList(ps.Minutes, s.Minutes, fresh),
		Hours:              keepIntList(ps.Hours, s.Hours, fresh),
		MonthDays:          keepIntList(ps.MonthDays, s.MonthDays, fresh),
		WeekDays:           keepFoldList(ps.WeekDays, s.WeekDays, fresh),
		MonthlyOccurrences: keepOccurrences(ps.MonthlyOccurrences, s.MonthlyOccurrences, fresh),
	}
	return out
}

func emptySchedule(s *wire.JobRecurrenceSchedule) bool {
	return len(s.Minutes) == 0 && len(s.Hours) == 0 && len(s.MonthDays) == 0 && len(s.WeekDays) == 0 && len(s.MonthlyOccurrences) == 0
}

// keepOccurrences keeps the prior list when it holds the same (day, occurrence) pairs, days
// compared case-insensitively, in any order.
func keepOccurrences(prior []monthlyOccurrenceModel, api []wire.JobRecurrenceScheduleMonthlyOccurrence, fresh bool) []monthlyOccurrenceModel {
	if !fresh && prior == nil {
		return nil
	}
	key := func(day string, occ *int) string {
		k := strings.ToLower(day)
		if occ != nil {
			k += "/" + string(rune('0'+5+*occ))
		}
		return k
	}
	if len(api) == 0 {
		if len(prior) == 0 {
			return prior
		}
		return nil
	}
	var pk, ak []string
	for _, p := range prior {
		pk = append(pk, key(str(p.Day), intPtr(p.Occurrence)))
	}
	out := make([]monthlyOccurrenceModel, len(api))
	for i, a := range api {
		ak = append(ak, key(a.Day, a.Occurrence))
		out[i] = monthlyOccurrenceModel{Day: enumOf(a.Day), Occurrence: types.Int64Null()}
		if a.Occurrence != nil {
			out[i].Occurrence = types.Int64Value(int64(*a.Occurrence))
		}
	}
	slices.Sort(pk)
	slices.Sort(ak)
	if slices.Equal(pk, ak) {
		return prior
	}
	return out
}
