package jobdef

import (
	"slices"
	"strings"

	"github.com/schedulerhq/terraform-provider-scheduler/internal/jobstate"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"
)

// The enum values of the Azure Scheduler API, in Azure's spelling.
var (
	actionTypes      = []string{ActionHTTP, ActionHTTPS, ActionStorageQueue, ActionServiceBusQueue, ActionServiceBusTopic}
	authTypes        = []string{AuthBasic, AuthClientCertificate, AuthActiveDirectoryOAuth, AuthNotSpecified, AuthHTTPAuthentication}
	frequencies      = []string{"Minute", "Hour", "Day", "Week", "Month"}
	weekDays         = []string{"Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"}
	jobStates        = []string{StateEnabled, StateDisabled, StateCompleted, StateFaulted}
	retryTypes       = []string{"None", "Fixed", "Exponential"}
	transportTypes   = []string{"NotSpecified", "NetMessaging", "AMQP"}
	sbAuthTypes      = []string{"NotSpecified", "SharedAccessKey"}
	collectionStates = []string{StateEnabled, StateDisabled, StateSuspended, StateDeleted}
	skuNames         = []string{SkuFree, SkuStandard, SkuP10Premium, SkuP20Premium}
	httpMethods      = []string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"}
	historyStatuses  = []string{"Completed", "Failed", "Postponed", jobstate.Skipped}
)

// Action types.
const (
	ActionHTTP            = "Http"
	ActionHTTPS           = "Https"
	ActionStorageQueue    = "StorageQueue"
	ActionServiceBusQueue = "ServiceBusQueue"
	ActionServiceBusTopic = "ServiceBusTopic"
)

// Outbound authentication types. NotSpecified and HttpAuthentication (what Microsoft's SDK sends
// for its base type) mean no authentication.
const (
	AuthBasic                = "Basic"
	AuthClientCertificate    = "ClientCertificate"
	AuthActiveDirectoryOAuth = "ActiveDirectoryOAuth"
	AuthNotSpecified         = "NotSpecified"
	AuthHTTPAuthentication   = "HttpAuthentication"
)

// Job and collection states.
const (
	StateEnabled   = jobstate.Enabled
	StateDisabled  = jobstate.Disabled
	StateCompleted = jobstate.Completed
	StateFaulted   = jobstate.Faulted
	StateSuspended = "Suspended"
	StateDeleted   = "Deleted"
)

// SKU names.
const (
	SkuFree       = "Free"
	SkuStandard   = "Standard"
	SkuP10Premium = "P10Premium"
	SkuP20Premium = "P20Premium"
)

// Canonical returns the member of allowed that equals v case-insensitively (ignoring surrounding
// spaces); ok is false when there is none.
func Canonical(v string, allowed []string) (string, bool) {
	v = strings.TrimSpace(v)
	for _, a := range allowed {
		if strings.EqualFold(v, a) {
			return a, true
		}
	}
	return v, false
}

// CanonicalJobState returns a job state in Azure's spelling.
func CanonicalJobState(v string) (string, bool) { return Canonical(v, jobStates) }

// CanonicalHistoryStatus returns a history status (Completed, Failed, Postponed) in Azure's spelling.
func CanonicalHistoryStatus(v string) (string, bool) { return Canonical(v, historyStatuses) }

// CanonicalFrequency returns a recurrence frequency in Azure's spelling.
func CanonicalFrequency(v string) (string, bool) { return Canonical(v, frequencies) }

// canon rewrites *s to its Azure spelling when it is a known value, and leaves it alone otherwise
// (Validate reports it).
func canon(s *string, allowed []string) {
	if *s == "" {
		return
	}
	if c, ok := Canonical(*s, allowed); ok {
		*s = c
	}
}

