package provider

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/hashicorp/terraform-plugin-framework/diag"

	"github.com/schedulerhq/terraform-provider-scheduler/internal/client"
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
		diags.AddError("The daemon rejected the configuration while "+doing, hclNames(err.Error()))
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
