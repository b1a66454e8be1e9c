package action

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// ownHeaders is how many headers every Http attempt carries whatever its job says: the scheduler's
// six and traceparent.
const ownHeaders = 7

// httpRunner makes Http and Https attempts: one request with the scheduler's six headers and the
// job's outbound authentication. A 2xx status is a success.
type httpRunner struct{ e *Executor }

func (h httpRunner) run(ctx context.Context, a *Attempt) Result {
	e := h.e
	r := a.Action.Request
	if r == nil {
		return Result{Message: "Http action without a request"}
	}
	method := strings.ToUpper(r.Method)
	if method == "" {
		method = http.MethodGet
	}
	var body io.Reader
	if r.Body != "" {
		body = strings.NewReader(r.Body)
	}
	req, err := http.NewRequestWithContext(ctx, method, r.URI, body)
	if err != nil {
		return Result{Message: "Http action: invalid request: " + err.Error()}
	}
	for k, v := range r.Headers {
		req.Header.Set(k, v)
	}
	// The values of the seven headers set on every attempt in one array (each key's slice capped
	// at its one value, so that adding to it copies): one allocation instead of one per header.
	own := make([]string, ownHeaders)
	set := func(i int, key, value string) {
		own[i] = value
		req.Header[key] = own[i : i+1 : i+1]
	}
	// Canonical keys written directly.
	set(0, "X-Ms-Execution-Tag", a.ExecutionTag)
	set(1, "X-Ms-Client-Request-Id", a.ClientRequestID)
	set(2, "X-Ms-Scheduler-Expected-Execution-Time", a.ExpectedExecution.UTC().Format(time.RFC3339))
	set(3, "X-Ms-Scheduler-Jobid", a.JobID)
	set(4, "X-Ms-Scheduler-Jobcollectionid", a.JobCollectionID)
	set(5, "X-Ms-Scheduler-Execution-Region", a.Region)
	for k, v := range a.Failure.fields() {
		req.Header.Set(k, v)
	}
	set(6, "Traceparent", a.traceIDs().Traceparent())
	delete(req.Header, "Tracestate") // a job's own tracestate would belong to another trace

	client := e.client
	if auth := r.Authentication; auth != nil {
		switch strings.ToLower(auth.Type) {
		case "basic":
			req.SetBasicAuth(auth.Username, auth.Password)
		case "clientcertificate":
			c, err := e.certClient(auth.Pfx, auth.Password)
			if err != nil {
				return Result{Message: "Http action: client certificate: " + err.Error()}
			}
			client = c
		case "activedirectoryoauth":
			tok, err := e.tokens.get(ctx, e.tokenClient, e.authority, auth)
			if err != nil {
				return Result{Message: "Http action: ActiveDirectoryOAuth token: " + newScrubber(nil, secretValues(a.Action)).scrub(err.Error())}
			}
			req.Header.Set("Authorization", "Bearer "+tok)
		case "", "notspecified", "httpauthentication":
		default:
			return Result{Message: fmt.Sprintf("Http action: unknown authentication type %q", auth.Type)}
		}
	}
	if sg := r.Signing; sg != nil && sg.Secret != "" {
		if err := sign(req.Header, a.ExecutionTag, e.clock.Now(), []byte(r.Body), sg.Secret, sg.PreviousSecret); err != nil {
			return Result{Message: "Http action: signing: " + err.Error()}
		}
	}
	return send(ctx, client, req, "Http action", a.timeout, func(s int) bool { return s >= 200 && s < 300 }, secretValues(a.Action))
}

// secretValues returns the opened secrets of an action, for scrubbing its response.
func secretValues(a interface{ SecretFields() []*string }) []string {
	var out []string
	for _, f := range a.SecretFields() {
		if *f != "" {
			out = append(out, *f)
		}
	}
	return out
}
