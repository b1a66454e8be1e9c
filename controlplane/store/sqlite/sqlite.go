// Package sqlite is the embedded store: one SQLite file (modernc.org/sqlite, pure Go) in WAL mode.
//
// Writes go through one connection (SQLite serializes writers anyway, and one connection avoids
// SQLITE_BUSY between our own writers); reads use a small pool of read-only connections, which
// WAL lets run beside the writer. Transactions start IMMEDIATE so a writer never has to upgrade
// a read lock.
//
// Durability: the database runs with synchronous=NORMAL in WAL mode. A committed transaction is
// in the WAL file once Commit returns, so it survives the process being killed (SIGKILL, panic,
// OOM); only a power loss or OS crash can lose the last transactions before a checkpoint. The
// daemon's promise (at-least-once delivery) is about process crashes, so NORMAL is durable
// enough and several times faster than FULL.
//
// The schema is versioned: migrations are embedded SQL files applied in order, each in its own
// transaction, and the schema_version table records the last one applied, so a newer binary
// upgrades an older file and an older binary refuses a newer file.
package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store/groupcommit"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store/migrate"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store/sqlstore"

	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver
)

//go:embed migration/*.sql
var migrations embed.FS

// readers is the size of the read-only connection pool.
const readers = 4

// Page cache and checkpoints. SQLite's default page cache is 2 MB per connection: with 100,000
// jobs (about 60 MB of pages) nearly every scattered job update missed it and read its page
// again with a syscall. The writer gets writerCacheKiB, each reader readerCacheKiB (SQLite
// allocates cache pages as it uses them, so a small database stays small). In the process a
// full cache takes about twice its size, outside Go's heap: SQLite allocates each 4 KiB page
// with its header (a little over 4 KiB), and the allocator under modernc's SQLite rounds that
// up to an 8 KiB slot (after 200,000 job PUTs: 183 MB in 23,000 allocations). So the writer's
// cache can take about 256 MB and each reader's 32 MB: about 380 MB of a large store's
// resident set (260-290 MB right after a million job PUTs).
//
// The WAL is checkpointed into the database file when it reaches checkpointPages pages (SQLite's
// default is 1,000, 4 MB). A checkpoint copies each page once however often it was written since
// the previous one, and the dispatcher rewrites the same job pages every cycle of a schedule, so a
// larger WAL (up to 64 MB here) copies fewer pages in all.
//
// What the writer's cache costs besides memory: when a B-tree balance reorders sibling pages it
// parks one under the lock page's number (page 262,145 at 4 KiB pages, past the end of any file
// under 1 GiB), and the commit that follows drops pages past the file's end by walking the
// cache's whole hash table (pcache1TruncateUnsafe), a walk as long as the pages cached. At
// 100,000 jobs that is 300-400 walks per 100,000 fires, 0.4-1.7 ms each with the whole file
// cached (10,000-15,500 pages), 1-3 µs per fire; caches of 16-64 MB shorten the walk but miss
// more, and measured no lower CPU per fire (schedbench's RESULTS.md, "The writer's page cache").
const (
	writerCacheKiB  = 128 << 10
	readerCacheKiB  = 16 << 10
	checkpointPages = 16000
)

// Driver is a store.Driver on one SQLite file.
type Driver struct {
	w     *sql.DB // one writer connection
	r     *sql.DB // read-only pool
	stmts map[string]*sql.Stmt
	// chunks are the multi-row statements by kind, one per chunk size (chunkedStatements).
	chunks map[string][]*sql.Stmt
	crud   crudStatements
	puts   groupcommit.Queue[*sqlstore.PutRequest] // JobPut's group commit (each batch one transaction, maxPutBatch)
	path   string
}

var _ store.Driver = (*Driver)(nil)