// Normalize rewrites every enum of a job's properties in Azure's spelling (Http, Week, Monday,
// Fixed, ...) and HTTP methods in upper case. Unknown values are left for Validate to report.
func Normalize(p *wire.JobProperties) {
	if p == nil {
		return
	}
	canon(&p.State, jobStates)
	canon(&p.Overlap, jobstate.OverlapPolicies)
	if p.Misfire != nil {
		canon(&p.Misfire.Policy, jobstate.MisfirePolicies)
	}
	if a := p.Action; a != nil {
		canon(&a.Type, actionTypes)
		normalizeRequest(a.Request)
		normalizeRetry(a.RetryPolicy)
		normalizeServiceBus(a.ServiceBusQueueMessage, a.ServiceBusTopicMessage)
		if e := a.ErrorAction; e != nil {
			canon(&e.Type, actionTypes)
			normalizeRequest(e.Request)
			normalizeRetry(e.RetryPolicy)
			normalizeServiceBus(e.ServiceBusQueueMessage, e.ServiceBusTopicMessage)
		}
	}
	if r := p.Recurrence; r != nil {
		canon(&r.Frequency, frequencies)
		if s := r.Schedule; s != nil {
			for i := range s.WeekDays {
				canon(&s.WeekDays[i], weekDays)
			}
			for i := range s.MonthlyOccurrences {
				canon(&s.MonthlyOccurrences[i].Day, weekDays)
			}
		}
	}
}

func normalizeRequest(r *wire.HTTPRequest) {
	if r == nil {
		return
	}
	if m, ok := Canonical(r.Method, httpMethods); ok {
		r.Method = m
	}
	if a := r.Authentication; a != nil {
		canon(&a.Type, authTypes)
	}
}

func normalizeRetry(r *wire.RetryPolicy) {
	if r != nil {
		canon(&r.RetryType, retryTypes)
	}
}

func normalizeServiceBus(q *wire.ServiceBusQueueMessage, t *wire.ServiceBusTopicMessage) {
	for _, m := range []*wire.ServiceBusMessage{sbMessage(q, t, true), sbMessage(q, t, false)} {
		if m == nil {
			continue
		}
		canon(&m.TransportType, transportTypes)
		if m.Authentication != nil {
			canon(&m.Authentication.Type, sbAuthTypes)
		}
	}
}

func sbMessage(q *wire.ServiceBusQueueMessage, t *wire.ServiceBusTopicMessage, queue bool) *wire.ServiceBusMessage {
	if queue && q != nil {
		return &q.ServiceBusMessage
	}
	if !queue && t != nil {
		return &t.ServiceBusMessage
	}
	return nil
}

// NormalizeCollection rewrites a collection's enums (sku, state, maxRecurrence.frequency) in
// Azure's spelling.
func NormalizeCollection(p *wire.JobCollectionProperties) {
	if p == nil {
		return
	}
	canon(&p.State, collectionStates)
	if p.Sku != nil {
		canon(&p.Sku.Name, skuNames)
	}
	if p.Quota != nil && p.Quota.MaxRecurrence != nil {
		canon(&p.Quota.MaxRecurrence.Frequency, frequencies)
	}
}

// The enum lists, for the provider's schema validators and documentation: each a fresh copy.

// ActionTypes returns the action types: Http, Https, StorageQueue, ServiceBusQueue, ServiceBusTopic.
func ActionTypes() []string { return slices.Clone(actionTypes) }

// Frequencies returns the recurrence frequencies: Minute, Hour, Day, Week, Month.
func Frequencies() []string { return slices.Clone(frequencies) }

// WeekDays returns the day names, Monday first.
func WeekDays() []string { return slices.Clone(weekDays) }

// HTTPMethods returns the methods an Http(s) action may use.
func HTTPMethods() []string { return slices.Clone(httpMethods) }

// RetryTypes returns the retry policy types: None, Fixed, Exponential (extension).
func RetryTypes() []string { return slices.Clone(retryTypes) }

// TransportTypes returns the Service Bus transport types: NotSpecified, NetMessaging, AMQP.
func TransportTypes() []string { return slices.Clone(transportTypes) }

// ServiceBusAuthTypes returns the Service Bus authentication types: NotSpecified, SharedAccessKey.
func ServiceBusAuthTypes() []string { return slices.Clone(sbAuthTypes) }

// HistoryStatuses returns the history statuses: Completed, Failed, Postponed.
func HistoryStatuses() []string { return slices.Clone(historyStatuses) }
