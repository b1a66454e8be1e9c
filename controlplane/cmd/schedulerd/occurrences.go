package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/internal/clock"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/jobdef"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"
)

// maxOccurrences bounds --count.
const maxOccurrences = 10000

// maxJobFile bounds what the command reads; a job definition is at most 16 KiB, this leaves room
// for whitespace and read-only fields.
const maxJobFile = 1 << 20

// runOccurrences is `schedulerd occurrences [--now RFC3339] [--count N] [FILE|-]`: it reads one job
// as Azure JSON ({"properties":{...}} or the bare properties object) from FILE or stdin, validates
// it as the daemon does, and prints its next N executions (SPEC 4.3, for a job created at now that
// has not executed yet) as RFC 3339 UTC, one per line, nothing else. The job's state is not
// consulted: this previews the schedule. Exit codes: 0 (also when nothing is left to run), 2 for
// bad usage or an invalid job (one "path: message" line per problem on stderr), 1 when the file
// cannot be read.
func runOccurrences(_ context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return occurrences(args, stdin, stdout, stderr, clock.Real{})
}

func occurrences(args []string, stdin io.Reader, stdout, stderr io.Writer, clk clock.Clock) int {
	fs := flag.NewFlagSet("schedulerd occurrences", flag.ContinueOnError)
	fs.SetOutput(stderr)
	nowFlag := fs.String("now", "", "the clock as RFC 3339, also the creation time of a job without startTime (default: the real clock)")
	count := fs.Int("count", 10, fmt.Sprintf("how many executions to print, 1..%d", maxOccurrences))
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: schedulerd occurrences [--now RFC3339] [--count N] [FILE|-]")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if *count < 1 || *count > maxOccurrences {
		fmt.Fprintf(stderr, "schedulerd occurrences: --count %d is outside 1..%d\n", *count, maxOccurrences)
		return 2
	}
	now := clk.Now()
	if *nowFlag != "" {
		t, err := time.Parse(time.RFC3339Nano, *nowFlag)
		if err != nil {
			fmt.Fprintf(stderr, "schedulerd occurrences: --now %q is not an RFC 3339 date-time such as 2015-04-08T13:00:00Z\n", *nowFlag)
			return 2
		}
		now = t
	}
	if fs.NArg() > 1 {
		fmt.Fprintf(stderr, "schedulerd occurrences: one job file at most, got %d arguments\n", fs.NArg())
		return 2
	}
	name := "-"
	if fs.NArg() == 1 {
		name = fs.Arg(0)
	}
	data, err := readJob(name, stdin)
	if err != nil {
		fmt.Fprintf(stderr, "schedulerd occurrences: %v\n", err)
		return 1
	}
	props, prefix, ps := decodeJob(data)
	if len(ps) == 0 {
		rule, vps := jobdef.Validate(props, now)
		for _, p := range vps {
			ps = append(ps, wire.Problem{Path: join(prefix, p.Path), Message: p.Message})
		}
		if len(ps) == 0 {
			var out strings.Builder
			for _, t := range rule.Occurrences(now, 0, *count) {
				out.WriteString(t.UTC().Format(time.RFC3339Nano))
				out.WriteByte('\n')
			}
			if _, err := io.WriteString(stdout, out.String()); err != nil {
				fmt.Fprintf(stderr, "schedulerd occurrences: write: %v\n", err)
				return 1
			}
			return 0
		}
	}
	for _, p := range ps {
		fmt.Fprintln(stderr, p.String())
	}
	return 2
}

func readJob(name string, stdin io.Reader) ([]byte, error) {
	var (
		data []byte
		err  error
	)
	if name == "-" {
		data, err = io.ReadAll(io.LimitReader(stdin, maxJobFile+1))
		name = "stdin"
	} else {
		data, err = os.ReadFile(name)
	}
	if err != nil {
		return nil, fmt.Errorf("read job: %w", err)
	}
	if len(data) > maxJobFile {
		return nil, fmt.Errorf("read job from %s: larger than %d bytes", name, maxJobFile)
	}
	return data, nil
}

// decodeJob strictly decodes a job definition or its bare properties. prefix is "properties" when
// the document was a definition, so problems name paths in the document as written.
func decodeJob(data []byte) (props *wire.JobProperties, prefix string, ps wire.Problems) {
	var probe map[string]json.RawMessage
	wrapped := false
	if json.Unmarshal(data, &probe) == nil {
		for k := range probe {
			if strings.EqualFold(k, "properties") {
				wrapped = true
			}
		}
	}
	var err error
	if wrapped {
		var def wire.JobDefinition
		if err = wire.Decode(data, &def); err == nil {
			props, prefix = def.Properties, "properties"
		}
	} else {
		props = new(wire.JobProperties)
		err = wire.Decode(data, props)
	}
	if err != nil {
		if !errors.As(err, &ps) {
			ps = wire.Problems{{Message: err.Error()}}
		}
		return nil, prefix, ps
	}
	if props == nil {
		return nil, prefix, wire.Problems{{Path: "properties", Message: "the job's properties are required"}}
	}
	return props, prefix, nil
}

func join(prefix, path string) string {
	switch {
	case prefix == "":
		return path
	case path == "":
		return prefix
	}
	return prefix + "." + path
}
