package provider

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/schedulerhq/terraform-provider-scheduler/internal/client"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/jobdef"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/recurrence"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"
)

type jobModel struct {
	ID              types.String     `tfsdk:"id"`
	JobCollectionID types.String     `tfsdk:"job_collection_id"`
	Name            types.String     `tfsdk:"name"`
	StartTime       types.String     `tfsdk:"start_time"`
	State           types.String     `tfsdk:"state"`
	Action          *actionModel     `tfsdk:"action"`
	Recurrence      *recurrenceModel `tfsdk:"recurrence"`
	Status          types.Object     `tfsdk:"status"`
	// RecurrenceDescription is the rule in words (recurrence.Describe), computed.
	RecurrenceDescription types.String `tfsdk:"recurrence_description"`
}

type actionModel struct {
	Type                   types.String       `tfsdk:"type"`
	Request                *requestModel      `tfsdk:"request"`
	QueueMessage           *queueMessageModel `tfsdk:"queue_message"`
	ServiceBusQueueMessage *sbQueueModel      `tfsdk:"service_bus_queue_message"`
	ServiceBusTopicMessage *sbTopicModel      `tfsdk:"service_bus_topic_message"`
	RetryPolicy            *retryPolicyModel  `tfsdk:"retry_policy"`
	ErrorAction            *errorActionModel  `tfsdk:"error_action"`
}

type errorActionModel struct {
	Type                   types.String       `tfsdk:"type"`
	Request                *requestModel      `tfsdk:"request"`
	QueueMessage           *queueMessageModel `tfsdk:"queue_message"`
	ServiceBusQueueMessage *sbQueueModel      `tfsdk:"service_bus_queue_message"`
	ServiceBusTopicMessage *sbTopicModel      `tfsdk:"service_bus_topic_message"`
	RetryPolicy            *retryPolicyModel  `tfsdk:"retry_policy"`
}

type requestModel struct {
	URI            types.String         `tfsdk:"uri"`
	Method         types.String         `tfsdk:"method"`
	Body           types.String         `tfsdk:"body"`
	Headers        types.Map            `tfsdk:"headers"`
	Authentication *authenticationModel `tfsdk:"authentication"`
}

type authenticationModel struct {
	Basic                *basicAuthModel  `tfsdk:"basic"`
	ClientCertificate    *clientCertModel `tfsdk:"client_certificate"`
	ActiveDirectoryOAuth *oauthModel      `tfsdk:"active_directory_oauth"`
}

type basicAuthModel struct {
	Username types.String `tfsdk:"username"`
	Password types.String `tfsdk:"password"`
}

type clientCertModel struct {
	Pfx                       types.String `tfsdk:"pfx"`
	Password                  types.String `tfsdk:"password"`
	CertificateThumbprint     types.String `tfsdk:"certificate_thumbprint"`
	CertificateExpirationDate types.String `tfsdk:"certificate_expiration_date"`
	CertificateSubjectName    types.String `tfsdk:"certificate_subject_name"`
}

type oauthModel struct {
	Tenant   types.String `tfsdk:"tenant"`
	Audience types.String `tfsdk:"audience"`
	ClientID types.String `tfsdk:"client_id"`
	Secret   types.String `tfsdk:"secret"`
}

type retryPolicyModel struct {
	RetryType     types.String `tfsdk:"retry_type"`
	RetryInterval types.String `tfsdk:"retry_interval"`
	RetryCount    types.Int64  `tfsdk:"retry_count"`
}

type recurrenceModel struct {
	Frequency types.String   `tfsdk:"frequency"`
	Interval  types.Int64    `tfsdk:"interval"`
	Count     types.Int64    `tfsdk:"count"`
	EndTime   types.String   `tfsdk:"end_time"`
	TimeZone  types.String   `tfsdk:"time_zone"`
	Schedule  *scheduleModel `tfsdk:"schedule"`
}

type scheduleModel struct {
	Minutes            types.List               `tfsdk:"minutes"`
	Hours              types.List               `tfsdk:"hours"`
	WeekDays           types.List               `tfsdk:"week_days"`
	MonthDays          types.List               `tfsdk:"month_days"`
	MonthlyOccurrences []monthlyOccurrenceModel `tfsdk:"monthly_occurrences"`
}

type monthlyOccurrenceModel struct {
	Day        types.String `tfsdk:"day"`
	Occurrence types.Int64  `tfsdk:"occurrence"`
}

