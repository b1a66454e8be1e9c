package postgres_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store/testdb"
)

// TestTriggersRunOncePerStatement: a statement that creates jobs in two collections updates each
// collection's row once (not once per job) and counts them all, a statement that deletes them
// too, and a statement that inserts three changes runs its notifying trigger once and notifies
// all three in order.
func TestTriggersRunOncePerStatement(t *testing.T) {
	ctx := t.Context()
	d := testdb.Postgres(t)
	conn, err := d.Pool().Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	exec := func(sql string, args ...any) {
		t.Helper()
		if _, err := conn.Exec(ctx, sql, args...); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	query := func(sql string, dest ...any) {
		t.Helper()
		if err := conn.QueryRow(ctx, sql).Scan(dest...); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	exec(`INSERT INTO collections (subscription, resource_group, name, sub_key, rg_key, name_key, location, tags, properties,
		state, created_at, updated_at, version) SELECT 's', 'rg', n, 's', 'rg', n, 'l', '{}', '{}', 'Enabled', now(), now(), 1
		FROM unnest(ARRAY['a', 'b']) n`)
	// Counted in this transaction only (pg_stat_get_xact_*): the rows of collections updated.
	updates := func() int64 {
		var n int64
		query(`SELECT pg_stat_get_xact_tuples_updated('collections'::regclass)`, &n)
		return n
	}
	counts := func() string {
		var s string
		query(`SELECT string_agg(name || '=' || job_count, ' ' ORDER BY name) FROM collections`, &s)
		return s
	}

	exec(`BEGIN`)
	defer func() { _, _ = conn.Exec(context.WithoutCancel(ctx), `ROLLBACK`) }()
	exec(`INSERT INTO jobs (collection_id, name, name_key, properties, state, created_at, updated_at, version)
		SELECT c.id, j, j, '{}', 'Enabled', now(), now(), 1 FROM collections c, unnest(ARRAY['j1', 'j2', 'j3']) j
		WHERE c.name_key = 'a' OR j <> 'j3'`)
	equal(t, "collection rows updated by a statement creating 5 jobs", updates(), 2)
	equal(t, "counts after the creates", counts(), "a=3 b=2")
	exec(`DELETE FROM jobs WHERE name_key <> 'j1'`)
	equal(t, "collection rows updated by both statements", updates(), 4)
	equal(t, "counts after the deletes", counts(), "a=1 b=1")
	exec(`COMMIT`)

	exec(`SET track_functions = 'all'`)
	var channel string
	query(`SELECT 'scheduler_' || current_schema()`, &channel)
	exec(`LISTEN ` + pgx.Identifier{channel}.Sanitize())
	exec(`BEGIN`)
	exec(`INSERT INTO changes (kind, id, origin) SELECT 'job', i, 'test' FROM generate_series(1, 3) i`)
	var calls int64
	query(`SELECT coalesce(sum(pg_stat_get_xact_function_calls(tgfoid)), 0)::bigint FROM pg_trigger
		WHERE tgrelid = 'changes'::regclass AND NOT tgisinternal`, &calls)
	equal(t, "trigger calls for a statement inserting 3 changes", calls, 1)
	var first int64
	query(`SELECT min(seq) FROM changes`, &first)
	exec(`COMMIT`)
	var got []string
	for range 3 {
		n, err := conn.Conn().WaitForNotification(ctx)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, n.Payload)
	}
	equal(t, "notified", got, []string{
		fmt.Sprintf("job:1:%d:test", first), fmt.Sprintf("job:2:%d:test", first+1), fmt.Sprintf("job:3:%d:test", first+2)})
}
