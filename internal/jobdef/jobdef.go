// Package jobdef validates a whole job definition (action, limits, authentication, retry policy,
// error action, recurrence) the same way in the daemon's API and in the provider at plan time, so
// that a bad job is rejected before anything reaches the daemon. It does no I/O.
package jobdef

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/schedulerhq/terraform-provider-scheduler/internal/jobstate"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/recurrence"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"
	"golang.org/x/net/http/httpguts"
)

// The limits of SPEC 2 (a 400 when exceeded).
const (
	MaxDefinitionBytes = 16 * 1024 // the job's properties, as JSON
	MaxURIChars        = 2048
	MaxHeaders         = 50
	MaxHeaderChars     = 4096 // names and values together
	MaxBodyChars       = 8192
)

// problems collects Problems with paths.
type problems struct {
	list wire.Problems
}

func (ps *problems) add(path, format string, args ...any) {
	ps.list = append(ps.list, wire.Problem{Path: path, Message: fmt.Sprintf(format, args...)})
}

// enum checks that v is one of allowed (case-insensitively); empty is reported as required.
func (ps *problems) enum(path, v string, allowed []string) {
	if v == "" {
		ps.add(path, "is required (one of %s)", strings.Join(allowed, ", "))
		return
	}
	if _, ok := Canonical(v, allowed); !ok {
		ps.add(path, "%q is not one of %s", v, strings.Join(allowed, ", "))
	}
}

// enumOptional is enum for a field that may be absent.
func (ps *problems) enumOptional(path, v string, allowed []string) {
	if v != "" {
		ps.enum(path, v, allowed)
	}
}

// Validate checks a whole job (SPEC 2 and 4.1) and compiles its recurrence rule. created is the
// job's creation time, the anchor when there is no startTime (at plan time: now). Every problem is
// reported with its path relative to the job's properties; the rule is nil when there is any.
// Read-only fields (status, certificate details) are ignored. The states a client may write are
// Enabled and Disabled (Completed and Faulted are set by the scheduler).
func Validate(p *wire.JobProperties, created time.Time) (*recurrence.Rule, wire.Problems) {
	var ps problems
	if p == nil {
		ps.add("", "the job's properties are required")
		return nil, ps.list
	}
	if p.State != "" {
		if s, ok := CanonicalJobState(p.State); !ok {
			ps.add("state", "%q is not one of Enabled, Disabled", p.State)
		} else if jobstate.Final(s) {
			ps.add("state", "%s is set by the scheduler; a job can be written Enabled or Disabled", s)
		}
	}
	if p.Action == nil {
		ps.add("action", "is required")
	} else {
		a := p.Action
		validateAction(&ps, "action", a.Type, a.Request, a.QueueMessage, a.ServiceBusQueueMessage, a.ServiceBusTopicMessage)
		validateRetry(&ps, "action.retryPolicy", a.RetryPolicy)
		validateTimeout(&ps, "action.timeout", a.Timeout)
		if e := a.ErrorAction; e != nil {
			validateAction(&ps, "action.errorAction", e.Type, e.Request, e.QueueMessage, e.ServiceBusQueueMessage, e.ServiceBusTopicMessage)
			validateRetry(&ps, "action.errorAction.retryPolicy", e.RetryPolicy)
			validateTimeout(&ps, "action.errorAction.timeout", e.Timeout)
		}
	}
	validateWhen(&ps, p)
	if size := definitionSize(p); size > MaxDefinitionBytes {
		ps.add("", "the job definition is %d bytes of JSON; at most %d (16 KiB) are allowed", size, MaxDefinitionBytes)
	}
	rule, err := recurrence.Compile(p.StartTime, p.Recurrence, created)
	if err != nil {
		var rps wire.Problems
		if errors.As(err, &rps) {
			ps.list = append(ps.list, rps...)
		} else {
			ps.add("recurrence", "%v", err)
		}
	}
	if len(ps.list) > 0 {
		return nil, ps.list
	}
	return rule, nil
}

// definitionSize is the size of the job's definition as JSON, without its read-only status.
func definitionSize(p *wire.JobProperties) int {
	c := *p
	c.Status = nil
	b, err := json.Marshal(&c)
	if err != nil {
		return 0
	}
	return len(b)
}

