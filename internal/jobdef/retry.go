package jobdef

import (
	"github.com/schedulerhq/terraform-provider-scheduler/internal/retry"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"
)

// validateRetry checks a retry policy with the dispatcher's own parser (internal/retry).
func validateRetry(ps *problems, path string, r *wire.RetryPolicy) {
	if _, rps := retry.Parse(path, r); len(rps) > 0 {
		ps.list = append(ps.list, rps...)
	}
}
