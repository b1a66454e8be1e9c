package jobstate

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"math"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/internal/retry"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"
)

// BackoffJitter is the largest share of an Exponential delay that jitter adds or removes.
const BackoffJitter = 0.2

// Backoff is how long after a failed attempt its retry waits, retries being the attempts already
// retried in the phase (0 before the first retry). Fixed: the policy's interval. Exponential:
// the interval doubled retries times, capped at MaxInterval, then moved by up to ±20 % by a
// jitter that depends only on the execution tag and the retry number (so every replica computes
// the same schedule), to the millisecond and never above MaxInterval. None: zero.
func Backoff(p retry.Policy, tag string, retries int) time.Duration {
	switch p.Type {
	case retry.Fixed:
		return p.Interval
	case retry.Exponential:
	default:
		return 0
	}
	base := float64(p.Interval) * math.Pow(2, float64(max(retries, 0)))
	base = min(base, float64(p.MaxInterval))
	d := time.Duration(base * (1 + jitter(tag, retries))).Round(time.Millisecond)
	return min(d, p.MaxInterval)
}

// jitter is a number in [-BackoffJitter, +BackoffJitter) drawn from the tag and the retry number.
func jitter(tag string, retries int) float64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(tag))
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], uint64(retries))
	_, _ = h.Write(n[:])
	x := h.Sum64() // FNV spreads the last bytes poorly: mix the bits (SplitMix64's finalizer)
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	x ^= x >> 31
	u := float64(x>>11) / (1 << 53) // [0, 1)
	return (2*u - 1) * BackoffJitter
}

// Timeout limits of SPEC 8: how long one attempt may take.
const (
	DefaultTimeout = 60 * time.Second
	MinTimeout     = time.Second
	MaxTimeout     = 30 * time.Minute
)

// ParseTimeout validates an action's timeout ("" is the default, PT60S): an ISO 8601 duration
// from PT1S to PT30M. path names the field in the problem.
func ParseTimeout(path, s string) (time.Duration, wire.Problems) {
	if s == "" {
		return DefaultTimeout, nil
	}
	if s[0] != 'P' && s[0] != 'p' {
		return 0, wire.Problems{{Path: path, Message: fmt.Sprintf("%q is not an ISO 8601 duration (such as PT30S, PT5M)", s)}}
	}
	d, err := retry.ParseInterval(s)
	switch {
	case err != nil:
		return 0, wire.Problems{{Path: path, Message: fmt.Sprintf("%q is not an ISO 8601 duration (such as PT30S, PT5M)", s)}}
	case d < MinTimeout || d > MaxTimeout:
		return 0, wire.Problems{{Path: path, Message: fmt.Sprintf("%q is %v, outside PT1S..PT30M", s, d)}}
	}
	return d, nil
}

// Timeout is how long one attempt of an action (the main action's body or the error action) may
// take: its timeout, or fallback when it has none (the daemon's default, DefaultTimeout unless
// configured); an invalid one (never stored: the API validates) reads as fallback too.
func Timeout(a *wire.JobErrorAction, fallback time.Duration) time.Duration {
	if a == nil || a.Timeout == "" {
		return fallback
	}
	d, ps := ParseTimeout("timeout", a.Timeout)
	if len(ps) > 0 {
		return fallback
	}
	return d
}