func validateAction(ps *problems, path, typ string, req *wire.HTTPRequest, q *wire.StorageQueueMessage,
	sbq *wire.ServiceBusQueueMessage, sbt *wire.ServiceBusTopicMessage,
) {
	ps.enum(path+".type", typ, actionTypes)
	t, _ := Canonical(typ, actionTypes)
	present := map[string]bool{
		"request":                req != nil,
		"queueMessage":           q != nil,
		"serviceBusQueueMessage": sbq != nil,
		"serviceBusTopicMessage": sbt != nil,
	}
	want := map[string]string{
		ActionHTTP:            "request",
		ActionHTTPS:           "request",
		ActionStorageQueue:    "queueMessage",
		ActionServiceBusQueue: "serviceBusQueueMessage",
		ActionServiceBusTopic: "serviceBusTopicMessage",
	}[t]
	if want == "" {
		return
	}
	if !present[want] {
		ps.add(path+"."+want, "is required for a %s action", t)
	}
	others := make([]string, 0, len(present))
	for k, ok := range present {
		if ok && k != want {
			others = append(others, k)
		}
	}
	sort.Strings(others)
	for _, k := range others {
		ps.add(path+"."+k, "is not allowed with a %s action (it takes %s)", t, want)
	}
	if want != "request" && req != nil && req.Signing != nil {
		ps.add(path+".request.signing", "is allowed only on Http and Https actions (a %s action sends no HTTP request)", t)
	}
	switch {
	case (t == ActionHTTP || t == ActionHTTPS) && req != nil:
		validateRequest(ps, path+".request", t, req)
	case t == ActionStorageQueue && q != nil:
		validateQueueMessage(ps, path+".queueMessage", q)
	case t == ActionServiceBusQueue && sbq != nil:
		validateServiceBus(ps, path+".serviceBusQueueMessage", &sbq.ServiceBusMessage, "queueName", sbq.QueueName)
	case t == ActionServiceBusTopic && sbt != nil:
		validateServiceBus(ps, path+".serviceBusTopicMessage", &sbt.ServiceBusMessage, "topicPath", sbt.TopicPath)
	}
}

func validateRequest(ps *problems, path, typ string, r *wire.HTTPRequest) {
	switch {
	case r.URI == "":
		ps.add(path+".uri", "is required")
	case utf8.RuneCountInString(r.URI) > MaxURIChars:
		ps.add(path+".uri", "is %d characters long; at most %d are allowed", utf8.RuneCountInString(r.URI), MaxURIChars)
	default:
		u, err := url.Parse(r.URI)
		switch {
		case err != nil:
			ps.add(path+".uri", "%q is not a valid URI", r.URI)
		case !u.IsAbs() || u.Host == "":
			ps.add(path+".uri", "%q is not an absolute http or https URI", r.URI)
		case !strings.EqualFold(u.Scheme, typ):
			ps.add(path+".uri", "the scheme %q does not match the action type %s (it must be %s)", u.Scheme, typ, strings.ToLower(typ))
		}
	}
	ps.enum(path+".method", r.Method, httpMethods)
	if n := utf8.RuneCountInString(r.Body); n > MaxBodyChars {
		ps.add(path+".body", "is %d characters long; at most %d are allowed", n, MaxBodyChars)
	}
	if len(r.Headers) > MaxHeaders {
		ps.add(path+".headers", "has %d headers; at most %d are allowed", len(r.Headers), MaxHeaders)
	}
	chars := 0
	names := make([]string, 0, len(r.Headers))
	for k, v := range r.Headers {
		names = append(names, k)
		chars += utf8.RuneCountInString(k) + utf8.RuneCountInString(v)
	}
	sort.Strings(names)
	for _, k := range names {
		if !httpguts.ValidHeaderFieldName(k) { // an RFC 9110 token: net/http's rule, and the attempts'
			ps.add(path+".headers", "%q is not a valid header name", k)
		} else if strings.ContainsAny(r.Headers[k], "\r\n\x00") {
			ps.add(path+".headers."+k, "must not contain line breaks or NUL")
		}
	}
	if chars > MaxHeaderChars {
		ps.add(path+".headers", "have %d characters (names and values); at most %d are allowed", chars, MaxHeaderChars)
	}
	if r.Authentication != nil {
		validateAuth(ps, path+".authentication", r.Authentication)
	}
	if r.Signing != nil {
		validateSigning(ps, path+".signing", r.Signing)
	}
}

// HasAuthentication reports whether a request authenticates outbound (Basic, ClientCertificate or
// ActiveDirectoryOAuth).
func HasAuthentication(r *wire.HTTPRequest) bool {
	if r == nil || r.Authentication == nil {
		return false
	}
	t, _ := Canonical(r.Authentication.Type, authTypes)
	return t == AuthBasic || t == AuthClientCertificate || t == AuthActiveDirectoryOAuth
}

func validateAuth(ps *problems, path string, a *wire.HTTPAuthentication) {
	ps.enum(path+".type", a.Type, authTypes)
	t, _ := Canonical(a.Type, authTypes)
	required := func(field, v string) {
		if v == "" {
			ps.add(path+"."+field, "is required for %s authentication", t)
		}
	}
	switch t {
	case AuthBasic:
		required("username", a.Username)
		required("password", a.Password)
	case AuthClientCertificate:
		required("pfx", a.Pfx)
		if a.Pfx != "" {
			if _, err := ParseCertificate(a.Pfx, a.Password); err != nil {
				ps.add(path+".pfx", "%v", err)
			}
		}
	case AuthActiveDirectoryOAuth:
		required("tenant", a.Tenant)
		required("audience", a.Audience)
		required("clientId", a.ClientID)
		required("secret", a.Secret)
	}
}

// DecodePfx decodes a base64 PKCS#12 value (standard or URL alphabet, padded or not).
func DecodePfx(pfx string) ([]byte, error) {
	pfx = strings.TrimSpace(pfx)
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(pfx); err == nil {
			return b, nil
		}
	}
	return nil, errors.New("is not base64")
}
