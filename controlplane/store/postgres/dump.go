package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
)

var _ store.Dumper = (*Driver)(nil)

// Dump reads the store in one REPEATABLE READ, READ ONLY transaction: every statement sees the
// snapshot taken by its first, whatever replicas commit meanwhile.
func (d *Driver) Dump(ctx context.Context, fn func(store.DumpReader) error) error {
	tx, err := d.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return fmt.Errorf("dump: begin: %w", err)
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	var n int
	if err := tx.QueryRow(ctx, `SELECT count(*) FROM schema_version`).Scan(&n); err != nil {
		return fmt.Errorf("dump: %w", err)
	}
	return fn(dumpReader{tx: tx})
}

type dumpReader struct{ tx pgx.Tx }

func (r dumpReader) Count(ctx context.Context, t store.DumpTable) (int64, error) {
	var n int64
	if err := r.tx.QueryRow(ctx, `SELECT count(*) FROM `+pgx.Identifier{t.Name}.Sanitize()).Scan(&n); err != nil {
		return 0, fmt.Errorf("dump: count %s: %w", t.Name, err)
	}
	return n, nil
}

func columnList(t store.DumpTable) []string {
	names := make([]string, len(t.Columns))
	for i, c := range t.Columns {
		names[i] = pgx.Identifier{c.Name}.Sanitize()
	}
	return names
}

func (r dumpReader) Rows(ctx context.Context, t store.DumpTable, fn func(store.DumpRow) error) error {
	rows, err := r.tx.Query(ctx, `SELECT `+strings.Join(columnList(t), ", ")+` FROM `+pgx.Identifier{t.Name}.Sanitize()+
		` ORDER BY `+pgx.Identifier{t.Key}.Sanitize())
	if err != nil {
		return fmt.Errorf("dump: %s: %w", t.Name, err)
	}
	defer rows.Close()
	ints := make([]int64, len(t.Columns))
	texts := make([]string, len(t.Columns))
	bools := make([]bool, len(t.Columns))
	times := make([]*time.Time, len(t.Columns))
	dest := make([]any, len(t.Columns))
	for i, c := range t.Columns {
		switch c.Kind {
		case store.KindText:
			dest[i] = &texts[i]
		case store.KindBool:
			dest[i] = &bools[i]
		case store.KindTime:
			dest[i] = &times[i]
		default:
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
				row[i] = bools[i]
			case store.KindTime:
				row[i] = fromTS(times[i])
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
	var alive bool
	err := r.tx.QueryRow(ctx, `SELECT replica, expires_at > now() FROM leader WHERE name = $1`, leaderName).Scan(&replica, &alive)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("dump: leader: %w", err)
	}
	return replica, alive, nil
}

// Schema returns every table of the store's schema (the search_path's first) with its columns.
func (d *Driver) Schema(ctx context.Context) (map[string][]string, error) {
	rows, err := d.pool.Query(ctx, `SELECT c.table_name, c.column_name FROM information_schema.columns c
		JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
		WHERE c.table_schema = current_schema() AND t.table_type = 'BASE TABLE'
		ORDER BY c.table_name, c.ordinal_position`)
	if err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	defer rows.Close()
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

// Load copies rows in (COPY FROM, ids kept: COPY writes identity columns as given) in one
// transaction.
func (d *Driver) Load(ctx context.Context, t store.DumpTable, rows []store.DumpRow) error {
	names := make([]string, len(t.Columns))
	for i, c := range t.Columns {
		names[i] = c.Name
	}
	values := make([][]any, len(rows))
	for r, row := range rows {
		if err := row.Check(t); err != nil {
			return fmt.Errorf("load: %w", err)
		}
		v := make([]any, len(row))
		for i, c := range t.Columns {
			if c.Kind == store.KindTime {
				tm, _ := row[i].(time.Time)
				v[i] = ts(tm)
			} else {
				v[i] = row[i]
			}
		}
		values[r] = v
	}
	err := d.tx(ctx, func(tx pgx.Tx) error {
		_, err := tx.CopyFrom(ctx, pgx.Identifier{t.Name}, names, pgx.CopyFromRows(values))
		return err
	})
	if err != nil {
		return fmt.Errorf("load %s: %w", t.Name, err)
	}
	return nil
}

// LoadBatch: 500 rows per transaction. When the job count was kept by a row trigger, every job
// loaded updated its collection's job_count, and within one transaction each update of that row
// added a version the next one had to walk to: the cost grew with the square of the batch
// (30,000 jobs of one collection loaded in 6.3 s by 5,000, 2.4 s by 500). The statement
// triggers (migration 0008) update each collection once per batch.
func (d *Driver) LoadBatch() int { return 500 }

// LoadDone moves every identity column's sequence past the largest id loaded.
func (d *Driver) LoadDone(ctx context.Context) error {
	rows, err := d.pool.Query(ctx, `SELECT table_name, column_name FROM information_schema.columns
		WHERE table_schema = current_schema() AND is_identity = 'YES'`)
	if err != nil {
		return fmt.Errorf("load: identities: %w", err)
	}
	type ident struct{ table, column string }
	var ids []ident
	for rows.Next() {
		var i ident
		if err := rows.Scan(&i.table, &i.column); err != nil {
			rows.Close()
			return fmt.Errorf("load: identities: %w", err)
		}
		ids = append(ids, i)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("load: identities: %w", err)
	}
	for _, i := range ids {
		t, c := pgx.Identifier{i.table}.Sanitize(), pgx.Identifier{i.column}.Sanitize()
		if _, err := d.pool.Exec(ctx, `SELECT setval(pg_get_serial_sequence($1, $2), m) FROM (SELECT max(`+c+`) AS m FROM `+t+`) s WHERE m IS NOT NULL`,
			i.table, i.column); err != nil {
			return fmt.Errorf("load: identity of %s: %w", i.table, err)
		}
	}
	return nil
}
