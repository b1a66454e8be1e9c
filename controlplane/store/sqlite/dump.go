package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
)

var _ store.Dumper = (*Driver)(nil)

// Dump reads the store in one read transaction on a read-only connection: in WAL mode it sees
// the database as of its first read, whatever the writer commits meanwhile.
func (d *Driver) Dump(ctx context.Context, fn func(store.DumpReader) error) error {
	conn, err := d.r.Conn(ctx)
	if err != nil {
		return fmt.Errorf("dump: %w", err)
	}
	defer func() { _ = conn.Close() }()
	tx, err := conn.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return fmt.Errorf("dump: begin: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	// The snapshot starts at the transaction's first read: take it now.
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM schema_version`).Scan(&n); err != nil {
		return fmt.Errorf("dump: %w", err)
	}
	return fn(dumpReader{tx: tx})
}

// dumpReader reads through the one transaction of a dump.
type dumpReader struct {
	tx interface {
		QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
		QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	}
}

func (r dumpReader) Count(ctx context.Context, t store.DumpTable) (int64, error) {
	var n int64
	if err := r.tx.QueryRowContext(ctx, `SELECT count(*) FROM `+t.Name).Scan(&n); err != nil {
		return 0, fmt.Errorf("dump: count %s: %w", t.Name, err)
	}
	return n, nil
}

func (r dumpReader) Rows(ctx context.Context, t store.DumpTable, fn func(store.DumpRow) error) error {
	names := make([]string, len(t.Columns))
	for i, c := range t.Columns {
		names[i] = c.Name
	}
	rows, err := r.tx.QueryContext(ctx, `SELECT `+strings.Join(names, ", ")+` FROM `+t.Name+` ORDER BY `+t.Key)
	if err != nil {
		return fmt.Errorf("dump: %s: %w", t.Name, err)
	}
	defer func() { _ = rows.Close() }()
	ints := make([]int64, len(t.Columns))
	texts := make([]string, len(t.Columns))
	dest := make([]any, len(t.Columns))
	for i, c := range t.Columns {
		if c.Kind == store.KindText {
			dest[i] = &texts[i]
		} else {
			dest[i] = &ints[i]
		}
	}
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return fmt.Errorf("dump: %s: %w", t.Name, err)
		}
		row := make(store.DumpRow, len(t.Columns))
		for i, c := range t.Columns {
			switch c.Kind {
			case store.KindText:
				row[i] = texts[i]
			case store.KindBool:
				row[i] = ints[i] != 0
			case store.KindTime:
				row[i] = fromNanos(ints[i])
			default:
				row[i] = ints[i]
			}
		}
		if err := fn(row); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("dump: %s: %w", t.Name, err)
	}
	return nil
}

func (r dumpReader) Leader(ctx context.Context) (string, bool, error) {
	var replica string
	var expires int64
	err := r.tx.QueryRowContext(ctx, `SELECT replica, expires_at FROM leader WHERE name = ?`, leaderName).Scan(&replica, &expires)
	if err == sql.ErrNoRows {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("dump: leader: %w", err)
	}
	return replica, expires > time.Now().UnixNano(), nil
}

// Schema returns every table of the file with its columns.
func (d *Driver) Schema(ctx context.Context) (map[string][]string, error) {
	rows, err := d.r.QueryContext(ctx, `SELECT m.name, p.name FROM sqlite_master m, pragma_table_info(m.name) p
		WHERE m.type = 'table' ORDER BY m.name, p.cid`)
	if err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	defer func() { _ = rows.Close() }()
	out := map[string][]string{}
	for rows.Next() {
		var table, column string
		if err := rows.Scan(&table, &column); err != nil {
			return nil, fmt.Errorf("schema: %w", err)
		}
		out[table] = append(out[table], column)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	return out, nil
}

// Load inserts rows in one write transaction. Ids are kept; AUTOINCREMENT continues after the
// largest.
func (d *Driver) Load(ctx context.Context, t store.DumpTable, rows []store.DumpRow) error {
	names := make([]string, len(t.Columns))
	for i, c := range t.Columns {
		names[i] = c.Name
	}
	q := `INSERT INTO ` + t.Name + ` (` + strings.Join(names, ", ") + `) VALUES (?` + strings.Repeat(", ?", len(names)-1) + `)`
	err := d.tx(ctx, func(tx *sql.Tx) error {
		st, err := tx.PrepareContext(ctx, q)
		if err != nil {
			return err
		}
		defer func() { _ = st.Close() }()
		args := make([]any, len(t.Columns))
		for _, row := range rows {
			if err := row.Check(t); err != nil {
				return err
			}
			for i, c := range t.Columns {
				switch c.Kind {
				case store.KindBool:
					b, _ := row[i].(bool)
					args[i] = boolInt(b)
				case store.KindTime:
					tm, _ := row[i].(time.Time)
					args[i] = nanos(tm)
				default:
					args[i] = row[i]
				}
			}
			if _, err := st.ExecContext(ctx, args...); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("load %s: %w", t.Name, err)
	}
	return nil
}

// LoadBatch: 5,000 rows per write transaction (SQLite's cost is per transaction).
func (d *Driver) LoadBatch() int { return 5000 }

// LoadDone has nothing to do: AUTOINCREMENT counted the ids inserted.
func (d *Driver) LoadDone(context.Context) error { return nil }
