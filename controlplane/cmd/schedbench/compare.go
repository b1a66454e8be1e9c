package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"
)

// withFeatures returns o with the features of a --compare list turned on: signing, otlp (a
// collector that accepts the spans) or otlp-hang (one that never answers).
func withFeatures(o options, list string) (options, error) {
	for f := range strings.SplitSeq(list, ",") {
		switch strings.TrimSpace(f) {
		case "signing":
			o.signing = true
		case "otlp", "otlp-hang":
			if o.otlp != "" {
				return o, fmt.Errorf("--compare %q: one collector only (otlp or otlp-hang, not with --otlp)", list)
			}
			o.otlp = "ok"
			if strings.TrimSpace(f) == "otlp-hang" {
				o.otlp = "hang"
			}
		default:
			return o, fmt.Errorf("--compare %q: unknown feature %q (want signing, otlp, otlp-hang)", list, f)
		}
	}
	return o, nil
}

// runCompare runs --pairs pairs of phases back to back, each on a fresh daemon and sink: "off"
// with the options as given, "on" with the --compare features added, alternating off, on, off,
// on, so that a machine whose load drifts weighs on both alike. It prints each phase's figures,
// then each pair's ratios (on / off) and the ratio of the sums.
func runCompare(ctx context.Context, o options, out io.Writer) error {
	on, err := withFeatures(o, o.compare)
	if err != nil {
		return err
	}
	if o.pairs < 1 {
		return fmt.Errorf("--pairs %d: want at least 1", o.pairs)
	}
	var cal calibration
	if o.calibrateFor > 0 {
		s, err := startSink(1)
		if err != nil {
			return err
		}
		cal, err = measureCeiling(ctx, o, s, out)
		s.close()
		if err != nil {
			return err
		}
	}
	type phase struct {
		pair int
		name string
		fig  phaseFigures
	}
	var phases []phase
	for i := 1; i <= o.pairs; i++ {
		for _, p := range []struct {
			name string
			o    options
		}{{"off", o}, {"on", on}} {
			fmt.Fprintf(out, "\n=== pair %d, %s (signing %v, otlp %q), %s, load average %s\n", i, p.name, p.o.signing, p.o.otlp,
				time.Now().UTC().Format(time.TimeOnly), loadAverage())
			s, err := startSink(o.jobs * (o.cycles + 2))
			if err != nil {
				return err
			}
			fig, err := runPhase(ctx, p.o, s, cal, out)
			s.close()
			if err != nil {
				return fmt.Errorf("pair %d, %s: %w", i, p.name, err)
			}
			phases = append(phases, phase{i, p.name, fig})
		}
	}
	fmt.Fprintf(out, "\n--compare %s, %d pair(s), %d jobs, %d cycle(s) each:\n", o.compare, o.pairs, o.jobs, o.cycles)
	fmt.Fprintf(out, "%-5s %-4s %8s %10s %12s %12s %12s\n", "pair", "", "fires/s", "p99", "CPU/fire", "allocs/fire", "peak RSS")
	for _, p := range phases {
		fmt.Fprintf(out, "%-5d %-4s %8.0f %10s %12s %12.0f %12s\n", p.pair, p.name, p.fig.firesPerSec, p.fig.p99.Round(100*time.Microsecond),
			p.fig.cpuPerFire.Round(time.Microsecond), p.fig.allocsPerFire, p.fig.peakRSS)
	}
	var offCPU, onCPU time.Duration
	var offFires, onFires int
	for i := 0; i+1 < len(phases); i += 2 {
		off, on := phases[i].fig, phases[i+1].fig
		fmt.Fprintf(out, "pair %d on/off: CPU per fire %.2f, allocations per fire %.2f, fires/s %.2f, p99 %.2f\n", phases[i].pair,
			ratio(float64(on.cpuPerFire), float64(off.cpuPerFire)), ratio(on.allocsPerFire, off.allocsPerFire),
			ratio(on.firesPerSec, off.firesPerSec), ratio(float64(on.p99), float64(off.p99)))
		offCPU += off.cpuPerFire * time.Duration(off.fires)
		onCPU += on.cpuPerFire * time.Duration(on.fires)
		offFires += off.fires
		onFires += on.fires
	}
	if offFires > 0 && onFires > 0 {
		offPer, onPer := offCPU/time.Duration(offFires), onCPU/time.Duration(onFires)
		fmt.Fprintf(out, "all pairs: daemon CPU per fire %s off, %s on: %.2f (%s more per fire)\n", offPer.Round(time.Microsecond),
			onPer.Round(time.Microsecond), ratio(float64(onPer), float64(offPer)), (onPer - offPer).Round(time.Microsecond))
	}
	return nil
}

// ratio is a / b (0 when b is 0).
func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}
