// Command schedulerd is the Scheduler control-plane daemon.
//
//	schedulerd serve [flags]
//	    run the daemon
//	schedulerd occurrences [--now RFC3339] [--count N] [--zone] [--describe] [FILE|-]
//	    print a job's (or a bare recurrence's) next executions
//	schedulerd health [--url URL] [--tls-cert FILE] [--timeout D]
//	    ask a running daemon's /readyz: exit 0 when ready (a container's health check)
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

const usage = `usage:
  schedulerd serve [flags]
      run the daemon
  schedulerd occurrences [--now RFC3339] [--count N] [--zone] [--describe] [FILE|-]
      print a job's (or a bare recurrence's) next executions
  schedulerd health [--url URL] [--tls-cert FILE] [--timeout D]
      ask a running daemon's /readyz: exit 0 when ready (a container's health check)
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run is main without the process: it returns the exit code.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	switch args[0] {
	case "serve":
		return runServe(ctx, args[1:], stdout, stderr)
	case "occurrences":
		return runOccurrences(ctx, args[1:], stdin, stdout, stderr)
	case "health":
		return runHealth(ctx, args[1:], os.Getenv, stdout, stderr)
	case "-h", "--help", "help":
		fmt.Fprint(stdout, usage)
		return 0
	default:
		fmt.Fprintf(stderr, "schedulerd: unknown command %q\n%s", args[0], usage)
		return 2
	}
}
