package main

import (
	"cmp"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"
)

// sink is the HTTP target of every job: it records, per delivery, the scheduled time the daemon
// sent and when the request arrived.
type sink struct {
	url string
	srv *http.Server

	mu         sync.Mutex
	deliveries []delivery
	bad        int
	calibrated int // requests to calibratePath: the loopback ceiling's, never deliveries
}

// calibratePath is where calibrate sends its requests: the sink does the same work for them as
// for a delivery (reads the body, parses the expected time, records under its lock) but only
// counts them.
const calibratePath = "/calibrate"

type delivery struct {
	expected time.Time
	received time.Time
}

// startSink starts the sink with room for expect deliveries (growing the record of deliveries
// during a burst would copy it while requests wait).
func startSink(expect int) (*sink, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("sink: %w", err)
	}
	s := &sink{url: "http://" + ln.Addr().String() + "/fire", deliveries: make([]delivery, 0, expect)}
	s.srv = &http.Server{Handler: http.HandlerFunc(s.serve), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = s.srv.Serve(ln) }()
	return s, nil
}

func (s *sink) serve(w http.ResponseWriter, r *http.Request) {
	now := time.Now()
	_, _ = io.Copy(io.Discard, r.Body)
	exp, err := time.Parse(time.RFC3339Nano, r.Header.Get("x-ms-scheduler-expected-execution-time"))
	s.mu.Lock()
	switch {
	case r.URL.Path == calibratePath:
		s.calibrated++
	case err != nil:
		s.bad++
	default:
		s.deliveries = append(s.deliveries, delivery{expected: exp, received: now})
	}
	s.mu.Unlock()
	w.WriteHeader(http.StatusOK)
}

func (s *sink) close() { _ = s.srv.Close() }

// record notes a delivery read back from a broker (ok false: its expected time was unreadable).
func (s *sink) record(expected, received time.Time, ok bool) {
	s.mu.Lock()
	if ok {
		s.deliveries = append(s.deliveries, delivery{expected: expected, received: received})
	} else {
		s.bad++
	}
	s.mu.Unlock()
}

// countBetween counts deliveries scheduled in [from, to).
func (s *sink) countBetween(from, to time.Time) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, d := range s.deliveries {
		if !d.expected.Before(from) && d.expected.Before(to) {
			n++
		}
	}
	return n
}

type stats struct {
	count                         int
	firstDue, lastDue             time.Time
	firstRecv, lastRecv           time.Time
	p50, p99, max                 time.Duration
	busiestDue                    time.Time
	busiestCount                  int
	busiestAllWithin              time.Duration
	deliveriesPerSecondInTheBurst float64
	// Of the due instants: the median, the 99th percentile and the worst of the time their last
	// delivery took, and the median number of deliveries due at one instant.
	seconds                                  int
	lastWithinP50, lastWithinP99, lastWithin time.Duration
	perInstant                               int
	// worst are the instants whose last delivery took longest, worst first (up to worstInstants):
	// when they were due, to line them up with what the daemon did then.
	worst []instant
}

// worstInstants is how many of a cycle's slowest instants stats keeps.
const worstInstants = 5

// instant is one due instant: when it was due, its deliveries and how long its last one took.
type instant struct {
	due   time.Time
	count int
	last  time.Duration
}

