package jobstate

import (
	"encoding/binary"
	"hash/fnv"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/internal/recurrence"
)

// StartAt is when an occurrence of a job scheduled at scheduled starts: scheduled plus the
// rule's jitter offset, an offset in [0, jitter) derived from the job's identity key and the
// occurrence (to the microsecond, as every store keeps it), so that every replica and every
// preview agrees. The offset never moves the occurrence to or past the next one. Without jitter
// it is scheduled. The expected execution time a run reports stays scheduled.
func StartAt(rule *recurrence.Rule, key string, scheduled time.Time) time.Time {
	jitter := rule.Jitter()
	if jitter < time.Millisecond || scheduled.IsZero() {
		return scheduled
	}
	offset := JitterOffset(key, scheduled, jitter)
	if next, ok := rule.Next(scheduled); ok {
		if gap := next.Sub(scheduled); offset >= gap {
			offset %= gap
		}
	}
	return scheduled.Add(offset)
}

// JitterOffset is the offset in [0, jitter), in whole milliseconds, of the occurrence scheduled at
// scheduled of the job whose identity key is key: a hash of both, the same on every machine.
func JitterOffset(key string, scheduled time.Time, jitter time.Duration) time.Duration {
	ms := uint64(jitter / time.Millisecond)
	if ms == 0 {
		return 0
	}
	h := fnv.New64a()
	_, _ = h.Write([]byte(key))
	var b [9]byte // a zero byte keeps key and time apart
	binary.BigEndian.PutUint64(b[1:], uint64(scheduled.UnixMicro()))
	_, _ = h.Write(b[:])
	return time.Duration(h.Sum64()%ms) * time.Millisecond
}

// Run is one coming run of a job: its scheduled time (the expected execution time it reports)
// and when it starts (StartAt; equal to Scheduled without jitter or without the job's key).
type Run struct {
	Scheduled time.Time
	Start     time.Time
}

// PreviewRuns is Preview with each run's start: for the job whose identity key is key
// (store.JobKey.CanonicalID, arm.CanonicalJobID) its jittered start, as the dispatcher starts
// it; with key "" (a rule not yet a job's) the start is the scheduled time, the start of its
// window.
func PreviewRuns(rule *recurrence.Rule, key string, now time.Time, executed, n int) []Run {
	times := Preview(rule, now, executed, n)
	out := make([]Run, len(times))
	for i, t := range times {
		out[i] = Run{Scheduled: t, Start: t}
		if key != "" {
			out[i].Start = StartAt(rule, key, t)
		}
	}
	return out
}
