package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store/postgres"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store/sqlite"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store/transfer"
)

// dumpStore is a store a move reads or writes.
type dumpStore interface {
	store.Dumper
	Close() error
}

// storeSpec is a store named on the command line: a postgres:// URL, or a SQLite file: a data
// directory stands for its scheduler.db, and so does a path that does not exist unless its name
// ends in .db.
type storeSpec struct {
	url  string // postgres
	path string // SQLite file
	dir  string // SQLite: the data directory holding it (its lock)
}

func parseStoreSpec(s string) storeSpec {
	if postgres.IsURL(s) {
		return storeSpec{url: s}
	}
	fi, err := os.Stat(s)
	if (err == nil && fi.IsDir()) || (errors.Is(err, os.ErrNotExist) && !strings.HasSuffix(s, ".db")) {
		return storeSpec{path: filepath.Join(s, "scheduler.db"), dir: s}
	}
	return storeSpec{path: s, dir: filepath.Dir(s)}
}

// String names the store without credentials.
func (s storeSpec) String() string {
	if s.url == "" {
		return "SQLite file " + s.path
	}
	u, err := url.Parse(s.url)
	if err != nil {
		return "a PostgreSQL database"
	}
	desc := "PostgreSQL database " + u.Path[min(1, len(u.Path)):] + " on " + u.Host
	if sp := u.Query().Get("search_path"); sp != "" {
		desc += ", schema " + sp
	}
	return desc
}

// open opens the store; a SQLite source must exist (opening would create an empty one).
func (s storeSpec) open(ctx context.Context, source bool) (dumpStore, error) {
	if s.url != "" {
		return postgres.Open(ctx, s.url)
	}
	if source {
		if _, err := os.Stat(s.path); err != nil {
			return nil, fmt.Errorf("%s: %w", s.path, err)
		}
	} else if err := privateDir(s.dir); err != nil {
		return nil, err
	}
	return sqlite.Open(ctx, s.path)
}

// lock takes a SQLite store's data-directory lock for the length of the command: a daemon
// running on it is found (and, unless online, refused), and none can start there meanwhile.
// PostgreSQL stores are checked by their leadership instead (transfer.Copy).
func (s storeSpec) lock(online bool, stderr io.Writer) (release func(), err error) {
	if s.url != "" {
		return func() {}, nil
	}
	if _, err := os.Stat(s.dir); errors.Is(err, os.ErrNotExist) {
		return func() {}, nil
	}
	l, err := lockDir(s.dir)
	if errors.Is(err, errLocked) {
		if !online {
			return nil, fmt.Errorf("%w: %w; or copy a snapshot as of now with --online (what the daemon writes afterwards is not copied)",
				transfer.ErrRunning, err)
		}
		fmt.Fprintf(stderr, "copying a snapshot of a running store (%v): what it writes from now on is not copied\n", err)
		return func() {}, nil
	}
	if err != nil {
		return nil, err
	}
	return l.release, nil
}

// runMigrate is `schedulerd migrate --from STORE --to STORE [--online]`: it copies every
// collection, job (status, counters, sealed secrets as sealed), unfinished execution, history
// entry and setting of one store into a new, empty one, from one consistent snapshot, then
// checks counts and checksums. Exit codes: 0 copied and verified, 1 failed, 2 bad usage.
func runMigrate(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("schedulerd migrate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	from := fs.String("from", "", "the store to copy: a SQLite file or data directory, or a postgres:// URL")
	to := fs.String("to", "", "the new, empty store to copy into: a SQLite file or data directory (created), or a postgres:// URL (its search_path schema)")
	online := fs.Bool("online", false, "copy a store a daemon is running on, as of the start of the copy (what it writes afterwards is not copied)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: schedulerd migrate --from STORE --to STORE [--online]")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if *from == "" || *to == "" || fs.NArg() > 0 {
		fmt.Fprintln(stderr, "schedulerd migrate: --from and --to are required, and nothing else")
		return 2
	}
	src, dst := parseStoreSpec(*from), parseStoreSpec(*to)
	if src == dst {
		fmt.Fprintln(stderr, "schedulerd migrate: --from and --to name the same store")
		return 2
	}
	if err := migrateStores(ctx, src, dst, *online, stdout, stderr); err != nil {
		fmt.Fprintf(stderr, "schedulerd migrate: %v\n", err)
		return 1
	}
	return 0
}

func migrateStores(ctx context.Context, src, dst storeSpec, online bool, stdout, stderr io.Writer) error {
	start := time.Now()
	releaseSrc, err := src.lock(online, stderr)
	if err != nil {
		return err
	}
	defer releaseSrc()
	releaseDst, err := dst.lock(false, stderr)
	if err != nil {
		return fmt.Errorf("target: %w", err)
	}
	defer releaseDst()
	from, err := src.open(ctx, true)
	if err != nil {
		return fmt.Errorf("source: %w", err)
	}
	defer func() { _ = from.Close() }()
	to, err := dst.open(ctx, false)
	if err != nil {
		return fmt.Errorf("target: %w", err)
	}
	defer func() { _ = to.Close() }()
	fmt.Fprintf(stdout, "copying %s into %s\n", src, dst)
	sum, err := transfer.Copy(ctx, from, to, transfer.Options{Online: online, Progress: stdout})
	if err != nil {
		return err
	}
	for _, t := range sum {
		fmt.Fprintf(stdout, "  %-11s %9d rows  sha256 %s\n", t.Name, t.Rows, t.Checksum)
	}
	fmt.Fprintf(stdout, "done in %s. Start the daemon on the target with the same secret key file (secret.key): the sealed secrets were copied sealed.\n",
		time.Since(start).Round(time.Millisecond))
	return nil
}
