// Package migrate reads a store driver's embedded migrations: SQL files named NNNN_what.sql,
// numbered 1, 2, 3 ... without a gap or a repeat. A repeated number was skipped silently before
// (the second file of a number never ran, on any database); a gap would leave a database at a
// version no binary can reproduce. Either is refused, naming the files, when the driver opens.
package migrate

import (
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
)

// Migration is one SQL file of a driver's schema history.
type Migration struct {
	Version int    // the file's number
	Name    string // the file's name (NNNN_what.sql)
	Body    string // the SQL
}

// List returns the migrations in dir of fsys, in version order, or an error naming the file
// that breaks the numbering.
func List(fsys fs.FS, dir string) ([]Migration, error) {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, fmt.Errorf("migrations: %w", err)
	}
	var ms []Migration
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".sql") {
			continue
		}
		n, _, ok := strings.Cut(e.Name(), "_")
		v, err := strconv.Atoi(n)
		if !ok || err != nil || v <= 0 || len(n) != 4 {
			return nil, fmt.Errorf("migration %s: the name must start with a four-digit number from 0001 and an underscore", e.Name())
		}
		body, err := fs.ReadFile(fsys, path.Join(dir, e.Name()))
		if err != nil {
			return nil, fmt.Errorf("migration %s: %w", e.Name(), err)
		}
		ms = append(ms, Migration{Version: v, Name: e.Name(), Body: string(body)})
	}
	sort.SliceStable(ms, func(i, j int) bool { return ms[i].Version < ms[j].Version })
	for i, m := range ms {
		if i > 0 && ms[i-1].Version == m.Version {
			return nil, fmt.Errorf("migrations %s and %s: the same number twice", ms[i-1].Name, m.Name)
		}
		if m.Version != i+1 {
			return nil, fmt.Errorf("migration %s: number %d follows %d (no gaps)", m.Name, m.Version, i)
		}
	}
	return ms, nil
}
