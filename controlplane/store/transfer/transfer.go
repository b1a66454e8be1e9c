// Package transfer copies a whole store into an empty one, of the same driver or another
// (schedulerd migrate): every table of store.DumpTables read from one consistent snapshot of the
// source, loaded in batches, then counted and checksummed on both sides.
//
// The checksum is SHA-256 over each table's rows in key order, each value in a canonical form;
// times count to the microsecond, PostgreSQL's precision, so that a SQLite store (nanoseconds)
// moved to PostgreSQL and back compares equal to what PostgreSQL kept.
package transfer

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"time"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
)

// ErrRunning is returned when the source's leadership is held by a running daemon and
// Options.Online is not set.
var ErrRunning = errors.New("a daemon is running on the source")

// ErrNotEmpty is returned when the target holds rows.
var ErrNotEmpty = errors.New("the target is not empty")

// ErrMismatch is returned when the target's counts or checksums differ from the source's.
var ErrMismatch = errors.New("the copy differs from the source")

// Options tune a copy.
type Options struct {
	// Online copies a source a daemon is running on (as of the snapshot: what it writes later is
	// not copied). Without it such a source is refused.
	Online bool
	// Progress receives a line per table and, on long tables, one every ProgressEvery.
	Progress      io.Writer
	ProgressEvery time.Duration // 0: 2s
	Batch         int           // rows per load transaction; 0: the target's LoadBatch
	// Now is the clock progress lines are timed by (nil: time.Now).
	Now func() time.Time
}

// Table is one table's figures.
type Table struct {
	Name     string
	Rows     int64
	Checksum string // hex SHA-256
}

// Sum is the counts and checksums of a store's tables, in store.DumpTables's order.
type Sum []Table

// Equal reports whether two sums are the same, and describes the first difference.
func (s Sum) Equal(o Sum) (bool, string) {
	if len(s) != len(o) {
		return false, fmt.Sprintf("%d tables against %d", len(s), len(o))
	}
	for i := range s {
		if s[i] != o[i] {
			return false, fmt.Sprintf("table %s: %d rows (sha256 %.12s) against %d rows (sha256 %.12s)",
				s[i].Name, s[i].Rows, s[i].Checksum, o[i].Rows, o[i].Checksum)
		}
	}
	return true, ""
}

