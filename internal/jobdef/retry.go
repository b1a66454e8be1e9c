package jobdef

import "github.com/schedulerhq/terraform-provider-scheduler/internal/wire"

// validateRetry checks a retry policy (TEMPORARY until internal/retry lands).
func validateRetry(ps *problems, path string, r *wire.RetryPolicy) {
	if r == nil {
		return
	}
	ps.enum(path+".retryType", r.RetryType, false, retryTypes)
	if r.RetryCount != nil && (*r.RetryCount < 0 || *r.RetryCount > 20) {
		ps.add(path+".retryCount", "%d is outside 0..20", *r.RetryCount)
	}
}
