package store

import (
	"context"
	"fmt"
	"time"
)

// A store is moved to another driver (schedulerd migrate) and backed up table by table, each
// row in a form both drivers read and write: the columns of DumpTables, each value an int64, a
// string, a bool or a time.Time (the zero time standing for "none", which PostgreSQL keeps as NULL
// and SQLite as 0). Identifiers are kept, so that executions and history stay with their jobs and
// jobs with their collections; sealed secrets are copied as they are stored (still sealed, bound
// to the job's canonical id, opened by the same key).

// ColumnKind is the type of a dumped column's values.
type ColumnKind int

// Column kinds.
const (
	KindInt  ColumnKind = iota // int64
	KindText                   // string
	KindBool                   // bool
	KindTime                   // time.Time; zero: none
)

// DumpColumn is one copied column.
type DumpColumn struct {
	Name string
	Kind ColumnKind
}

// DumpTable is one copied table: its rows are read in the order of Key (unique), its Columns
// copied, and the columns in Derived left to the target (each with the reason).
type DumpTable struct {
	Name    string
	Key     string
	Columns []DumpColumn
	Derived map[string]string
}

// NotDumped names the tables a move or a dump leaves behind, each with the reason. Every table
// of a driver's schema is either in DumpTables or here: each driver has a test that fails when
// a table (or a column) is in neither, so that a migration adding one must say whether it moves.
func NotDumped() map[string]string {
	return map[string]string{
		"schema_version":  "the target's own migrations set it",
		"leader":          "the leadership belongs to the processes running on a store; the target's first daemon is elected",
		"changes":         "PostgreSQL's change feed tells running replicas what changed; replicas starting on the target load every job anyway",
		"sqlite_sequence": "SQLite's own: kept by AUTOINCREMENT as rows with their ids are inserted",
	}
}

// DumpTables is every table copied, in the order they are loaded (a row's references first).
func DumpTables() []DumpTable {
	return []DumpTable{
		{
			Name: "collections", Key: "id",
			Columns: []DumpColumn{
				{"id", KindInt}, {"subscription", KindText}, {"resource_group", KindText}, {"name", KindText},
				{"sub_key", KindText}, {"rg_key", KindText}, {"name_key", KindText}, {"location", KindText},
				{"tags", KindText}, {"properties", KindText}, {"state", KindText},
				{"created_at", KindTime}, {"updated_at", KindTime}, {"version", KindInt},
			},
			Derived: map[string]string{"job_count": "counted by the target's triggers as the jobs are loaded"},
		},
		{
			Name: "jobs", Key: "id",
			Columns: []DumpColumn{
				{"id", KindInt}, {"collection_id", KindInt}, {"name", KindText}, {"name_key", KindText},
				{"properties", KindText}, {"state", KindText}, {"created_at", KindTime}, {"updated_at", KindTime},
				{"version", KindInt}, {"execution_count", KindInt}, {"failure_count", KindInt},
				{"faulted_count", KindInt}, {"consecutive_faults", KindInt}, {"last_execution_time", KindTime},
				{"next_execution_time", KindTime}, {"final_at", KindTime},
			},
		},
		{
			Name: "executions", Key: "id",
			Columns: []DumpColumn{
				{"id", KindInt}, {"job_id", KindInt}, {"tag", KindText}, {"scheduled", KindTime},
				{"repeat_count", KindInt}, {"missed", KindInt}, {"manual", KindBool}, {"phase", KindText},
				{"attempt", KindInt}, {"due_at", KindTime}, {"claimed_at", KindTime},
				{"backfill", KindBool},
			},
			Derived: map[string]string{
				"owner":       "a lease is a running replica's: every execution arrives unowned, and a daemon on the target runs it again (at least once)",
				"lease_until": "as owner",
			},
		},
		{
			Name: "history", Key: "id",
			Columns: []DumpColumn{
				{"id", KindInt}, {"job_id", KindInt}, {"execution_id", KindInt}, {"execution_tag", KindText},
				{"action_name", KindText}, {"status", KindText}, {"message", KindText}, {"retry_count", KindInt},
				{"repeat_count", KindInt}, {"expected_execution_time", KindTime}, {"start_time", KindTime},
				{"end_time", KindTime},
			},
		},
		{
			Name: "meta", Key: "name",
			Columns: []DumpColumn{{"name", KindText}, {"value", KindText}},
		},
	}
}

// DumpRow is one row: a value per column of its table, in the table's order.
type DumpRow []any

// Check returns an error naming the first column of t whose value in r is not of its kind (or
// a row of the wrong length): what reads or loads rows checks them once, then converts them.
func (r DumpRow) Check(t DumpTable) error {
	if len(r) != len(t.Columns) {
		return fmt.Errorf("%s: a row of %d values for %d columns", t.Name, len(r), len(t.Columns))
	}
	for i, c := range t.Columns {
		var ok bool
		switch c.Kind {
		case KindInt:
			_, ok = r[i].(int64)
		case KindText:
			_, ok = r[i].(string)
		case KindBool:
			_, ok = r[i].(bool)
		case KindTime:
			_, ok = r[i].(time.Time)
		}
		if !ok {
			return fmt.Errorf("%s.%s: a value of type %T", t.Name, c.Name, r[i])
		}
	}
	return nil
}

// DumpReader reads a store as of one instant: every call sees the same committed state.
type DumpReader interface {
	// Count returns the number of rows of a table.
	Count(ctx context.Context, table DumpTable) (int64, error)
	// Rows calls fn with each row of a table in the order of its key, until fn returns an error.
	Rows(ctx context.Context, table DumpTable, fn func(DumpRow) error) error
	// Leader returns the replica holding the leadership and whether its lease is still running
	// by the database's clock ("" and false when nobody ever led).
	Leader(ctx context.Context) (replica string, alive bool, err error)
}

// Dumper is implemented by every driver: it reads itself consistently, lists its schema, and
// loads rows into an empty store of its own.
type Dumper interface {
	// Dump calls fn with a reader of one consistent snapshot of the store (a read-only
	// transaction: SQLite's WAL snapshot, PostgreSQL's REPEATABLE READ), which writers running
	// meanwhile do not change.
	Dump(ctx context.Context, fn func(DumpReader) error) error
	// Schema returns every table of the store's schema with its columns.
	Schema(ctx context.Context) (map[string][]string, error)
	// Load inserts rows of a table, keeping their values (ids included), in one transaction.
	Load(ctx context.Context, table DumpTable, rows []DumpRow) error
	// LoadBatch is how many rows a Load call takes best.
	LoadBatch() int
	// LoadDone ends a load: identity counters continue after the ids loaded.
	LoadDone(ctx context.Context) error
}
