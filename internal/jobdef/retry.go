package jobdef

import (
	"github.com/schedulerhq/terraform-provider-scheduler/internal/jobstate"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/retry"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"
)

// validateRetry checks a retry policy with the dispatcher's own parser (internal/retry).
func validateRetry(ps *problems, path string, r *wire.RetryPolicy) {
	if _, rps := retry.Parse(path, r); len(rps) > 0 {
		ps.list = append(ps.list, rps...)
	}
}

// validateTimeout checks an action's timeout (extension) with the rulebook's parser.
func validateTimeout(ps *problems, path, s string) {
	if _, tps := jobstate.ParseTimeout(path, s); len(tps) > 0 {
		ps.list = append(ps.list, tps...)
	}
}
