package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
)

// Backup writes a consistent copy of the database to path with VACUUM INTO, while the database
// is in use: it reads one snapshot (a read transaction, which WAL lets run beside writers,
// those of another process included) and writes it compacted into a new file. path must not
// exist; it is created mode 0600.
func (d *Driver) Backup(ctx context.Context, path string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	// The writer connection: VACUUM INTO reads in a read transaction of its own and writes
	// only the new file (the read-only pool's query_only would refuse it).
	if _, err := d.w.ExecContext(ctx, `VACUUM INTO ?`, path); err != nil {
		_ = os.Remove(path)
		return fmt.Errorf("backup into %s: %w", path, err)
	}
	return nil
}

// IntegrityCheck runs PRAGMA integrity_check on the SQLite file at path, opened read-only, and
// returns an error holding its findings unless it answers "ok".
func IntegrityCheck(ctx context.Context, path string) error {
	q := url.Values{}
	q.Set("mode", "ro")
	db, err := sql.Open("sqlite", "file:"+path+"?"+q.Encode())
	if err != nil {
		return fmt.Errorf("integrity check of %s: %w", path, err)
	}
	defer func() { _ = db.Close() }()
	rows, err := db.QueryContext(ctx, `PRAGMA integrity_check`)
	if err != nil {
		return fmt.Errorf("integrity check of %s: %w", path, err)
	}
	defer func() { _ = rows.Close() }()
	var found []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return fmt.Errorf("integrity check of %s: %w", path, err)
		}
		found = append(found, s)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("integrity check of %s: %w", path, err)
	}
	if len(found) != 1 || found[0] != "ok" {
		return fmt.Errorf("integrity check of %s: %w: %s", path, errCorrupt, strings.Join(found, "; "))
	}
	return nil
}

var errCorrupt = errors.New("the file is damaged")
