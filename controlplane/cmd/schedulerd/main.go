// Command schedulerd is the Scheduler control-plane daemon.
//
//	schedulerd serve [flags]
//	    run the daemon
//	schedulerd occurrences [--now RFC3339] [--count N] [--zone] [--describe] [FILE|-]
//	    print a job's (or a bare recurrence's) next executions
//	schedulerd health [--url URL] [--tls-cert FILE] [--timeout D]
//	    ask a running daemon's /readyz: exit 0 when ready (a container's health check)
//	schedulerd migrate --from STORE --to STORE [--online]
//	    copy a whole store into a new, empty one
//	schedulerd backup [--data DIR] --to FILE
//	    copy the SQLite store online
//	schedulerd version
//	    print the version
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
  schedulerd migrate --from STORE --to STORE [--online]
      copy a whole store into a new, empty one (STORE: a SQLite file or data directory, or postgres://...)
  schedulerd backup [--data DIR] --to FILE
      write an online, consistent copy of the SQLite store to FILE
  schedulerd version
      print the version (also --version)
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
	case "migrate":
		return runMigrate(ctx, args[1:], stdout, stderr)
	case "backup":
		return runBackup(ctx, args[1:], stdout, stderr)
	case "version", "--version":
		return runVersion(stdout)
	case "-h", "--help", "help":
		fmt.Fprint(stdout, usage)
		return 0
	default:
		fmt.Fprintf(stderr, "schedulerd: unknown command %q\n%s", args[0], usage)
		return 2
	}
}