// Copy copies every table of from into the empty store to, then checks that to holds the same
// rows (counts and checksums), and returns the source's figures.
func Copy(ctx context.Context, from, to store.Dumper, opts Options) (Sum, error) {
	if opts.Batch <= 0 {
		opts.Batch = to.LoadBatch()
	}
	if opts.ProgressEvery <= 0 {
		opts.ProgressEvery = 2 * time.Second
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Progress == nil {
		opts.Progress = io.Discard
	}
	if err := checkEmpty(ctx, to); err != nil {
		return nil, err
	}
	var sum Sum
	err := from.Dump(ctx, func(r store.DumpReader) error {
		replica, alive, err := r.Leader(ctx)
		if err != nil {
			return err
		}
		if alive {
			if !opts.Online {
				return fmt.Errorf("%w (replica %s holds its leadership): stop it first, or copy a snapshot as of now with --online "+
					"(what it writes afterwards is not copied)", ErrRunning, replica)
			}
			fmt.Fprintf(opts.Progress, "copying a snapshot of a running store (replica %s leads it): what it writes from now on is not copied\n", replica)
		}
		for _, t := range store.DumpTables() {
			tab, err := copyTable(ctx, r, to, t, opts)
			if err != nil {
				return err
			}
			sum = append(sum, tab)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if err := to.LoadDone(ctx); err != nil {
		return nil, err
	}
	got, err := Checksum(ctx, to)
	if err != nil {
		return nil, fmt.Errorf("verify: %w", err)
	}
	if ok, diff := sum.Equal(got); !ok {
		return nil, fmt.Errorf("%w: source against target: %s", ErrMismatch, diff)
	}
	fmt.Fprintln(opts.Progress, "verified: the target holds the same rows (counts and SHA-256 checksums per table)")
	return sum, nil
}

// checkEmpty refuses a target holding any row in a copied table, and one a daemon leads (it
// would not see the rows copied under it until it restarts).
func checkEmpty(ctx context.Context, to store.Dumper) error {
	return to.Dump(ctx, func(r store.DumpReader) error {
		if replica, alive, err := r.Leader(ctx); err != nil {
			return err
		} else if alive {
			return fmt.Errorf("%w: a daemon runs on the target (replica %s holds its leadership): stop it, copy, then start it", ErrNotEmpty, replica)
		}
		for _, t := range store.DumpTables() {
			n, err := r.Count(ctx, t)
			if err != nil {
				return err
			}
			if n > 0 {
				return fmt.Errorf("%w: its table %s holds %d rows (a move copies into a new, empty store only)", ErrNotEmpty, t.Name, n)
			}
		}
		return nil
	})
}

func copyTable(ctx context.Context, r store.DumpReader, to store.Dumper, t store.DumpTable, opts Options) (Table, error) {
	total, err := r.Count(ctx, t)
	if err != nil {
		return Table{}, err
	}
	h := sha256.New()
	var done int64
	batch := make([]store.DumpRow, 0, opts.Batch)
	last := opts.Now()
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		if err := to.Load(ctx, t, batch); err != nil {
			return err
		}
		done += int64(len(batch))
		batch = batch[:0]
		if now := opts.Now(); now.Sub(last) >= opts.ProgressEvery {
			last = now
			fmt.Fprintf(opts.Progress, "%s: %d of %d rows (%d%%)\n", t.Name, done, total, done*100/max(total, 1))
		}
		return nil
	}
	err = r.Rows(ctx, t, func(row store.DumpRow) error {
		if err := row.Check(t); err != nil {
			return err
		}
		writeRow(h, t, row)
		batch = append(batch, row)
		if len(batch) == opts.Batch {
			return flush()
		}
		return nil
	})
	if err == nil {
		err = flush()
	}
	if err != nil {
		return Table{}, err
	}
	if done != total {
		return Table{}, fmt.Errorf("%s: read %d rows of the %d counted in the same snapshot", t.Name, done, total)
	}
	fmt.Fprintf(opts.Progress, "%s: %d rows copied\n", t.Name, done)
	return Table{Name: t.Name, Rows: done, Checksum: hex.EncodeToString(h.Sum(nil))}, nil
}

// Checksum returns the counts and checksums of every copied table of d, read from one snapshot.
func Checksum(ctx context.Context, d store.Dumper) (Sum, error) {
	var sum Sum
	err := d.Dump(ctx, func(r store.DumpReader) error {
		for _, t := range store.DumpTables() {
			h := sha256.New()
			var n int64
			if err := r.Rows(ctx, t, func(row store.DumpRow) error {
				if err := row.Check(t); err != nil {
					return err
				}
				writeRow(h, t, row)
				n++
				return nil
			}); err != nil {
				return err
			}
			sum = append(sum, Table{Name: t.Name, Rows: n, Checksum: hex.EncodeToString(h.Sum(nil))})
		}
		return nil
	})
	return sum, err
}

// writeRow feeds one row's canonical form to h: per value a type byte, then the value (ints
// and times as 8 bytes big-endian, times in Unix microseconds, texts length-prefixed). The row
// has been checked (DumpRow.Check).
func writeRow(h hash.Hash, t store.DumpTable, row store.DumpRow) {
	var b [9]byte
	for i, c := range t.Columns {
		switch c.Kind {
		case store.KindText:
			s, _ := row[i].(string)
			b[0] = 's'
			binary.BigEndian.PutUint64(b[1:], uint64(len(s)))
			h.Write(b[:])
			_, _ = io.WriteString(h, s) // a hash's Write never fails
		case store.KindBool:
			b[0], b[1] = 'b', 0
			if v, _ := row[i].(bool); v {
				b[1] = 1
			}
			h.Write(b[:2])
		case store.KindTime:
			tm, _ := row[i].(time.Time)
			if tm.IsZero() {
				h.Write([]byte{'n'})
				continue
			}
			b[0] = 't'
			binary.BigEndian.PutUint64(b[1:], uint64(tm.UnixMicro()))
			h.Write(b[:])
		default:
			v, _ := row[i].(int64)
			b[0] = 'i'
			binary.BigEndian.PutUint64(b[1:], uint64(v))
			h.Write(b[:])
		}
	}
}
