package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store/sqlite"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store/transfer"
)

// runBackup is `schedulerd backup [--data DIR] --to FILE`: an online, consistent copy of the
// embedded store (VACUUM INTO: one read snapshot, while a daemon keeps writing), checked with
// PRAGMA integrity_check, its tables counted. Restoring is starting a daemon on a data directory
// holding the copy as scheduler.db, with the same secret.key (kept apart: it is not in the
// copy). A PostgreSQL store is backed up with pg_dump. Exit codes: 0, 1 failed, 2 bad usage.
func runBackup(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("schedulerd backup", flag.ContinueOnError)
	fs.SetOutput(stderr)
	data := fs.String("data", envOr("SCHEDULERD_DATA", "./data"), "the daemon's data directory, holding scheduler.db [SCHEDULERD_DATA]")
	to := fs.String("to", "", "the file to write (it must not exist)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: schedulerd backup [--data DIR] --to FILE")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if *to == "" || fs.NArg() > 0 {
		fmt.Fprintln(stderr, "schedulerd backup: --to FILE is required, and nothing else")
		return 2
	}
	if os.Getenv("SCHEDULERD_STORE") != "" {
		fmt.Fprintln(stderr, "schedulerd backup: SCHEDULERD_STORE names a PostgreSQL store: back it up with pg_dump "+
			"(and keep the secret key file beside the dump); this command copies the embedded SQLite store")
		return 2
	}
	if err := backup(ctx, filepath.Join(*data, "scheduler.db"), *to, stdout); err != nil {
		fmt.Fprintf(stderr, "schedulerd backup: %v\n", err)
		return 1
	}
	return 0
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

func backup(ctx context.Context, dbPath, to string, stdout io.Writer) error {
	start := time.Now()
	if _, err := os.Stat(dbPath); err != nil {
		return err
	}
	d, err := sqlite.Open(ctx, dbPath)
	if err != nil {
		return err
	}
	err = d.Backup(ctx, to)
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if err := sqlite.IntegrityCheck(ctx, to); err != nil {
		return err
	}
	copied, err := sqlite.Open(ctx, to)
	if err != nil {
		return err
	}
	sum, err := transfer.Checksum(ctx, copied)
	if cerr := copied.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s (integrity_check ok) in %s:\n", to, time.Since(start).Round(time.Millisecond))
	for _, t := range sum {
		fmt.Fprintf(stdout, "  %-11s %9d rows  sha256 %s\n", t.Name, t.Rows, t.Checksum)
	}
	fmt.Fprintln(stdout, "keep the secret key file (secret.key) apart from it: the job secrets in the copy are sealed with it")
	return nil
}
