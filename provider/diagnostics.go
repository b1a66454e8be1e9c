package provider

import (
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"

	"github.com/schedulerhq/terraform-provider-scheduler/internal/client"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/jobdef"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"
)

// This file holds every diagnostic the provider reports about its configuration and the API,
// each with a summary that says what to do.

// configError is an incomplete provider configuration, reported by whatever needs the daemon.
type configError struct {
	summary, detail string
}

func missingConfig(attr, env, what string) *configError {
	return &configError{
		summary: "Set " + env + " or the provider's " + attr,
		detail: fmt.Sprintf("The Scheduler provider has no %s (%s). Set the %s environment variable or the %q argument of the provider block.",
			attr, what, env, attr),
	}
}

func unknownConfig(attr, env string) *configError {
	return &configError{
		summary: "Set " + env + " or a known provider " + attr,
		detail: fmt.Sprintf("The provider's %q depends on a value known only after apply, so the provider cannot reach the daemon yet. "+
			"Use a value known at plan time, or unset it and set the %s environment variable.", attr, env),
	}
}

// clientFor returns the configured client, or reports why there is none.
func clientFor(data *providerData, diags *diag.Diagnostics) *client.Client {
	switch {
	case data == nil:
		diags.AddError("Configure the Scheduler provider",
			"The provider was not configured before it was used. This is a bug in the provider or in Terraform; please report it.")
		return nil
	case data.err != nil:
		diags.AddError(data.err.summary, data.err.detail)
		return nil
	}
	return data.client
}

// providerDataFrom extracts providerData from what Configure handed over.
func providerDataFrom(v any, diags *diag.Diagnostics) *providerData {
	if v == nil {
		return nil // Configure has not run yet (validation): callers must not need it then.
	}
	d, ok := v.(*providerData)
	if !ok {
		diags.AddError("Unexpected provider data",
			fmt.Sprintf("Expected *providerData, got %T. This is a bug in the provider; please report it.", v))
		return nil
	}
	return d
}

// apiError reports a failed API call: what was being done and what to do about it.
func apiError(diags *diag.Diagnostics, doing string, err error) {
	var e *client.Error
	if !errors.As(err, &e) {
		diags.AddError("Cannot reach the Scheduler daemon while "+doing,
			err.Error()+"\n\nCheck the provider's endpoint ("+EnvEndpoint+"), that the daemon runs, and its TLS settings.")
		return
	}
	switch e.StatusCode {
	case http.StatusUnauthorized, http.StatusForbidden:
		diags.AddError("Check the Scheduler token: the daemon refused it while "+doing,
			err.Error()+"\n\nSet a valid token in the provider block or "+EnvToken+"; a token scoped to one subscription cannot reach another.")
	case http.StatusBadRequest:
		if strings.Contains(e.Message, "HTTP request to an HTTPS server") { // Go's answer to http:// on a TLS port
			diags.AddError("Use https:// in the provider's endpoint ("+EnvEndpoint+"): the daemon serves HTTPS", err.Error())
			return
		}
		named := *e
		named.Message = hclNames(e.Message) // the attribute names of HCL; the API path stays as it is
		diags.AddError("The daemon rejected the configuration while "+doing, named.Error())
	case http.StatusConflict:
		diags.AddError("Resolve the conflict reported while "+doing,
			err.Error()+"\n\nA collection limit (quota, SKU) was reached or the job is in a final state (Completed, Faulted). "+
				"Raise the collection's quota or change the job.")
	case http.StatusNotFound:
		diags.AddError("Create the parent first: not found while "+doing,
			err.Error()+"\n\nCheck job_collection_id: the job collection must exist before its jobs.")
	default:
		diags.AddError("The Scheduler daemon failed while "+doing+"; try again",
			err.Error()+"\n\nTransient failures were already retried; see the daemon's log for this request id.")
	}
}

// addProblem reports one of the engine's problems at its attribute (the whole resource when the
// path is empty): the summary says what is wrong, naming the attribute; the detail repeats it
// with the attribute path first. Field names in the engine's message are written as in HCL
// (start_time, not startTime).
func addProblem(diags *diag.Diagnostics, p path.Path, msg string) {
	msg = hclNames(msg)
	if p.Equal(path.Empty()) {
		diags.AddError("Invalid job: "+msg, msg)
		return
	}
	diags.AddAttributeError(p, "Invalid "+p.String()+": "+msg, p.String()+": "+msg)
}

