package action

import (
	"crypto/sha256"
	"encoding/hex"
)

// HeaderTraceparent is the W3C Trace Context header every HTTP attempt carries (SPEC 8).
const HeaderTraceparent = "traceparent"

// TraceIDs are the W3C trace context identifiers of one attempt: the execution's trace (the same
// for every attempt, retry and error action of an execution, on every replica), the execution's
// span (the parent of each attempt's span) and the attempt's own span.
type TraceIDs struct {
	TraceID       [16]byte
	ExecutionSpan [8]byte
	AttemptSpan   [8]byte
}

// Trace derives an attempt's trace identifiers: the trace and the execution span from the job's
// resource ID and the execution tag, the attempt's span from its client request ID (new for each
// attempt). Derived, not drawn, so that a replica taking an execution over continues its trace.
func (a *Attempt) Trace() TraceIDs {
	var t TraceIDs
	h := sha256.Sum256([]byte("trace\x00" + a.JobID + "\x00" + a.ExecutionTag))
	copy(t.TraceID[:], h[:16])
	copy(t.ExecutionSpan[:], h[16:24])
	s := sha256.Sum256([]byte("span\x00" + a.ClientRequestID))
	copy(t.AttemptSpan[:], s[:8])
	// All-zero identifiers are invalid in W3C trace context.
	if t.TraceID == [16]byte{} {
		t.TraceID[15] = 1
	}
	if t.AttemptSpan == [8]byte{} {
		t.AttemptSpan[7] = 1
	}
	if t.ExecutionSpan == [8]byte{} {
		t.ExecutionSpan[7] = 1
	}
	return t
}

// Traceparent is the attempt's traceparent header value: version 00, the execution's trace, the
// attempt's span, sampled.
func (t TraceIDs) Traceparent() string {
	return "00-" + hex.EncodeToString(t.TraceID[:]) + "-" + hex.EncodeToString(t.AttemptSpan[:]) + "-01"
}