// stats summarizes the deliveries scheduled in [from, to).
func (s *sink) stats(from, to time.Time) stats {
	s.mu.Lock()
	var ds []delivery
	for _, d := range s.deliveries {
		if !d.expected.Before(from) && d.expected.Before(to) {
			ds = append(ds, d)
		}
	}
	s.mu.Unlock()
	st := stats{count: len(ds)}
	if len(ds) == 0 {
		return st
	}
	late := make([]time.Duration, len(ds))
	perDue := map[time.Time][]time.Duration{}
	st.firstDue, st.lastDue, st.firstRecv, st.lastRecv = ds[0].expected, ds[0].expected, ds[0].received, ds[0].received
	for i, d := range ds {
		late[i] = d.received.Sub(d.expected)
		perDue[d.expected] = append(perDue[d.expected], late[i])
		if d.expected.Before(st.firstDue) {
			st.firstDue = d.expected
		}
		if d.expected.After(st.lastDue) {
			st.lastDue = d.expected
		}
		if d.received.Before(st.firstRecv) {
			st.firstRecv = d.received
		}
		if d.received.After(st.lastRecv) {
			st.lastRecv = d.received
		}
	}
	slices.Sort(late)
	st.p50 = late[len(late)*50/100]
	st.p99 = late[min(len(late)-1, len(late)*99/100)]
	st.max = late[len(late)-1]
	lasts := make([]time.Duration, 0, len(perDue))
	sizes := make([]int, 0, len(perDue))
	for _, ls := range perDue {
		lasts = append(lasts, slices.Max(ls))
		sizes = append(sizes, len(ls))
	}
	slices.Sort(lasts)
	slices.Sort(sizes)
	st.seconds, st.lastWithinP50, st.lastWithin = len(lasts), lasts[len(lasts)/2], lasts[len(lasts)-1]
	st.lastWithinP99, st.perInstant = lasts[min(len(lasts)-1, len(lasts)*99/100)], sizes[len(sizes)/2]
	for due, ls := range perDue {
		st.worst = append(st.worst, instant{due: due, count: len(ls), last: slices.Max(ls)})
		if len(ls) > st.busiestCount {
			st.busiestDue, st.busiestCount = due, len(ls)
			st.busiestAllWithin = slices.Max(ls)
		}
	}
	slices.SortFunc(st.worst, func(a, b instant) int { return cmp.Compare(b.last, a.last) })
	st.worst = st.worst[:min(len(st.worst), worstInstants)]
	// Throughput over the burst: from the first scheduled time to the last delivery.
	if span := st.lastRecv.Sub(st.firstDue); span > 0 {
		st.deliveriesPerSecondInTheBurst = float64(len(ds)) / span.Seconds()
	}
	return st
}

// describe states the figures, each against the calibrated ceiling c where one applies: the
// throughput as a ratio of the ceiling, the busiest instant's start against its floor
// (its jobs / ceiling), and the 99th percentile of the instants' last delivery against the floor
// of the median instant.
func (st stats) describe(c calibration) string {
	if st.count == 0 {
		return "no deliveries"
	}
	return fmt.Sprintf("%.0f fires/s from the first due time to the last delivery (%s; %s); lateness p50 %s p99 %s max %s; "+
		"busiest instant %s: %d jobs all started within %s (%s); of the %d due instants (median %d jobs each), "+
		"the last delivery came within %s (median), %s (p99: %s) and %s (worst)",
		st.deliveriesPerSecondInTheBurst, st.lastRecv.Sub(st.firstDue).Round(time.Millisecond), c.ratio(st.deliveriesPerSecondInTheBurst),
		st.p50.Round(100*time.Microsecond), st.p99.Round(100*time.Microsecond), st.max.Round(100*time.Microsecond),
		st.busiestDue.UTC().Format("15:04:05"), st.busiestCount, st.busiestAllWithin.Round(time.Millisecond),
		c.overFloor(st.busiestAllWithin, st.busiestCount),
		st.seconds, st.perInstant, st.lastWithinP50.Round(time.Millisecond), st.lastWithinP99.Round(time.Millisecond),
		c.overFloor(st.lastWithinP99, st.perInstant), st.lastWithin.Round(time.Millisecond))
}

// describeWorst lists the slowest instants: when each was due (UTC, to the millisecond), its
// deliveries and how long its last one took.
func (st stats) describeWorst() string {
	parts := make([]string, len(st.worst))
	for i, in := range st.worst {
		parts[i] = fmt.Sprintf("%s (%d) %s", in.due.UTC().Format("15:04:05.000"), in.count, in.last.Round(time.Millisecond))
	}
	return strings.Join(parts, ", ")
}
