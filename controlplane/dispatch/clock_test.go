package dispatch_test

import (
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/internal/clock"
)

// offsetClock is the real clock shifted by offset (a benchmark's way to put stored due times a
// fixed time after start without waiting an hour).
type offsetClock struct{ offset time.Duration }

func (c offsetClock) Now() time.Time                       { return time.Now().Add(c.offset) }
func (c offsetClock) NewTimer(d time.Duration) clock.Timer { return clock.Real{}.NewTimer(d) }
