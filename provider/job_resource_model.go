package provider

import (
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/schedulerhq/terraform-provider-scheduler/internal/jobdef"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"
)

type jobModel struct {
	ID              types.String     `tfsdk:"id"`
	JobCollectionID types.String     `tfsdk:"job_collection_id"`
	Name            types.String     `tfsdk:"name"`
	StartTime       types.String     `tfsdk:"start_time"`
	State           enumValue        `tfsdk:"state"`
	Action          *actionModel     `tfsdk:"action"`
	Recurrence      *recurrenceModel `tfsdk:"recurrence"`
	Status          types.Object     `tfsdk:"status"`
	// RecurrenceDescription is the rule in words (recurrence.Describe), computed.
	RecurrenceDescription types.String `tfsdk:"recurrence_description"`

	// When it runs (SPEC 8, job_resource_when.go).
	Overlap  types.String  `tfsdk:"overlap"`
	Misfire  *misfireModel `tfsdk:"misfire"`
	ResumeAt types.String  `tfsdk:"resume_at"`
	Note     types.String  `tfsdk:"note"`
}

type actionModel struct {
	Type                   enumValue          `tfsdk:"type"`
	Request                *requestModel      `tfsdk:"request"`
	QueueMessage           *queueMessageModel `tfsdk:"queue_message"`
	ServiceBusQueueMessage *sbQueueModel      `tfsdk:"service_bus_queue_message"`
	ServiceBusTopicMessage *sbTopicModel      `tfsdk:"service_bus_topic_message"`
	RetryPolicy            *retryPolicyModel  `tfsdk:"retry_policy"`
	ErrorAction            *errorActionModel  `tfsdk:"error_action"`
	Timeout                durationValue      `tfsdk:"timeout"` // job_resource_calls.go
}

type errorActionModel struct {
	Type                   enumValue          `tfsdk:"type"`
	Request                *requestModel      `tfsdk:"request"`
	QueueMessage           *queueMessageModel `tfsdk:"queue_message"`
	ServiceBusQueueMessage *sbQueueModel      `tfsdk:"service_bus_queue_message"`
	ServiceBusTopicMessage *sbTopicModel      `tfsdk:"service_bus_topic_message"`
	RetryPolicy            *retryPolicyModel  `tfsdk:"retry_policy"`
	Timeout                durationValue      `tfsdk:"timeout"`
}

type requestModel struct {
	URI            types.String         `tfsdk:"uri"`
	Method         enumValue            `tfsdk:"method"`
	Body           types.String         `tfsdk:"body"`
	Headers        types.Map            `tfsdk:"headers"`
	Authentication *authenticationModel `tfsdk:"authentication"`
	Signing        *signingModel        `tfsdk:"signing"` // job_resource_calls.go
}

type authenticationModel struct {
	Basic                *basicAuthModel  `tfsdk:"basic"`
	ClientCertificate    *clientCertModel `tfsdk:"client_certificate"`
	ActiveDirectoryOAuth *oauthModel      `tfsdk:"active_directory_oauth"`
}

type basicAuthModel struct {
	Username          types.String `tfsdk:"username"`
	Password          types.String `tfsdk:"password"`
	PasswordWO        types.String `tfsdk:"password_wo"`
	PasswordWOVersion types.Int64  `tfsdk:"password_wo_version"`
}

type clientCertModel struct {
	Pfx                       types.String `tfsdk:"pfx"`
	PfxWO                     types.String `tfsdk:"pfx_wo"`
	PfxWOVersion              types.Int64  `tfsdk:"pfx_wo_version"`
	Password                  types.String `tfsdk:"password"`
	PasswordWO                types.String `tfsdk:"password_wo"`
	PasswordWOVersion         types.Int64  `tfsdk:"password_wo_version"`
	CertificateThumbprint     types.String `tfsdk:"certificate_thumbprint"`
	CertificateExpirationDate types.String `tfsdk:"certificate_expiration_date"`
	CertificateSubjectName    types.String `tfsdk:"certificate_subject_name"`
}

type oauthModel struct {
	Tenant   types.String `tfsdk:"tenant"`
	Audience types.String `tfsdk:"audience"`
	ClientID types.String `tfsdk:"client_id"`
	Secret   types.String `tfsdk:"secret"`
	// SecretWO and SecretWOVersion: see secret.go.
	SecretWO        types.String `tfsdk:"secret_wo"`
	SecretWOVersion types.Int64  `tfsdk:"secret_wo_version"`
}

type retryPolicyModel struct {
	RetryType     enumValue     `tfsdk:"retry_type"`
	RetryInterval durationValue `tfsdk:"retry_interval"`
	RetryCount    types.Int64   `tfsdk:"retry_count"`
	// MaxRetryInterval caps an Exponential policy's delays (job_resource_calls.go).
	MaxRetryInterval durationValue `tfsdk:"max_retry_interval"`
}

type recurrenceModel struct {
	Frequency enumValue      `tfsdk:"frequency"`
	Interval  types.Int64    `tfsdk:"interval"`
	Count     types.Int64    `tfsdk:"count"`
	EndTime   types.String   `tfsdk:"end_time"`
	TimeZone  types.String   `tfsdk:"time_zone"`
	Schedule  *scheduleModel `tfsdk:"schedule"`

	// When it runs (SPEC 8, job_resource_when.go).
	Jitter       types.String `tfsdk:"jitter"`
	ExcludeDates types.List   `tfsdk:"exclude_dates"`
}

