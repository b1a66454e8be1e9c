package storetest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store/postgres"
)

// DefaultPostgres is the database the PostgreSQL tests use when EnvPostgres is unset: the
// machine's PostgreSQL (tools/postgres.sh makes sure it runs).
const DefaultPostgres = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"

// EnvPostgres overrides DefaultPostgres for the PostgreSQL driver's own tests.
const EnvPostgres = "SCHEDULER_TEST_POSTGRES"

// PostgresURL is the database the PostgreSQL driver's tests run on.
func PostgresURL() string {
	if u := os.Getenv(EnvPostgres); u != "" {
		return u
	}
	return DefaultPostgres
}

// PostgresSchema creates a fresh schema in the database at base (so that parallel test runs do
// not collide), drops it when tb ends, and returns base with its search_path set to it.
func PostgresSchema(tb testing.TB, base string) string {
	tb.Helper()
	ctx := context.WithoutCancel(tb.Context())
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		tb.Fatalf("postgres %s: %v", base, err)
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

// OpenPostgres opens the PostgreSQL driver on a fresh schema of the database at base.
func OpenPostgres(tb testing.TB, base string) *postgres.Driver {
	tb.Helper()
	u := PostgresSchema(tb, base)
	d, err := postgres.Open(tb.Context(), u)
	if err != nil {
		tb.Fatalf("open postgres: %v", err)
	}
	tb.Cleanup(func() { _ = d.Close() })
	return d
}

func openPostgres(tb testing.TB, base string) store.Driver { return OpenPostgres(tb, base) }