// unknowns lists the JSON paths (relative to the job's properties) of the values known only
// after apply. The engine's problems that may depend on them are not reported: they would be
// guesses. The others are: an unknown start_time does not hide month_days[2] = 32.
type unknowns []string

// covers reports whether a problem at a JSON path may depend on an unknown value: the problem is
// about the value (or inside it, or around it), or the unknown value steers its whole part of the
// job (a type, the frequency, the time zone), or the problem relates it to other fields (end
// time and start time, a rule that never fires, a certificate and its password).
func (u unknowns) covers(problem string) bool {
	for _, v := range u {
		switch {
		case problem == "", within(problem, v), within(v, problem):
			return true
		case part(problem) != part(v):
			continue
		case steers(v), relates(problem, v):
			return true
		}
	}
	return false
}

// within reports whether path is inner or inside it.
func within(path, inner string) bool {
	return path == inner || strings.HasPrefix(path, inner+".") || strings.HasPrefix(path, inner+"[")
}

// part names the part of a job a path is in: the schedule, the action or the error action.
func part(path string) string {
	switch {
	case strings.HasPrefix(path, "action.errorAction"):
		return "errorAction"
	case strings.HasPrefix(path, "action"):
		return "action"
	}
	return "schedule"
}

func steers(path string) bool {
	return strings.HasSuffix(path, ".type") || path == "recurrence.frequency" || path == "recurrence.timeZone"
}

// relates reports whether a problem compares its field with the unknown value v (same part).
func relates(problem, v string) bool {
	switch problem {
	case "recurrence", "recurrence.schedule": // the rule as a whole (it never fires)
		return true
	case "startTime", "recurrence.endTime":
		return v == "startTime" || v == "recurrence.endTime"
	}
	if i := strings.Index(problem, ".authentication"); i >= 0 {
		return within(v, problem[:i+len(".authentication")])
	}
	return false
}

// conv turns model values into wire values, noting the paths of unknown ones.
type conv struct{ unknown *unknowns }

func (c conv) mark(v interface{ IsUnknown() bool }, path string) bool {
	if v.IsUnknown() {
		*c.unknown = append(*c.unknown, path)
		return true
	}
	return false
}

func (c conv) str(v types.String, path string) string {
	c.mark(v, path)
	return str(v)
}

func (c conv) intp(v types.Int64, path string) *int {
	c.mark(v, path)
	return intPtr(v)
}

// ints converts a list; with an unknown element the whole list is unknown (its indices would
// not match the configuration's).
func (c conv) ints(v types.List, path string) []int {
	if c.mark(v, path) {
		return nil
	}
	var out []int
	for _, e := range v.Elements() {
		n, ok := e.(types.Int64)
		if !ok || n.IsUnknown() {
			*c.unknown = append(*c.unknown, path)
			return nil
		}
		if !n.IsNull() {
			out = append(out, int(n.ValueInt64()))
		}
	}
	return out
}

func (c conv) strs(v types.List, path string) []string {
	if c.mark(v, path) {
		return nil
	}
	var out []string
	for _, e := range v.Elements() {
		s, ok := e.(types.String)
		if !ok || s.IsUnknown() {
			*c.unknown = append(*c.unknown, path)
			return nil
		}
		if !s.IsNull() {
			out = append(out, s.ValueString())
		}
	}
	return out
}

func (c conv) strMap(v types.Map, path string) map[string]string {
	if c.mark(v, path) || v.IsNull() {
		return nil
	}
	out := map[string]string{}
	for k, e := range v.Elements() {
		s, ok := e.(types.String)
		if !ok || s.IsUnknown() {
			*c.unknown = append(*c.unknown, path)
			continue
		}
		out[k] = s.ValueString()
	}
	return out
}

