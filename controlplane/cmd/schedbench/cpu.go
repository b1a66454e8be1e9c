package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// clockTick is the unit of the CPU times in /proc/<pid>/stat (USER_HZ, 100 on Linux).
const clockTick = 10 * time.Millisecond

// processCPU returns the CPU time (user + system) process pid has used so far.
func processCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, fmt.Errorf("cpu time of %d: %w", pid, err)
	}
	return parseStatCPU(string(b))
}

// parseStatCPU reads utime + stime from the text of /proc/<pid>/stat. The command name (second
// field) is in parentheses and may hold spaces and parentheses: fields are counted after the
// last ')'.
func parseStatCPU(stat string) (time.Duration, error) {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, fmt.Errorf("stat %q: no command name", stat)
	}
	f := strings.Fields(stat[i+1:])
	// f[0] is field 3 (state); utime and stime are fields 14 and 15.
	if len(f) < 13 {
		return 0, fmt.Errorf("stat %q: %d fields after the command name, want at least 13", stat, len(f))
	}
	var ticks int64
	for _, s := range f[11:13] {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("stat: cpu time %q: %w", s, err)
		}
		ticks += n
	}
	return time.Duration(ticks) * clockTick, nil
}

// selfCPU returns the CPU time (user + system) this process (clients and sink) has used so far.
func selfCPU() (time.Duration, error) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, fmt.Errorf("getrusage: %w", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), nil
}

// cpuMark is the CPU time of the daemon and of this process, and the daemon's allocations, at
// one moment.
type cpuMark struct {
	daemon, self time.Duration
	allocs       allocCounters
	server       map[int]time.Duration // with --store: the PostgreSQL server processes of the daemons' connections
}

// markCPU marks the CPU and the allocations of the daemon and its replicas (summed) and the CPU
// of this process. Reading the allocations scrapes each daemon's /metrics, which is the
// benchmark's work, not the daemon's: it encodes every series (with per-job series, one set per
// job) and may count the jobs by state in the store. So a mark that opens a window (closing
// false) scrapes before it reads the CPU times, and one that closes it (closing true) reads them
// first: no scrape falls inside a window.
func markCPU(ctx context.Context, d *daemon, closing bool) (cpuMark, error) {
	var m cpuMark
	if !closing {
		if err := m.addAllocs(ctx, d); err != nil {
			return cpuMark{}, err
		}
	}
	if err := m.addCPU(ctx, d); err != nil {
		return cpuMark{}, err
	}
	if closing {
		if err := m.addAllocs(ctx, d); err != nil {
			return cpuMark{}, err
		}
	}
	return m, nil
}

// addAllocs adds up the allocation counters of the daemon and its replicas into m.
func (m *cpuMark) addAllocs(ctx context.Context, d *daemon) error {
	for _, p := range append([]*daemon{d}, d.peers...) {
		a, err := readAllocs(ctx, p)
		if err != nil {
			return err
		}
		m.allocs.mallocs, m.allocs.bytes = m.allocs.mallocs+a.mallocs, m.allocs.bytes+a.bytes
	}
	return nil
}

// addCPU adds up into m the CPU times of the daemon and its replicas, and reads those of this
// process and, with --store, of the daemons' PostgreSQL server processes.
func (m *cpuMark) addCPU(ctx context.Context, d *daemon) error {
	for _, p := range append([]*daemon{d}, d.peers...) {
		c, err := processCPU(p.pid())
		if err != nil {
			return err
		}
		m.daemon += c
	}
	sc, err := selfCPU()
	if err != nil {
		return err
	}
	m.self = sc
	if d.schema != "" {
		if m.server, err = serverCPU(ctx, d.opts, d.schema); err != nil {
			return err
		}
	}
	return nil
}

// since describes the CPU used from m to now per unit of work (n units named what).
func (m cpuMark) since(now cpuMark, n int, what string) string {
	dd, ds := now.daemon-m.daemon, now.self-m.self
	per := func(t time.Duration) string {
		if n == 0 {
			return "-"
		}
		return (t / time.Duration(n)).Round(time.Microsecond).String()
	}
	s := fmt.Sprintf("daemon %s (%s per %s; %s), schedbench %s (%s per %s)",
		dd.Round(10*time.Millisecond), per(dd), what, m.allocs.perUnit(now.allocs, n, what),
		ds.Round(10*time.Millisecond), per(ds), what)
	if now.server != nil {
		sv := serverCPUSince(m.server, now.server)
		s += fmt.Sprintf(", PostgreSQL server processes %s (%s per %s; %d connections)",
			sv.Round(10*time.Millisecond), per(sv), what, len(now.server))
	}
	return s
}

// perUnit is the daemon CPU and allocations from m to now per unit of work (n units).
func (m cpuMark) perUnit(now cpuMark, n int) (time.Duration, float64) {
	if n == 0 {
		return 0, 0
	}
	return (now.daemon - m.daemon) / time.Duration(n), (now.allocs.mallocs - m.allocs.mallocs) / float64(n)
}

// loadAverage is the first three fields of /proc/loadavg.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}
