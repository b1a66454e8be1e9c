package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store/postgres"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store/sqlite"
)

// seedBatch is how many history rows one Load (one transaction) of the seed writes.
const seedBatch = 50000

// seedMessage is the message the record path stores for a delivery to the sink (the sink
// answers 200 with no body), with body bytes of a response body after it (as action.capture
// keeps up to action.MaxMessageBody of it): random letters and digits, which PostgreSQL's
// compression of long values cannot shrink much more than real bodies.
func seedMessage(body int) string {
	msg := "HTTP/1.1 200 OK"
	if body > 0 {
		const chars = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
		b := make([]byte, body)
		for i := range b {
			b[i] = chars[rand.IntN(len(chars))]
		}
		msg += "\n" + string(b)
	}
	return msg
}

// seededStore is what the seed needs of a driver: the jobs, their history loaded in bulk.
type seededStore interface {
	store.Driver
	store.Dumper
	Close() error
}

// seedHistory stops the daemon and gives every job n more executions of history through the
// store driver, as the record path would have written them one cycle apart before now (one
// Completed MainAction entry per execution, the sink's answer as the message, a tag and an
// execution of its own), in cycle order, so that the table and its indexes are laid out as a
// running daemon lays them out: each cycle's entries together, each job's spread over the
// cycles. Every job's execution count and last execution time move on by n, so that the
// retention rule (the last HistoryKeep executions) counts the seeded executions; with
// --seed-executions M above n they move on by M, the n entries being the oldest of M executions
// (M 1000: every job at the bound with a smaller table, each fire pushing one entry out). It
// prints what
// the store's size grew by per entry and per job, then starts the daemon again.
func seedHistory(ctx context.Context, o options, d *daemon, out io.Writer) error {
	n, m := o.seedHistory, max(o.seedExecutions, o.seedHistory)
	d.terminate() // SQLite: the daemon's close checkpoints its WAL into the file
	before, err := storeSize(ctx, d)
	if err != nil {
		return err
	}
	start := time.Now()
	st, err := openStore(ctx, d)
	if err != nil {
		return err
	}
	jobs, rows, err := seedRows(ctx, st, o, n, m)
	if err == nil {
		err = seedCounts(ctx, st, jobs, m)
	}
	if cerr := st.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("seed: close: %w", cerr)
	}
	if err != nil {
		return err
	}
	took := time.Since(start)
	if _, err := d.startAgain(ctx); err != nil {
		return fmt.Errorf("seed: %w", err)
	}
	after, err := storeSize(ctx, d)
	if err != nil {
		return err
	}
	grown := after.total - before.total
	fmt.Fprintf(out, "seeded %d history entries (%d per job, execution counts moved on by %d) in %s: store %s -> %s; %.0f B per entry, %.1f kB per job\n",
		rows, n, m, took.Round(time.Second), before, after, float64(grown)/float64(rows),
		float64(grown)/float64(len(jobs))/1e3)
	return nil
}

// openStore opens the stopped daemon's store through its driver.
func openStore(ctx context.Context, d *daemon) (seededStore, error) {
	if url := d.storeURL(); url != "" {
		st, err := postgres.Open(ctx, url)
		if err != nil {
			return nil, fmt.Errorf("seed: %w", err)
		}
		return st, nil
	}
	st, err := sqlite.Open(ctx, filepath.Join(d.dataDir, "scheduler.db"))
	if err != nil {
		return nil, fmt.Errorf("seed: %w", err)
	}
	return st, nil
}

// storeURL is the daemon's --store URL ("": its SQLite file).
func (d *daemon) storeURL() string {
	for i, a := range d.extra {
		if a == "--store" && i+1 < len(d.extra) {
			return d.extra[i+1]
		}
	}
	return ""
}