// camelRE matches a camelCase identifier (startTime, monthlyOccurrences, clientId).
var camelRE = regexp.MustCompile(`\b[a-z][a-z0-9]*(?:[A-Z][a-z0-9]*)+\b`)

// hclNames rewrites the JSON field names in a message of the engine or the daemon as attribute
// names (startTime → start_time, recurrence.schedule.monthDays[2] → month_days[2]), leaving
// what is quoted (the user's values) alone.
func hclNames(msg string) string {
	parts := strings.Split(msg, `"`)
	for i := 0; i < len(parts); i += 2 { // even parts are outside quotes
		parts[i] = camelRE.ReplaceAllStringFunc(parts[i], snake)
	}
	return strings.Join(parts, `"`)
}

var segmentRE = regexp.MustCompile(`^([^\[\]]*)((?:\[\d+\])*)$`)

// jobAttrPath maps a JSON path of the job's properties, as the engine reports it
// ("recurrence.schedule.monthDays[2]", "action.request.headers.X-Trace",
// "action.request.authentication.password"), to the attribute path of the scheduler_job schema
// (recurrence.schedule.month_days[2], action.request.headers["X-Trace"],
// action.request.authentication.basic.password). p is the job the problem is about: it tells
// which authentication block a field belongs to.
func jobAttrPath(jsonPath string, p *wire.JobProperties) path.Path {
	if jsonPath == "" {
		return path.Empty()
	}
	segs := strings.Split(jsonPath, ".")
	var out path.Path
	first := true
	step := func(name string) {
		if first {
			out = path.Root(name)
			first = false
			return
		}
		out = out.AtName(name)
	}
	for i := 0; i < len(segs); i++ {
		seg := segs[i]
		m := segmentRE.FindStringSubmatch(seg)
		if m == nil {
			step(snake(seg))
			continue
		}
		name := m[1]
		switch {
		case name == "headers" && !first:
			step("headers")
			if i+1 < len(segs) {
				return out.AtMapKey(strings.Join(segs[i+1:], "."))
			}
			return out
		case name == "authentication" && !first && i+1 < len(segs) && segs[i-1] == "request":
			step("authentication")
			field := segs[i+1]
			if field == "type" {
				return out
			}
			block := authBlock(authOf(p, strings.HasPrefix(jsonPath, "action.errorAction.")))
			if block == "" {
				return out
			}
			out = out.AtName(block).AtName(snake(field))
			return out
		}
		step(snake(name))
		for _, idx := range regexp.MustCompile(`\d+`).FindAllString(m[2], -1) {
			n, _ := strconv.Atoi(idx)
			out = out.AtListIndex(n)
		}
	}
	return out
}

// collectionAttrPath maps a JSON path of a collection's properties to the attribute path of
// scheduler_job_collection ("sku.name" is the sku attribute).
func collectionAttrPath(jsonPath string) path.Path {
	if jsonPath == "sku.name" {
		return path.Root("sku")
	}
	return jobAttrPath(jsonPath, nil)
}

func authOf(p *wire.JobProperties, errorAction bool) *wire.HTTPAuthentication {
	if p == nil || p.Action == nil {
		return nil
	}
	if errorAction {
		if e := p.Action.ErrorAction; e != nil && e.Request != nil {
			return e.Request.Authentication
		}
		return nil
	}
	if r := p.Action.Request; r != nil {
		return r.Authentication
	}
	return nil
}

// authBlock names the schema block of an authentication type.
func authBlock(a *wire.HTTPAuthentication) string {
	if a == nil {
		return ""
	}
	switch canonical(a.Type, []string{jobdef.AuthBasic, jobdef.AuthClientCertificate, jobdef.AuthActiveDirectoryOAuth}) {
	case jobdef.AuthBasic:
		return "basic"
	case jobdef.AuthClientCertificate:
		return "client_certificate"
	case jobdef.AuthActiveDirectoryOAuth:
		return "active_directory_oauth"
	}
	return ""
}

// snake turns a JSON property name into an attribute name: monthDays → month_days,
// clientId → client_id.
func snake(s string) string {
	var b strings.Builder
	for i, r := range s {
		if r >= 'A' && r <= 'Z' {
			if i > 0 {
				b.WriteByte('_')
			}
			b.WriteRune(r + ('a' - 'A'))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}
