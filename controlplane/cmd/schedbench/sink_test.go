package main

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestSinkStats(t *testing.T) {
	s, err := startSink(4)
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	due := time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC)
	for _, exp := range []string{"2026-11-22T03:00:00Z", "2026-11-22T03:00:00Z", "2026-11-22T03:00:01Z", "not a time"} {
		req, err := http.NewRequest(http.MethodPost, s.url, strings.NewReader("x"))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("x-ms-scheduler-expected-execution-time", exp)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("status %d", resp.StatusCode)
		}
	}
	if got := s.countBetween(due, due.Add(time.Second)); got != 2 {
		t.Errorf("countBetween(03:00:00, 03:00:01) = %d, want 2", got)
	}
	if got := s.countBetween(due, due.Add(time.Minute)); got != 3 {
		t.Errorf("countBetween(03:00, 03:01) = %d, want 3", got)
	}
	if s.bad != 1 {
		t.Errorf("bad = %d, want 1 (the delivery without a parsable expected time)", s.bad)
	}
	st := s.stats(due, due.Add(time.Minute))
	if st.count != 3 || st.busiestCount != 2 || !st.busiestDue.Equal(due) {
		t.Errorf("stats = count %d busiest %d at %s, want 3, 2 at %s", st.count, st.busiestCount, st.busiestDue, due)
	}
	if st.seconds != 2 || st.lastWithin < st.lastWithinP50 || st.lastWithinP50 <= 0 {
		t.Errorf("due instants %d, last delivery within %s (median) and %s (worst), want 2 instants, 0 < median <= worst",
			st.seconds, st.lastWithinP50, st.lastWithin)
	}
	if st.perInstant != 2 || st.lastWithinP99 != st.lastWithin {
		t.Errorf("median instant %d jobs, p99 of the last deliveries %s; want 2 (the sizes are 1 and 2) and the worst (%s) of two instants",
			st.perInstant, st.lastWithinP99, st.lastWithin)
	}
	if !st.firstDue.Equal(due) || !st.lastDue.Equal(due.Add(time.Second)) {
		t.Errorf("due span %s..%s, want %s..%s", st.firstDue, st.lastDue, due, due.Add(time.Second))
	}
}

func TestStatsListTheSlowestInstantsWorstFirst(t *testing.T) {
	s, err := startSink(16)
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	base := time.Date(2026, 11, 26, 7, 33, 0, 0, time.UTC)
	// Seven instants one second apart; instant i's last delivery takes (i*3 mod 7)+1 ms.
	for i := range 7 {
		due := base.Add(time.Duration(i) * time.Second)
		s.record(due, due.Add(time.Millisecond), true)
		s.record(due, due.Add(time.Duration(i*3%7+1)*time.Millisecond), true)
	}
	st := s.stats(base, base.Add(time.Minute))
	want := "07:33:02.000 (2) 7ms, 07:33:04.000 (2) 6ms, 07:33:06.000 (2) 5ms, 07:33:01.000 (2) 4ms, 07:33:03.000 (2) 3ms"
	if got := st.describeWorst(); got != want {
		t.Errorf("describeWorst() = %q, want %q", got, want)
	}
}