// seedRows loads n history entries per job, the oldest of m executions, cycle by cycle, and
// returns the jobs and the rows loaded.
func seedRows(ctx context.Context, st seededStore, o options, n, m int) ([]*store.Job, int, error) {
	var jobs []*store.Job
	for after := int64(0); ; {
		page, err := st.JobListAll(ctx, store.JobListAllParams{AfterID: after, Limit: 10000})
		if err != nil {
			return nil, 0, fmt.Errorf("seed: jobs: %w", err)
		}
		if len(page) == 0 {
			break
		}
		jobs = append(jobs, page...)
		after = page[len(page)-1].ID
	}
	table, id, err := historyTable(ctx, st)
	if err != nil {
		return nil, 0, err
	}
	period, msg := o.period(), seedMessage(o.seedBody)
	batch := make([]store.DumpRow, 0, seedBatch)
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		if err := st.Load(ctx, table, batch); err != nil {
			return fmt.Errorf("seed: %w", err)
		}
		batch = batch[:0]
		return nil
	}
	rows := 0
	for r := 1; r <= n; r++ {
		for _, j := range jobs {
			// The r-th of the m executions was due m-r+1 cycles before the job's next one.
			due := j.Status.NextExecutionTime.Add(-time.Duration(m-r+1) * period)
			id++
			batch = append(batch, store.DumpRow{
				id, j.ID, id, uuid.NewString(), store.ActionMain, store.HistoryCompleted, msg, int64(0),
				int64(j.Status.ExecutionCount + r), due, due.Add(9 * time.Millisecond), due.Add(12 * time.Millisecond),
			})
			rows++
			if len(batch) == seedBatch {
				if err := flush(); err != nil {
					return nil, 0, err
				}
			}
		}
	}
	if err := flush(); err != nil {
		return nil, 0, err
	}
	if err := st.LoadDone(ctx); err != nil {
		return nil, 0, fmt.Errorf("seed: %w", err)
	}
	return jobs, rows, nil
}

// historyTable is the dumped history table and the largest history id stored.
func historyTable(ctx context.Context, st seededStore) (store.DumpTable, int64, error) {
	var table store.DumpTable
	for _, t := range store.DumpTables() {
		if t.Name == "history" {
			table = t
		}
	}
	if table.Name == "" {
		return table, 0, errors.New("seed: no history table among the dumped tables")
	}
	var last int64
	err := st.Dump(ctx, func(r store.DumpReader) error {
		return r.Rows(ctx, table, func(row store.DumpRow) error {
			last, _ = row[0].(int64)
			return nil
		})
	})
	if err != nil {
		return table, 0, fmt.Errorf("seed: history ids: %w", err)
	}
	return table, last, nil
}

// seedCounts moves every job's execution count on by n (and its last execution time to its last
// seeded one), with conditional JobPuts from 32 goroutines.
func seedCounts(ctx context.Context, st seededStore, jobs []*store.Job, n int) error {
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, 32)
	for range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= len(jobs) {
					return
				}
				j := *jobs[i]
				j.Status.ExecutionCount += n
				j.Status.LastExecutionTime = j.Status.NextExecutionTime.Add(-time.Minute)
				if _, _, err := st.JobPut(ctx, store.JobPutParams{Job: j, ExpectVersion: j.Version, Now: time.Now()}); err != nil {
					errs <- fmt.Errorf("seed: job %s: %w", j.Key.Name, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	return <-errs
}

// sizes is what the store takes on disk: in all, and its history table with its indexes.
type sizes struct {
	total, history int64
	what           string
}

func (s sizes) String() string {
	return fmt.Sprintf("%.1f MB (%s)", float64(s.total)/1e6, s.what)
}

// storeSize measures the store: the SQLite file with its WAL, or the sum of
// pg_total_relation_size over the schema's tables (history's apart).
func storeSize(ctx context.Context, d *daemon) (sizes, error) {
	if url := d.storeURL(); url != "" {
		conn, err := pgx.Connect(ctx, url)
		if err != nil {
			return sizes{}, fmt.Errorf("store size: %w", err)
		}
		defer func() { _ = conn.Close(ctx) }()
		var s sizes
		err = conn.QueryRow(ctx, `SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0)::bigint,
			coalesce(sum(pg_total_relation_size(c.oid)) FILTER (WHERE c.relname = 'history'), 0)::bigint
			FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
			WHERE n.nspname = current_schema() AND c.relkind = 'r'`).Scan(&s.total, &s.history)
		if err != nil {
			return sizes{}, fmt.Errorf("store size: %w", err)
		}
		s.what = fmt.Sprintf("pg_total_relation_size of the tables; history %.1f MB", float64(s.history)/1e6)
		return s, nil
	}
	var s sizes
	var parts []string
	for _, suffix := range []string{"", "-wal"} {
		fi, err := os.Stat(filepath.Join(d.dataDir, "scheduler.db"+suffix))
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return sizes{}, fmt.Errorf("store size: %w", err)
		}
		s.total += fi.Size()
		parts = append(parts, fmt.Sprintf("scheduler.db%s %.1f MB", suffix, float64(fi.Size())/1e6))
	}
	s.what = strings.Join(parts, ", ")
	return s, nil
}
