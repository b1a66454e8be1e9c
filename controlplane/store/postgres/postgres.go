// Package postgres is the store for several replicas: one PostgreSQL database shared by every
// schedulerd process (pgx v5 and its pool, no database/sql).
//
// The schema is versioned like SQLite's: migrations are embedded SQL files applied in order at
// Open, each in its own transaction, under a session advisory lock, so replicas starting together
// do not race; schema_version records the last one applied and an older binary refuses a newer
// database. The database's search_path chooses the schema (a "search_path" parameter in the URL
// is passed to the server), so several deployments or test runs can share one database.
//
// Times are timestamptz: microseconds. A batch of claims or attempt records is one statement
// (arrays unnested server-side), one round trip, whatever its size.
package postgres

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store/groupcommit"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store/migrate"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store/sqlstore"
)

//go:embed migration/*.sql
var migrations embed.FS

// Driver is a store.Driver on a PostgreSQL database.
type Driver struct {
	pool    *pgxpool.Pool
	channel string                                  // the NOTIFY channel of this schema
	origin  string                                  // stamped on the changes written through the driver (changes.go)
	puts    groupcommit.Queue[*sqlstore.PutRequest] // job writes that may create, committed in groups (jobput.go)
}

var (
	_ store.Driver     = (*Driver)(nil)
	_ store.Notifier   = (*Driver)(nil)
	_ store.ChangeFeed = (*Driver)(nil)
)

// IsURL reports whether s is a PostgreSQL connection URL (postgres:// or postgresql://).
func IsURL(s string) bool {
	return strings.HasPrefix(s, "postgres://") || strings.HasPrefix(s, "postgresql://")
}

// Open connects to the database at url (postgres://...) and brings its schema up to date.
func Open(ctx context.Context, url string) (*Driver, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	if cfg.MaxConns < 8 {
		cfg.MaxConns = 8
	}
	return OpenConfig(ctx, cfg)
}

// OpenConfig is Open with a pool configuration already parsed (a test sets a tracer on it).
func OpenConfig(ctx context.Context, cfg *pgxpool.Config) (*Driver, error) {
	if cfg.ConnConfig.RuntimeParams["application_name"] == "" {
		cfg.ConnConfig.RuntimeParams["application_name"] = "schedulerd"
	}
	// Every statement is prepared once per connection (pgx's statement cache) and then planned
	// once: with the default (auto), PostgreSQL plans many of these statements again at every
	// execution (their "$n = 0 OR ..." conditions make a custom plan look cheaper), which cost
	// about a third of a job write's time on the server. The generic plans are the ones wanted
	// anyway: index lookups by key, arrays of unknown length unnested. A URL's own setting wins.
	if cfg.ConnConfig.RuntimeParams["plan_cache_mode"] == "" {
		cfg.ConnConfig.RuntimeParams["plan_cache_mode"] = "force_generic_plan"
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	d := &Driver{pool: pool, origin: newOrigin()}
	d.puts.Max = maxPutGroup
	if err := d.migrate(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("postgres: %w", err)
	}
	var schema string
	if err := pool.QueryRow(ctx, `SELECT current_schema()`).Scan(&schema); err != nil {
		pool.Close()
		return nil, fmt.Errorf("postgres: %w", err)
	}
	d.channel = "scheduler_" + schema
	return d, nil
}

// Describe names the store for people: the database, its server and the schema, never the
// user or a password.
func (d *Driver) Describe() string {
	c := d.pool.Config().ConnConfig
	return fmt.Sprintf("PostgreSQL database %s on %s:%d, schema %s", c.Database, c.Host, c.Port, strings.TrimPrefix(d.channel, "scheduler_"))
}

// Close closes the pool.
func (d *Driver) Close() error {
	d.pool.Close()
	return nil
}

// Pool returns the driver's pool (tests and tools).
func (d *Driver) Pool() *pgxpool.Pool { return d.pool }

// SchemaVersion returns the version of the last migration applied.
func (d *Driver) SchemaVersion(ctx context.Context) (int, error) {
	var v int
	if err := d.pool.QueryRow(ctx, sqlstore.SchemaVersionGet).Scan(&v); err != nil {
		return 0, fmt.Errorf("schema version: %w", err)
	}
	return v, nil
}

// Migrations returns the driver's schema history, in order: the upgrade tests build a database as
// an older release left it from the first of them.
func Migrations() ([]migrate.Migration, error) { return migrate.List(migrations, "migration") }

// migrate applies the migrations not applied yet, holding a session advisory lock (keyed by the
// schema) so that replicas starting together apply each once.
func (d *Driver) migrate(ctx context.Context) error {
	ms, err := migrate.List(migrations, "migration")
	if err != nil {
		return err
	}

	conn, err := d.pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock(hashtext('schedulerd.migrate.' || current_schema()))`); err != nil {
		return fmt.Errorf("migrate: lock: %w", err)
	}
	defer func() {
		// A failed unlock leaves the session holding the lock: drop the connection.
		if _, err := conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock(hashtext('schedulerd.migrate.' || current_schema()))`); err != nil {
			_ = conn.Conn().Close(context.WithoutCancel(ctx))
		}
	}()
	if _, err := conn.Exec(ctx, sqlstore.SchemaVersionCreate); err != nil {
		return fmt.Errorf("schema_version: %w", err)
	}
	current := 0
	switch err := conn.QueryRow(ctx, sqlstore.SchemaVersionGet).Scan(&current); {
	case errors.Is(err, pgx.ErrNoRows):
		if _, err := conn.Exec(ctx, sqlstore.SchemaVersionInit); err != nil {
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
		err = pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, m.Body); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, sqlstore.SchemaVersionSet, m.Version)
			return err
		})
		if err != nil {
			return fmt.Errorf("migration %s: %w", m.Name, err)
		}
	}
	return nil
}

// tx runs fn in a transaction, committing when it returns nil.
func (d *Driver) tx(ctx context.Context, fn func(tx pgx.Tx) error) error {
	return pgx.BeginFunc(ctx, d.pool, fn)
}

// ts stores a time: nil (NULL) for the zero time.
func ts(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

// fromTS reads a stored time back (in UTC; NULL: the zero time).
func fromTS(t *time.Time) time.Time {
	if t == nil {
		return time.Time{}
	}
	return t.UTC()
}

// limit maps "0: no limit" to NULL (LIMIT NULL is no limit).
func limit(n int) *int {
	if n <= 0 {
		return nil
	}
	return &n
}

// key is the stored, compared form of a name (store.NameKey).
func key(s string) string { return store.NameKey(s) }

// isUnique reports whether err is a unique violation.
func isUnique(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "23505"
}