// toWire builds the job's properties (enums in Azure's spelling) and lists the unknown values.
func (m *jobModel) toWire() (*wire.JobProperties, unknowns) {
	var u unknowns
	c := conv{&u}
	p := &wire.JobProperties{
		StartTime:  c.str(m.StartTime, "startTime"),
		State:      canonical(str(m.State), jobWritableStates),
		Recurrence: m.Recurrence.toWire(c),
	}
	if a := m.Action; a != nil {
		p.Action = &wire.JobAction{
			Type:                   canonical(c.str(a.Type, "action.type"), actionTypes),
			Request:                a.Request.toWire(c, "action.request"),
			QueueMessage:           a.QueueMessage.toWire(c, "action.queueMessage"),
			ServiceBusQueueMessage: a.ServiceBusQueueMessage.toWire(c, "action.serviceBusQueueMessage"),
			ServiceBusTopicMessage: a.ServiceBusTopicMessage.toWire(c, "action.serviceBusTopicMessage"),
			RetryPolicy:            a.RetryPolicy.toWire(c, "action.retryPolicy"),
		}
		if e := a.ErrorAction; e != nil {
			p.Action.ErrorAction = &wire.JobErrorAction{
				Type:                   canonical(c.str(e.Type, "action.errorAction.type"), actionTypes),
				Request:                e.Request.toWire(c, "action.errorAction.request"),
				QueueMessage:           e.QueueMessage.toWire(c, "action.errorAction.queueMessage"),
				ServiceBusQueueMessage: e.ServiceBusQueueMessage.toWire(c, "action.errorAction.serviceBusQueueMessage"),
				ServiceBusTopicMessage: e.ServiceBusTopicMessage.toWire(c, "action.errorAction.serviceBusTopicMessage"),
				RetryPolicy:            e.RetryPolicy.toWire(c, "action.errorAction.retryPolicy"),
			}
		}
	}
	return p, u
}

func (r *requestModel) toWire(c conv, at string) *wire.HTTPRequest {
	if r == nil {
		return nil
	}
	out := &wire.HTTPRequest{
		URI:     c.str(r.URI, at+".uri"),
		Method:  strings.ToUpper(c.str(r.Method, at+".method")),
		Body:    c.str(r.Body, at+".body"),
		Headers: c.strMap(r.Headers, at+".headers"),
	}
	if a := r.Authentication; a != nil {
		at += ".authentication"
		switch {
		case a.Basic != nil:
			out.Authentication = &wire.HTTPAuthentication{Type: jobdef.AuthBasic,
				Username: c.str(a.Basic.Username, at+".username"), Password: c.str(a.Basic.Password, at+".password")}
		case a.ClientCertificate != nil:
			out.Authentication = &wire.HTTPAuthentication{Type: jobdef.AuthClientCertificate,
				Pfx: c.str(a.ClientCertificate.Pfx, at+".pfx"), Password: c.str(a.ClientCertificate.Password, at+".password")}
		case a.ActiveDirectoryOAuth != nil:
			o := a.ActiveDirectoryOAuth
			out.Authentication = &wire.HTTPAuthentication{Type: jobdef.AuthActiveDirectoryOAuth,
				Tenant: c.str(o.Tenant, at+".tenant"), Audience: c.str(o.Audience, at+".audience"),
				ClientID: c.str(o.ClientID, at+".clientId"), Secret: c.str(o.Secret, at+".secret")}
		}
	}
	return out
}

func (r *retryPolicyModel) toWire(c conv, at string) *wire.RetryPolicy {
	if r == nil {
		return nil
	}
	return &wire.RetryPolicy{
		RetryType:     canonical(c.str(r.RetryType, at+".retryType"), retryTypes),
		RetryInterval: c.str(r.RetryInterval, at+".retryInterval"),
		RetryCount:    c.intp(r.RetryCount, at+".retryCount"),
	}
}

func (r *recurrenceModel) toWire(c conv) *wire.JobRecurrence {
	if r == nil {
		return nil
	}
	out := &wire.JobRecurrence{
		Frequency: canonical(c.str(r.Frequency, "recurrence.frequency"), frequencies),
		Interval:  c.intp(r.Interval, "recurrence.interval"),
		Count:     c.intp(r.Count, "recurrence.count"),
		EndTime:   c.str(r.EndTime, "recurrence.endTime"),
		TimeZone:  c.str(r.TimeZone, "recurrence.timeZone"),
	}
	if s := r.Schedule; s != nil {
		out.Schedule = &wire.JobRecurrenceSchedule{
			Minutes:   c.ints(s.Minutes, "recurrence.schedule.minutes"),
			Hours:     c.ints(s.Hours, "recurrence.schedule.hours"),
			MonthDays: c.ints(s.MonthDays, "recurrence.schedule.monthDays"),
		}
		for _, d := range c.strs(s.WeekDays, "recurrence.schedule.weekDays") {
			out.Schedule.WeekDays = append(out.Schedule.WeekDays, canonical(d, weekDayNames))
		}
		for i, mo := range s.MonthlyOccurrences {
			at := fmt.Sprintf("recurrence.schedule.monthlyOccurrences[%d]", i)
			out.Schedule.MonthlyOccurrences = append(out.Schedule.MonthlyOccurrences, wire.JobRecurrenceScheduleMonthlyOccurrence{
				Day:        canonical(c.str(mo.Day, at+".day"), weekDayNames),
				Occurrence: c.intp(mo.Occurrence, at+".occurrence"),
			})
		}
	}
	return out
}