type scheduleModel struct {
	Minutes            types.List               `tfsdk:"minutes"`
	Hours              types.List               `tfsdk:"hours"`
	WeekDays           types.List               `tfsdk:"week_days"`
	MonthDays          types.List               `tfsdk:"month_days"`
	MonthlyOccurrences []monthlyOccurrenceModel `tfsdk:"monthly_occurrences"`
}

type monthlyOccurrenceModel struct {
	Day        enumValue   `tfsdk:"day"`
	Occurrence types.Int64 `tfsdk:"occurrence"`
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
	case path == "overlap" || path == "resumeAt" || path == "note" || strings.HasPrefix(path, "misfire"):
		return "when" // the job's own policies: they steer no other part
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
// conv converts the model to the API's types, noting the unknown values and which form of each
// secret is set (JSON paths).
type conv struct {
	unknown   *unknowns
	sensitive *[]string
	writeOnly *[]string
	unset     *[]string
}

func (c conv) mark(v interface{ IsUnknown() bool }, path string) bool {
	if v.IsUnknown() {
		*c.unknown = append(*c.unknown, path)
		return true
	}
	return false
}

func (c conv) str(v stringish, path string) string {
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
	p, u, _ := m.toWireNoting()
	return p, u
}

// secretForms lists the JSON paths of the secrets set in their sensitive form, in their
// write-only form, and in neither.
type secretForms struct{ sensitive, writeOnly, unset []string }

// toWireNoting is toWire, also telling which form of each secret is set.
func (m *jobModel) toWireNoting() (*wire.JobProperties, unknowns, secretForms) {
	var u unknowns
	var s secretForms
	c := conv{&u, &s.sensitive, &s.writeOnly, &s.unset}
	p := &wire.JobProperties{
		StartTime:  c.str(m.StartTime, "startTime"),
		State:      canonical(str(m.State), jobWritableStates),
		Recurrence: m.Recurrence.toWire(c),
	}
	m.whenToWire(c, p)
	if a := m.Action; a != nil {
		p.Action = &wire.JobAction{
			Type:                   canonical(c.str(a.Type, "action.type"), actionTypes),
			Request:                a.Request.toWire(c, "action.request"),
			QueueMessage:           a.QueueMessage.toWire(c, "action.queueMessage"),
			ServiceBusQueueMessage: a.ServiceBusQueueMessage.toWire(c, "action.serviceBusQueueMessage"),
			ServiceBusTopicMessage: a.ServiceBusTopicMessage.toWire(c, "action.serviceBusTopicMessage"),
			RetryPolicy:            a.RetryPolicy.toWire(c, "action.retryPolicy"),
			Timeout:                c.str(a.Timeout, "action.timeout"),
		}
		if e := a.ErrorAction; e != nil {
			p.Action.ErrorAction = &wire.JobErrorAction{
				Type:                   canonical(c.str(e.Type, "action.errorAction.type"), actionTypes),
				Request:                e.Request.toWire(c, "action.errorAction.request"),
				QueueMessage:           e.QueueMessage.toWire(c, "action.errorAction.queueMessage"),
				ServiceBusQueueMessage: e.ServiceBusQueueMessage.toWire(c, "action.errorAction.serviceBusQueueMessage"),
				ServiceBusTopicMessage: e.ServiceBusTopicMessage.toWire(c, "action.errorAction.serviceBusTopicMessage"),
				RetryPolicy:            e.RetryPolicy.toWire(c, "action.errorAction.retryPolicy"),
				Timeout:                c.str(e.Timeout, "action.errorAction.timeout"),
			}
		}
	}
	return p, u, s
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
		Signing: r.Signing.toWire(c, at+".signing"),
	}
	if a := r.Authentication; a != nil {
		at += ".authentication"
		switch {
		case a.Basic != nil:
			out.Authentication = &wire.HTTPAuthentication{Type: jobdef.AuthBasic,
				Username: c.str(a.Basic.Username, at+".username"), Password: c.secret(a.Basic.Password, a.Basic.PasswordWO, at+".password")}
		case a.ClientCertificate != nil:
			out.Authentication = &wire.HTTPAuthentication{Type: jobdef.AuthClientCertificate,
				Pfx:      c.secret(a.ClientCertificate.Pfx, a.ClientCertificate.PfxWO, at+".pfx"),
				Password: c.secret(a.ClientCertificate.Password, a.ClientCertificate.PasswordWO, at+".password")}
		case a.ActiveDirectoryOAuth != nil:
			o := a.ActiveDirectoryOAuth
			out.Authentication = &wire.HTTPAuthentication{Type: jobdef.AuthActiveDirectoryOAuth,
				Tenant: c.str(o.Tenant, at+".tenant"), Audience: c.str(o.Audience, at+".audience"),
				ClientID: c.str(o.ClientID, at+".clientId"), Secret: c.secret(o.Secret, o.SecretWO, at+".secret")}
		}
	}
	return out
}

func (r *retryPolicyModel) toWire(c conv, at string) *wire.RetryPolicy {
	if r == nil {
		return nil
	}
	return &wire.RetryPolicy{
		RetryType:        canonical(c.str(r.RetryType, at+".retryType"), retryTypes),
		RetryInterval:    c.str(r.RetryInterval, at+".retryInterval"),
		RetryCount:       c.intp(r.RetryCount, at+".retryCount"),
		MaxRetryInterval: c.str(r.MaxRetryInterval, at+".maxRetryInterval"),
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
	r.whenToWire(c, out)
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
