package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store/migrate"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store/postgres"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store/sqlite"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store/testdb"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"
)

// oldDB is a database being written as the first release of a driver wrote it: its first
// migration only, schema_version 1, rows inserted with that schema's columns.
type oldDB struct {
	insert func(q string, args ...any) int64 // an INSERT ... RETURNING id ($N placeholders)
	at     func(time.Time) any               // a time as that schema stores it
	no     any                               // false as that schema stores it
}

// firstSchema returns the first migration of a driver: the oldest schema it shipped.
func firstSchema(t *testing.T, list func() ([]migrate.Migration, error)) migrate.Migration {
	t.Helper()
	ms, err := list()
	if err != nil {
		t.Fatal(err)
	}
	if ms[0].Version != 1 {
		t.Fatalf("first migration %s", ms[0].Name)
	}
	return ms[0]
}

// oldSQLite writes <data>/scheduler.db as SQLite's first schema.
func oldSQLite(t *testing.T, data string, fill func(oldDB)) {
	t.Helper()
	m := firstSchema(t, sqlite.Migrations)
	db, err := sql.Open("sqlite", "file:"+filepath.Join(data, "scheduler.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = db.Close() }()
	for _, q := range []string{`CREATE TABLE schema_version (version INTEGER NOT NULL)`, `INSERT INTO schema_version (version) VALUES (1)`, m.Body} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", m.Name, err)
		}
	}
	fill(oldDB{
		insert: func(q string, args ...any) int64 {
			var id int64
			if err := db.QueryRow(q, args...).Scan(&id); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
			return id
		},
		at: func(tm time.Time) any { return tm.UnixNano() },
		no: 0,
	})
}

// oldPostgres writes the schema of url as PostgreSQL's first schema.
func oldPostgres(t *testing.T, url string, fill func(oldDB)) {
	t.Helper()
	m := firstSchema(t, postgres.Migrations)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close(ctx) }()
	for _, q := range []string{`CREATE TABLE schema_version (version integer NOT NULL)`, `INSERT INTO schema_version (version) VALUES (1)`, m.Body} {
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", m.Name, err)
		}
	}
	fill(oldDB{
		insert: func(q string, args ...any) int64 {
			var id int64
			if err := conn.QueryRow(ctx, q, args...).Scan(&id); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
			return id
		},
		at: func(tm time.Time) any { return tm },
		no: false,
	})
}

// sameInstant reports whether an RFC 3339 time names the instant want.
func sameInstant(s string, want time.Time) bool {
	got, err := time.Parse(time.RFC3339, s)
	return err == nil && got.Equal(want)
}