// Open opens (creating when absent) the database file at path and brings its schema up to date.
// The file, its WAL and its shared-memory file are mode 0600 whatever the umask or the mode an
// existing file had (SQLite gives the WAL and -shm files the database file's mode). A file that
// cannot be opened for writing (read-only, immutable, on a read-only mount) is refused here.
func Open(ctx context.Context, path string) (*Driver, error) {
	if err := private(path); err != nil {
		return nil, err
	}
	common := url.Values{}
	common.Add("_pragma", "busy_timeout(10000)")
	common.Add("_pragma", "journal_mode(WAL)")
	common.Add("_pragma", "synchronous(NORMAL)")
	common.Add("_pragma", "foreign_keys(1)")
	common.Add("_pragma", "cache_size(-"+strconv.Itoa(writerCacheKiB)+")")
	common.Add("_pragma", "wal_autocheckpoint("+strconv.Itoa(checkpointPages)+")")
	// The writer's statement journals stay in memory: a multi-row statement (64 claimed jobs'
	// scattered pages) journals more than SQLite's 64 KiB, past which the journal spilled to a
	// temporary file created, written and deleted for that statement (3.5 % of the daemon's CPU
	// at 20,000 fires/s). A statement journal holds at most the pages one statement changes and
	// is freed at its end.
	common.Add("_pragma", "temp_store(MEMORY)")
	common.Set("_txlock", "immediate")
	w, err := sql.Open("sqlite", "file:"+path+"?"+common.Encode())
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	w.SetConnMaxLifetime(0)
	d := &Driver{w: w, path: path}
	d.puts.Max = maxPutBatch
	if err := d.migrate(ctx); err != nil {
		_ = w.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	if err := d.prepare(ctx); err != nil {
		_ = w.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	ro := url.Values{}
	ro.Add("_pragma", "busy_timeout(10000)")
	ro.Add("_pragma", "foreign_keys(1)")
	ro.Add("_pragma", "query_only(1)")
	ro.Add("_pragma", "cache_size(-"+strconv.Itoa(readerCacheKiB)+")")
	r, err := sql.Open("sqlite", "file:"+path+"?"+ro.Encode())
	if err != nil {
		_ = w.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	r.SetMaxOpenConns(readers)
	r.SetMaxIdleConns(readers)
	d.r = r
	if err := d.prepareCRUD(ctx, w, r); err != nil {
		_ = d.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	return d, nil
}

// private creates the database file when absent and makes it and its WAL and -shm files, when
// present, mode 0600. It opens the database file for writing, so a read-only one is refused with
// an error naming it.
func private(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("open %s for writing: %w", path, err)
	}
	err = f.Chmod(0o600)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("database file %s: %w", path, err)
	}
	for _, side := range []string{path + "-wal", path + "-shm"} {
		if err := os.Chmod(side, 0o600); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("database file %s: %w", side, err)
		}
	}
	return nil
}

// Describe names the store for people: "SQLite file PATH".
func (d *Driver) Describe() string { return "SQLite file " + d.path }

// Close closes the database.
func (d *Driver) Close() error {
	errs := []error{d.crud.close(), d.r.Close()}
	for _, s := range d.stmts {
		errs = append(errs, s.Close())
	}
	for _, ss := range d.chunks {
		for _, s := range ss {
			errs = append(errs, s.Close())
		}
	}
	return errors.Join(append(errs, d.w.Close())...)
}

// SchemaVersion returns the version of the last migration applied.
func (d *Driver) SchemaVersion(ctx context.Context) (int, error) {
	var v int
	if err := d.w.QueryRowContext(ctx, sqlstore.SchemaVersionGet).Scan(&v); err != nil {
		return 0, fmt.Errorf("schema version: %w", err)
	}
	return v, nil
}

// Migrations returns the driver's schema history, in order: the upgrade tests build a database as
// an older release left it from the first of them.
func Migrations() ([]migrate.Migration, error) { return migrate.List(migrations, "migration") }

func (d *Driver) migrate(ctx context.Context) error {
	ms, err := migrate.List(migrations, "migration")
	if err != nil {
		return err
	}

	if _, err := d.w.ExecContext(ctx, sqlstore.SchemaVersionCreate); err != nil {
		return fmt.Errorf("schema_version: %w", err)
	}
	current := 0
	switch err := d.w.QueryRowContext(ctx, sqlstore.SchemaVersionGet).Scan(&current); {
	case errors.Is(err, sql.ErrNoRows):
		if _, err := d.w.ExecContext(ctx, sqlstore.SchemaVersionInit); err != nil {
			return fmt.Errorf("schema_version: %w", err)
		}
	case err != nil:
		return fmt.Errorf("schema_version: %w", err)
	}
	if len(ms) > 0 && current > ms[len(ms)-1].Version {
		return fmt.Errorf("database schema version %d is newer than this binary's %d", current, ms[len(ms)-1].Version)
	}
	for _, m := range ms {
		if m.Version <= current {
			continue
		}
		err = d.tx(ctx, func(tx *sql.Tx) error {
			if _, err := tx.ExecContext(ctx, m.Body); err != nil {
				return err
			}
			_, err := tx.ExecContext(ctx, sqlstore.SchemaVersionSet, m.Version)
			return err
		})
		if err != nil {
			return fmt.Errorf("migration %s: %w", m.Name, err)
		}
	}
	return nil
}

// tx runs fn in a write transaction, committing when it returns nil.
func (d *Driver) tx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	tx, err := d.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// nanos stores a time: Unix nanoseconds, 0 for the zero time.
func nanos(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

// fromNanos reads a stored time back (in UTC).
func fromNanos(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n).UTC()
}

// limit maps "0: no limit" to SQLite's -1.
func limit(n int) int {
	if n <= 0 {
		return -1
	}
	return n
}

// key is the stored, compared form of a name (store.NameKey); also of the state and status
// filters, whose values are ASCII.
func key(s string) string { return store.NameKey(s) }

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
