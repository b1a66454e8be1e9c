package main

import (
	"fmt"
	"io"
	"runtime/debug"

	"github.com/prometheus/client_golang/prometheus"
)

// buildInfo is what the binary knows of its build: the module version ("(devel)" when built from
// a work tree), the VCS revision and whether the tree had changes, and the Go version.
type buildInfo struct {
	Version   string
	Revision  string
	Modified  bool
	GoVersion string
}

func readBuildInfo() buildInfo {
	b := buildInfo{Version: "(unknown)", Revision: "unknown"}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return b
	}
	b.GoVersion = info.GoVersion
	if info.Main.Version != "" {
		b.Version = info.Main.Version
	}
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			b.Revision = s.Value
		case "vcs.modified":
			b.Modified = s.Value == "true"
		}
	}
	return b
}

func (b buildInfo) String() string {
	rev := b.Revision
	if b.Modified {
		rev += " (modified)"
	}
	return fmt.Sprintf("schedulerd %s, revision %s, %s", b.Version, rev, b.GoVersion)
}

// runVersion is `schedulerd version` (and `schedulerd --version`): one line.
func runVersion(stdout io.Writer) int {
	fmt.Fprintln(stdout, readBuildInfo())
	return 0
}

// buildInfoMetric is scheduler_build_info: always 1, the build in its labels.
func buildInfoMetric() prometheus.Collector {
	b := readBuildInfo()
	modified := "false"
	if b.Modified {
		modified = "true"
	}
	g := prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "scheduler_build_info",
		Help: "The running schedulerd's build (labels version, revision, modified, goversion); always 1.",
		ConstLabels: prometheus.Labels{
			"version": b.Version, "revision": b.Revision, "modified": modified, "goversion": b.GoVersion,
		},
	})
	g.Set(1)
	return g
}
