package testdb

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store/postgres"
)

// EnvPostgres names the environment variable holding the PostgreSQL database the tests that
// need PostgreSQL run on (a postgres:// URL). Unset, a postgres:// EnvStore serves; with neither,
// those tests skip.
const EnvPostgres = "SCHEDULER_TEST_POSTGRES"

// PostgresURL returns the database of the PostgreSQL tests, or skips tb with a message naming
// the variable to set. A database named but not reachable fails the test that opens it: it is
// never a skip.
func PostgresURL(tb testing.TB) string {
	tb.Helper()
	if u := os.Getenv(EnvPostgres); u != "" {
		return u
	}
	if u := os.Getenv(EnvStore); isPostgres(u) {
		return u
	}
	tb.Skipf("needs PostgreSQL: set %s to a database URL (make test sets postgres://postgres@127.0.0.1:5432/test?sslmode=disable)", EnvPostgres)
	return ""
}

// PostgresSchema creates a fresh schema in the database at base (so that parallel test runs do
// not collide), drops it when tb ends, and returns base with its search_path set to it.
func PostgresSchema(tb testing.TB, base string) string {
	tb.Helper()
	ctx := context.WithoutCancel(tb.Context())
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		tb.Fatalf("postgres (%s): %v", EnvPostgres, err)
	}
	defer func() { _ = conn.Close(ctx) }()
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	schema := "test_" + hex.EncodeToString(b)
	if _, err := conn.Exec(ctx, `CREATE SCHEMA `+schema); err != nil {
		tb.Fatalf("create schema: %v", err)
	}
	tb.Cleanup(func() {
		conn, err := pgx.Connect(ctx, base)
		if err != nil {
			tb.Errorf("drop schema %s: %v", schema, err)
			return
		}
		defer func() { _ = conn.Close(ctx) }()
		if _, err := conn.Exec(ctx, `DROP SCHEMA `+schema+` CASCADE`); err != nil {
			tb.Errorf("drop schema %s: %v", schema, err)
		}
	})
	u, err := url.Parse(base)
	if err != nil {
		tb.Fatalf("postgres url: %v", err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

// Postgres opens the PostgreSQL driver on a fresh schema of the database PostgresURL names (or
// skips tb), and closes it when tb ends.
func Postgres(tb testing.TB) *postgres.Driver {
	tb.Helper()
	return openPostgres(tb, PostgresURL(tb))
}

func openPostgres(tb testing.TB, base string) *postgres.Driver {
	tb.Helper()
	d, err := postgres.Open(tb.Context(), PostgresSchema(tb, base))
	if err != nil {
		tb.Fatalf("open postgres: %v", err)
	}
	tb.Cleanup(func() { _ = d.Close() })
	return d
}
