package provider

import (
	"regexp"
	"strconv"
	"strings"
)

var (
	isoDurationRE = regexp.MustCompile(`^P(?:(\d+)Y)?(?:(\d+)M)?(?:(\d+)W)?(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?)?$`)
	clockRE       = regexp.MustCompile(`^(?:(\d+)\.)?(\d+):(\d{1,2}):(\d{1,2}(?:\.\d+)?)$`)
)

// durationParts reads an ISO 8601 duration (PT30S, P1M) or a .NET time span ([d.]hh:mm:ss) as
// months and seconds; ok is false when it is neither.
func durationParts(s string) (months int64, seconds float64, ok bool) {
	s = strings.ToUpper(strings.TrimSpace(s))
	num := func(v string) float64 {
		f, _ := strconv.ParseFloat(v, 64)
		return f
	}
	if m := isoDurationRE.FindStringSubmatch(s); m != nil && s != "P" && s != "PT" {
		months = int64(num(m[1]))*12 + int64(num(m[2]))
		seconds = num(m[3])*7*86400 + num(m[4])*86400 + num(m[5])*3600 + num(m[6])*60 + num(m[7])
		return months, seconds, true
	}
	if m := clockRE.FindStringSubmatch(s); m != nil {
		return 0, num(m[1])*86400 + num(m[2])*3600 + num(m[3])*60 + num(m[4]), true
	}
	return 0, 0, false
}

// sameDuration reports whether two retry intervals are the same duration however written
// ("00:01:00" and "PT1M").
func sameDuration(a, b string) bool {
	if strings.EqualFold(a, b) {
		return true
	}
	am, as, ok1 := durationParts(a)
	bm, bs, ok2 := durationParts(b)
	return ok1 && ok2 && am == bm && as == bs
}
