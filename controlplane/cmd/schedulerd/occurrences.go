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

	"github.com/schedulerhq/terraform-provider-scheduler/internal/arm"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/clock"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/jobdef"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/jobstate"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/recurrence"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"
)

// maxOccurrences bounds --count.
const maxOccurrences = 10000

// maxJobFile bounds what the command reads; a job definition is at most 16 KiB, this leaves room
// for whitespace and read-only fields.
const maxJobFile = 1 << 20

// runOccurrences is `schedulerd occurrences [--now RFC3339] [--count N] [--zone] [--describe]
// [FILE|-]`: it reads one job as Azure JSON ({"properties":{...}} as the API returns it, the bare
// properties object, or a bare recurrence {"frequency":...}) from FILE or stdin, validates it as
// the daemon does, and prints its next N executions (SPEC 4.3, for a job created at now that has
// not executed yet; jobstate.PreviewRuns: excluded dates are left out) as RFC 3339, one per line:
// in UTC, or with --zone in the rule's zone with its offset (as the provider and POST
// /preview/occurrences print them). A definition with the job's "id" (a job as the API returns
// it) prints when each run starts: with recurrence.jitter, the job's jittered start (with
// milliseconds), as the dispatcher starts it. Without an id a jittered rule prints the scheduled
// times and says on stderr that each starts up to the jitter later. --describe first prints the
// rule in words (recurrence.Describe) on a line of its own. A job without an action previews its
// schedule only: startTime and recurrence are checked, the action is not; the secrets the API
// never returns may be left out. The job's state is not consulted.
// Exit codes: 0 (also when nothing is left to run), 2 for bad usage or an invalid job (one
// "path: message" line per problem on stderr), 1 when the file cannot be read.
func runOccurrences(_ context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return occurrences(args, stdin, stdout, stderr, clock.Real{})
}

func occurrences(args []string, stdin io.Reader, stdout, stderr io.Writer, clk clock.Clock) int {
	fs := flag.NewFlagSet("schedulerd occurrences", flag.ContinueOnError)
	fs.SetOutput(stderr)
	nowFlag := fs.String("now", "", "the clock as RFC 3339, also the creation time of a job without startTime (default: the real clock)")
	count := fs.Int("count", 10, fmt.Sprintf("how many executions to print, 1..%d", maxOccurrences))
	inZone := fs.Bool("zone", false, "print the executions in the rule's zone (timeZone, else startTime's offset) instead of UTC")
	describe := fs.Bool("describe", false, "print the rule in words on the first line")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: schedulerd occurrences [--now RFC3339] [--count N] [--zone] [--describe] [FILE|-]")
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
	props, prefix, id, ps := decodeJob(data)
	key := ""
	if len(ps) == 0 && id != "" {
		n, err := arm.ParseJobID(id)
		if err != nil {
			ps = wire.Problems{{Path: "id", Message: err.Error()}}
		} else {
			key = n.Canonical()
		}
	}
	if len(ps) == 0 {
		rule, vps := validateSchedule(props, now)
		for _, p := range vps {
			if prefix == bareRecurrence {
				// The document is the recurrence: paths relative to it.
				ps = append(ps, wire.Problem{Path: strings.TrimPrefix(strings.TrimPrefix(p.Path, "recurrence"), "."), Message: p.Message})
				continue
			}
			ps = append(ps, wire.Problem{Path: join(prefix, p.Path), Message: p.Message})
		}
		if len(ps) == 0 {
			var out strings.Builder
			if *describe {
				out.WriteString(recurrence.Describe(rule))
				out.WriteByte('\n')
			}
			loc := time.UTC
			if *inZone {
				loc = rule.Location()
			}
			for _, r := range jobstate.PreviewRuns(rule, key, now, 0, *count) {
				out.WriteString(r.Start.In(loc).Format(time.RFC3339Nano))
				out.WriteByte('\n')
			}
			if rule.Jitter() > 0 && key == "" {
				fmt.Fprintf(stderr, "schedulerd occurrences: the scheduled times: each run starts up to %s later (recurrence.jitter), "+
					"at an offset derived from the job's id; give the job as the API returns it, with its id, for its starts\n", props.Recurrence.Jitter)
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

// validateSchedule checks a whole job as the daemon does (but for the secrets left out, as the API
// returns a job), or, when it has no action, only its startTime and recurrence (a schedule to
// preview).
func validateSchedule(props *wire.JobProperties, now time.Time) (*recurrence.Rule, wire.Problems) {
	if props.Action != nil {
		rule, ps := jobdef.Validate(props, now)
		if ps = withoutMissingSecrets(ps, props.Action); len(ps) > 0 || rule != nil {
			return rule, ps
		}
		// Only secrets the API never returns were missing: the schedule is compiled below.
	}
	rule, err := recurrence.Compile(props.StartTime, props.Recurrence, now)
	if err == nil {
		return rule, nil
	}
	var ps wire.Problems
	if !errors.As(err, &ps) {
		ps = wire.Problems{{Path: "recurrence", Message: err.Error()}}
	}
	return nil, ps
}

// withoutMissingSecrets drops the problems of secrets left out: the API never returns them
// (passwords, pfx, OAuth secret, SAS token, Service Bus key), so a job exactly as GET returns it
// previews as it runs. A secret that is set is still checked.
func withoutMissingSecrets(ps wire.Problems, a *wire.JobAction) wire.Problems {
	missing := map[string]bool{}
	for _, f := range a.NamedSecretFields() {
		if *f.Value == "" {
			missing["action."+f.Path] = true
		}
	}
	var out wire.Problems
	for _, p := range ps {
		if !missing[p.Path] {
			out = append(out, p)
		}
	}
	return out
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

// bareRecurrence is decodeJob's prefix for a document that is a recurrence alone.
const bareRecurrence = "(recurrence)"

// decodeJob strictly decodes a job definition, its bare properties or a bare recurrence. prefix
// is "properties" when the document was a definition and bareRecurrence when it was a
// recurrence, so that problems name paths in the document as written; id is the definition's
// "id" (the job's ARM id, as the API returns it), "" when it has none.
func decodeJob(data []byte) (props *wire.JobProperties, prefix, id string, ps wire.Problems) {
	var probe map[string]json.RawMessage
	wrapped, bare := false, false
	if json.Unmarshal(data, &probe) == nil {
		for k := range probe {
			wrapped = wrapped || strings.EqualFold(k, "properties")
			bare = bare || strings.EqualFold(k, "frequency")
		}
	}
	var err error
	switch {
	case bare && !wrapped:
		rec := new(wire.JobRecurrence)
		if err = wire.Decode(data, rec); err == nil {
			return &wire.JobProperties{Recurrence: rec}, bareRecurrence, "", nil
		}
	case wrapped:
		var def wire.JobDefinition
		if err = wire.Decode(data, &def); err == nil {
			props, prefix, id = def.Properties, "properties", def.ID
		}
	default:
		props = new(wire.JobProperties)
		err = wire.Decode(data, props)
	}
	if err != nil {
		if !errors.As(err, &ps) {
			ps = wire.Problems{{Message: err.Error()}}
		}
		return nil, prefix, "", ps
	}
	if props == nil {
		return nil, prefix, "", wire.Problems{{Path: "properties", Message: "the job's properties are required"}}
	}
	return props, prefix, id, nil
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