// zoneOf is the zone the daemon writes the job's times in (SPEC 4.2), from its answer.
func zoneOf(p *wire.JobProperties) *time.Location {
	rule, err := recurrence.Compile(p.StartTime, p.Recurrence, time.Now())
	if err != nil || rule == nil {
		return time.UTC
	}
	return rule.Location()
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
		m.State = keepString(prior.State, live, fresh, sameFold)
	default: // Completed, Faulted: the configured state is still what the user asked for
		m.State = prior.State
		if m.State.IsNull() || m.State.IsUnknown() {
			m.State = types.StringValue(jobdef.StateEnabled)
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
			Type:                   keepString(pa.Type, a.Type, fresh, sameFold),
			Request:                requestFromWire(a.Request, pa.Request, fresh),
			QueueMessage:           queueMessageFromWire(a.QueueMessage, pa.QueueMessage, fresh),
			ServiceBusQueueMessage: sbQueueFromWire(a.ServiceBusQueueMessage, pa.ServiceBusQueueMessage, fresh),
			ServiceBusTopicMessage: sbTopicFromWire(a.ServiceBusTopicMessage, pa.ServiceBusTopicMessage, fresh),
			RetryPolicy:            retryFromWire(a.RetryPolicy, pa.RetryPolicy, fresh),
		}
		// An error action or a recurrence added outside Terraform shows as drift.
		if e := a.ErrorAction; e != nil {
			pe := pa.ErrorAction
			f := fresh || pe == nil
			if pe == nil {
				pe = &errorActionModel{}
			}
			m.Action.ErrorAction = &errorActionModel{
				Type:                   keepString(pe.Type, e.Type, f, sameFold),
				Request:                requestFromWire(e.Request, pe.Request, f),
				QueueMessage:           queueMessageFromWire(e.QueueMessage, pe.QueueMessage, f),
				ServiceBusQueueMessage: sbQueueFromWire(e.ServiceBusQueueMessage, pe.ServiceBusQueueMessage, f),
				ServiceBusTopicMessage: sbTopicFromWire(e.ServiceBusTopicMessage, pe.ServiceBusTopicMessage, f),
				RetryPolicy:            retryFromWire(e.RetryPolicy, pe.RetryPolicy, f),
			}
		}
	}
	m.Recurrence = recurrenceFromWire(p.Recurrence, prior.Recurrence, fresh || prior.Recurrence == nil, instant)
	m.RecurrenceDescription = types.StringValue(describe(p.StartTime, p.Recurrence, time.Now()))
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
		Method:  keepString(prior.Method, r.Method, fresh, sameFold),
		Body:    keepString(prior.Body, r.Body, fresh, sameString),
		Headers: keepStringMap(context.Background(), prior.Headers, r.Headers, fresh),
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
			Username: keepString(pb.Username, a.Username, fresh || pa.Basic == nil, sameString),
			Password: secret(pb.Password, fresh),
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
			Password:                  secret(pc.Password, fresh),
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
			Tenant:   keepString(po.Tenant, a.Tenant, f, sameString),
			Audience: keepString(po.Audience, a.Audience, f, sameString),
			ClientID: keepString(po.ClientID, a.ClientID, f, sameString),
			Secret:   secret(po.Secret, fresh),
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
		RetryType:     keepString(prior.RetryType, r.RetryType, fresh, sameFold),
		RetryInterval: keepString(prior.RetryInterval, r.RetryInterval, fresh, sameDuration),
		RetryCount:    keepInt(prior.RetryCount, r.RetryCount, fresh),
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
		Frequency: keepString(prior.Frequency, r.Frequency, fresh, sameFold),
		Interval:  keepInt(prior.Interval, r.Interval, fresh),
		Count:     keepInt(prior.Count, r.Count, fresh),
		EndTime:   keepString(prior.EndTime, r.EndTime, fresh, instant),
		TimeZone:  keepString(prior.TimeZone, r.TimeZone, fresh, sameString),
	}
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
		out[i] = monthlyOccurrenceModel{Day: types.StringValue(a.Day), Occurrence: types.Int64Null()}
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