// TestUpgradeFromTheFirstSchema: a database written by each driver's first schema (migration
// 0001, as the first release left it: a collection, a job due now with five executions in its
// history, a job with an execution claimed and not finished) opens with the current binary, which
// applies every later migration, keeps every job, its counters and history, fires the due job's
// occurrence as execution 6 and resumes the unfinished execution with its tag. A migration that
// breaks an old database fails here.
func TestUpgradeFromTheFirstSchema(t *testing.T) {
	for _, driver := range []string{"sqlite", "postgres"} {
		t.Run(driver, func(t *testing.T) {
			var pgURL string
			if driver == "postgres" {
				pgURL = testdb.PostgresSchema(t, testdb.PostgresURL(t))
			}
			recv, recvURL := newDeliveries(t)
			data := filepath.Join(t.TempDir(), "data")
			if err := os.MkdirAll(data, 0o700); err != nil {
				t.Fatal(err)
			}
			now := time.Now().UTC()
			// Hourly jobs: the occurrence due now is the only one within the test, whatever
			// minute boundary it crosses.
			due := now.Truncate(time.Second).Add(-2 * time.Second)
			fill := func(db oldDB) {
				coll := db.insert(`INSERT INTO collections (subscription, resource_group, name, sub_key, rg_key, name_key, location, tags,
					properties, state, created_at, updated_at, version) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13) RETURNING id`,
					"s", "rg", "c", "s", "rg", "c", "local", `{"team":"ops"}`,
					`{"sku":{"name":"Standard"},"state":"Enabled","quota":{"maxJobCount":50}}`, "Enabled", db.at(now.Add(-time.Hour)), db.at(now.Add(-time.Hour)), 1)
				job := func(name string, count int, next time.Time) int64 {
					props := fmt.Sprintf(`{"startTime":%q,"action":{"type":"Http","request":{"uri":"%s/%s","method":"POST"}},`+
						`"recurrence":{"frequency":"Hour","interval":1},"state":"Enabled"}`, due.Add(-time.Hour).Format(time.RFC3339), recvURL, name)
					return db.insert(`INSERT INTO jobs (collection_id, name, name_key, properties, state, created_at, updated_at, version,
						execution_count, last_execution_time, next_execution_time) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) RETURNING id`,
						coll, name, name, props, "Enabled", db.at(now.Add(-time.Hour)), db.at(now.Add(-time.Minute)), 2+count,
						count, db.at(next.Add(-time.Minute)), db.at(next))
				}
				due0 := job("old-0", 5, due)
				for i := 1; i <= 5; i++ {
					at := due.Add(time.Duration(i-6) * time.Minute)
					db.insert(`INSERT INTO history (job_id, execution_id, execution_tag, action_name, status, message, retry_count, repeat_count,
						expected_execution_time, start_time, end_time) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) RETURNING id`,
						due0, int64(i), fmt.Sprintf("tag-%d", i), "MainAction", "Completed", "Http Action - Response from host 'old': 'OK'", 0, i,
						db.at(at), db.at(at.Add(time.Second)), db.at(at.Add(2*time.Second)))
				}
				old1 := job("old-1", 3, due.AddDate(0, 1, 0))
				db.insert(`INSERT INTO executions (job_id, tag, scheduled, repeat_count, missed, manual, phase, attempt, due_at, claimed_at)
					VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING id`,
					old1, "old-tag", db.at(due.Add(-2*time.Minute)), 3, 0, db.no, "MainAction", 0, db.at(now), db.at(now.Add(-time.Second)))
			}
			flags := []string{"--misfire-threshold", "10m"}
			if driver == "sqlite" {
				oldSQLite(t, data, fill)
			} else {
				oldPostgres(t, pgURL, fill)
				flags = append(flags, "--store", pgURL)
			}

			d, _ := startOn(t, data, flags...)
			byJob := recv.waitRegion(t, "local", 2, 2*time.Minute)
			if got := byJob["old-0"]; len(got) != 1 || !sameInstant(got[0].expected, due) {
				t.Errorf("old-0's requests %+v, want one for its occurrence %s", got, due.Format(time.RFC3339))
			}
			if got := byJob["old-1"]; len(got) != 1 || got[0].tag != "old-tag" {
				t.Errorf("old-1's requests %+v, want its unfinished execution resumed with tag old-tag", got)
			}
			hist := d.history("old-0", 6)
			if len(hist) != 6 || !sameInstant(hist[0].Properties.ExpectedExecutionTime, due.Add(-5*time.Minute)) ||
				hist[5].Properties.RepeatCount != 6 || hist[5].Properties.Status != "Completed" {
				t.Errorf("old-0's history after the upgrade: %d entries, first %+v, last %+v", len(hist), hist[0].Properties, hist[len(hist)-1].Properties)
			}
			if h1 := d.history("old-1", 1); h1[0].Properties.RepeatCount != 3 {
				t.Errorf("old-1's resumed execution recorded as %+v, want repeat count 3", h1[0].Properties)
			}
			var j wire.JobDefinition
			if err := json.Unmarshal([]byte(d.call(http.MethodGet, probeCollection+"/jobs/old-0", "", http.StatusOK)), &j); err != nil {
				t.Fatal(err)
			}
			if s := j.Properties.Status; s == nil || s.ExecutionCount == nil || *s.ExecutionCount != 6 {
				t.Errorf("old-0's status after its occurrence: %+v, want executionCount 6", s)
			}
			// The quota counts the two jobs the old database held (migration 0003 counted them on
			// SQLite): 48 more fit, the 49th does not.
			for i := range 48 {
				d.call(http.MethodPut, fmt.Sprintf("%s/jobs/new-%d", probeCollection, i), `{"properties":{"action":{"type":"Http","request":{"uri":"http://127.0.0.1:1/","method":"GET"}},"state":"Disabled"}}`, http.StatusCreated)
			}
			d.call(http.MethodPut, probeCollection+"/jobs/one-too-many", `{"properties":{"action":{"type":"Http","request":{"uri":"http://127.0.0.1:1/","method":"GET"}},"state":"Disabled"}}`, http.StatusConflict)
		})
	}
}
