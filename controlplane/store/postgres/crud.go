package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store/sqlstore"
)

func scanCollection(row pgx.Row) (*store.Collection, error) {
	var r collectionRow
	if err := row.Scan(r.dest()...); err != nil {
		return nil, err
	}
	return r.collection()
}

// collectionRow is a collection's columns (sqlstore.CollectionColumns) as scanned.
type collectionRow struct {
	c                store.Collection
	tags, props      string
	created, updated *time.Time
}

func (r *collectionRow) dest() []any {
	c := &r.c
	return []any{&c.ID, &c.Key.Subscription, &c.Key.ResourceGroup, &c.Key.Name, &c.Location, &r.tags, &r.props, &r.created, &r.updated, &c.Version}
}

func (r *collectionRow) collection() (*store.Collection, error) {
	c := &r.c
	if err := json.Unmarshal([]byte(r.tags), &c.Tags); err != nil {
		return nil, fmt.Errorf("collection %d tags: %w", c.ID, err)
	}
	if err := json.Unmarshal([]byte(r.props), &c.Properties); err != nil {
		return nil, fmt.Errorf("collection %d properties: %w", c.ID, err)
	}
	c.CreatedAt, c.UpdatedAt = fromTS(r.created), fromTS(r.updated)
	return c, nil
}

// CollectionGet returns one collection or store.ErrNotFound.
func (d *Driver) CollectionGet(ctx context.Context, params store.CollectionGetParams) (*store.Collection, error) {
	k := params.Key
	c, err := scanCollection(d.pool.QueryRow(ctx, `SELECT `+sqlstore.CollectionColumns+` FROM collections`+sqlstore.WhereCollectionKey,
		key(k.Subscription), key(k.ResourceGroup), key(k.Name)))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("collection %s/%s/%s: %w", k.Subscription, k.ResourceGroup, k.Name, store.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("collection get: %w", err)
	}
	return c, nil
}

// CollectionList lists a subscription's collections by (resource group, name), or every
// subscription's by (subscription, resource group, name).
func (d *Driver) CollectionList(ctx context.Context, params store.CollectionListParams) ([]*store.Collection, error) {
	query := `SELECT ` + sqlstore.CollectionColumns + ` FROM collections
		WHERE sub_key = $1 AND ($2 = '' OR rg_key = $2) ORDER BY rg_key, name_key LIMIT $3 OFFSET $4`
	args := []any{key(params.Subscription), key(params.ResourceGroup), limit(params.Limit), max(params.Skip, 0)}
	if params.Subscription == "" {
		query = `SELECT ` + sqlstore.CollectionColumns + ` FROM collections ORDER BY sub_key, rg_key, name_key LIMIT $1 OFFSET $2`
		args = []any{limit(params.Limit), max(params.Skip, 0)}
	}
	rows, err := d.pool.Query(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("collection list: %w", err)
	}
	defer rows.Close()
	out := []*store.Collection{}
	for rows.Next() {
		c, err := scanCollection(rows)
		if err != nil {
			return nil, fmt.Errorf("collection list: %w", err)
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("collection list: %w", err)
	}
	return out, nil
}

// CollectionPut creates or replaces a collection.
func (d *Driver) CollectionPut(ctx context.Context, params store.CollectionPutParams) (*store.Collection, bool, error) {
	c := params.Collection
	k := c.Key
	tags, err := json.Marshal(c.Tags)
	if err != nil {
		return nil, false, fmt.Errorf("collection put: tags: %w", err)
	}
	props, err := json.Marshal(c.Properties)
	if err != nil {
		return nil, false, fmt.Errorf("collection put: properties: %w", err)
	}
	var (
		out     *store.Collection
		created bool
	)
	for attempt := 0; ; attempt++ {
		err = d.tx(ctx, func(tx pgx.Tx) error {
			created = false
			var (
				id, version int64
				state       string
			)
			err := tx.QueryRow(ctx, `SELECT id, version, state FROM collections`+sqlstore.WhereCollectionKey+` FOR UPDATE`,
				key(k.Subscription), key(k.ResourceGroup), key(k.Name)).Scan(&id, &version, &state)
			switch {
			case errors.Is(err, pgx.ErrNoRows):
				if params.ExpectVersion > 0 {
					return fmt.Errorf("collection %s: expected version %d, found none: %w", k.Name, params.ExpectVersion, store.ErrConflict)
				}
				out, err = scanCollection(tx.QueryRow(ctx, `INSERT INTO collections
					(subscription, resource_group, name, sub_key, rg_key, name_key, location, tags, properties, state, created_at, updated_at, version)
					VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $11, 1) RETURNING `+sqlstore.CollectionColumns,
					k.Subscription, k.ResourceGroup, k.Name, key(k.Subscription), key(k.ResourceGroup), key(k.Name),
					c.Location, string(tags), string(props), c.Properties.State, params.Now))
				created = err == nil
				return err
			case err != nil:
				return err
			default:
				if params.ExpectVersion > 0 && params.ExpectVersion != version {
					return fmt.Errorf("collection %s: expected version %d, found %d: %w", k.Name, params.ExpectVersion, version, store.ErrConflict)
				}
				// A change of state changes the schedule of every job of the collection: it is
				// recorded in the change feed (changes.go); other writes change none.
				out, err = scanCollection(tx.QueryRow(ctx, `WITH u AS (
					UPDATE collections SET location = $1, tags = $2, properties = $3, state = $4,
						updated_at = $5, version = version + 1 WHERE id = $6 RETURNING `+sqlstore.CollectionColumns+`
				), ch AS (
					INSERT INTO changes (kind, id, origin) SELECT 'collection', u.id, $7 FROM u WHERE $8
				) SELECT * FROM u`,
					c.Location, string(tags), string(props), c.Properties.State, params.Now, id, d.origin, state != c.Properties.State))
				if err != nil || len(params.CancelBackfillOf) == 0 {
					return err
				}
				out.Cancelled, err = cancelCollectionWaiting(ctx, tx, id, params.CancelBackfillOf, params.Now)
				return err
			}
		})
		// Two creates of one name raced: the loser runs again and replaces (or conflicts).
		if isUnique(err) && attempt < 3 {
			continue
		}
		break
	}
	if err != nil {
		return nil, false, fmt.Errorf("collection put: %w", err)
	}
	return out, created, nil
}

// CollectionDelete deletes a collection with its jobs, executions and history, and records the
// change (changes.go).
func (d *Driver) CollectionDelete(ctx context.Context, params store.CollectionDeleteParams) error {
	k := params.Key
	tag, err := d.pool.Exec(ctx, `WITH del AS (DELETE FROM collections`+sqlstore.WhereCollectionKey+` RETURNING id)
		INSERT INTO changes (kind, id, origin) SELECT 'collection', id, $4 FROM del`,
		key(k.Subscription), key(k.ResourceGroup), key(k.Name), d.origin)
	if err != nil {
		return fmt.Errorf("collection delete: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("collection %s: %w", k.Name, store.ErrNotFound)
	}
	return nil
}

func scanJob(row pgx.Row) (*store.Job, error) {
	j, props, err := scanJobRaw(row)
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(props), &j.Properties); err != nil {
		return nil, fmt.Errorf("job %d properties: %w", j.ID, err)
	}
	return j, nil
}

// scanJobRaw scans a job row, leaving its properties JSON to the caller.
func scanJobRaw(row pgx.Row) (*store.Job, string, error) {
	var (
		j                            store.Job
		props                        string
		created, updated             *time.Time
		lastExecution, nextExecution *time.Time
	)
	err := row.Scan(&j.ID, &j.CollectionID, &j.Key.Subscription, &j.Key.ResourceGroup, &j.Key.CollectionKey.Name, &j.CollectionState,
		&j.Key.Name, &props, &j.State, &created, &updated, &j.Version,
		&j.Status.ExecutionCount, &j.Status.FailureCount, &j.Status.FaultedCount, &j.Status.ConsecutiveFaults,
		&lastExecution, &nextExecution)
	if err != nil {
		return nil, "", err
	}
	j.CreatedAt, j.UpdatedAt = fromTS(created), fromTS(updated)
	j.Status.LastExecutionTime, j.Status.NextExecutionTime = fromTS(lastExecution), fromTS(nextExecution)
	return &j, props, nil
}

func scanJobs(rows pgx.Rows) ([]*store.Job, error) {
	defer rows.Close()
	out := []*store.Job{}
	for rows.Next() {
		j, err := scanJob(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, j)
	}
	return out, rows.Err()
}

func jobKeyArgs(k store.JobKey) []any {
	return []any{key(k.Subscription), key(k.ResourceGroup), key(k.CollectionKey.Name), key(k.Name)}
}

// JobGet returns one job or store.ErrNotFound.
func (d *Driver) JobGet(ctx context.Context, params store.JobGetParams) (*store.Job, error) {
	j, err := scanJob(d.pool.QueryRow(ctx, `SELECT `+sqlstore.JobColumns+sqlstore.JobFrom+sqlstore.WhereJobKey, jobKeyArgs(params.Key)...))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("job %s/%s: %w", params.Key.CollectionKey.Name, params.Key.Name, store.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("job get: %w", err)
	}
	return j, nil
}

// jobWithCollection is sqlstore.JobWithCollection with the job looked up in a lateral subquery
// that is not flattened (OFFSET 0): the collection's ID is a parameter of the job's index scan,
// never a join condition that a generic plan made from a small table's statistics leaves out of
// it (a scan of the whole index on name_key alone; see jobput.go).
const jobWithCollection = `SELECT c.id, c.subscription, c.resource_group, c.name, c.location, c.tags, c.properties, c.created_at,
	c.updated_at, c.version,
	COALESCE(j.id, 0), c.id, c.subscription, c.resource_group, c.name, c.state, COALESCE(j.name, ''), COALESCE(j.properties, '{}'),
	COALESCE(j.state, ''), COALESCE(j.created_at, $5), COALESCE(j.updated_at, $5), COALESCE(j.version, 0),
	COALESCE(j.execution_count, 0), COALESCE(j.failure_count, 0), COALESCE(j.faulted_count, 0), COALESCE(j.consecutive_faults, 0),
	COALESCE(j.last_execution_time, $5), COALESCE(j.next_execution_time, $5)
	FROM collections c LEFT JOIN LATERAL (SELECT * FROM jobs WHERE collection_id = c.id AND name_key = $4 OFFSET 0) j ON true
	WHERE c.sub_key = $1 AND c.rg_key = $2 AND c.name_key = $3`

// JobGetWithCollection returns a job's collection and the job (nil when absent) in one lookup,
// or store.ErrNotFound when the collection is absent.
func (d *Driver) JobGetWithCollection(ctx context.Context, params store.JobGetParams) (*store.Collection, *store.Job, error) {
	var cr collectionRow
	k := params.Key
	j, err := scanJob(sqlstore.Prefixed{
		Row:    d.pool.QueryRow(ctx, jobWithCollection, append(jobKeyArgs(k), nil)...),
		Prefix: cr.dest(),
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil, fmt.Errorf("collection %s/%s/%s: %w", k.Subscription, k.ResourceGroup, k.CollectionKey.Name, store.ErrNotFound)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("job get with collection: %w", err)
	}
	c, err := cr.collection()
	if err != nil {
		return nil, nil, fmt.Errorf("job get with collection: %w", err)
	}
	if j.ID == 0 {
		return c, nil, nil
	}
	return c, j, nil
}

// collectionID returns a collection's ID or store.ErrNotFound.
func (d *Driver) collectionID(ctx context.Context, k store.CollectionKey) (int64, error) {
	var id int64
	err := d.pool.QueryRow(ctx, `SELECT id FROM collections`+sqlstore.WhereCollectionKey, key(k.Subscription), key(k.ResourceGroup), key(k.Name)).Scan(&id)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, fmt.Errorf("collection %s: %w", k.Name, store.ErrNotFound)
	}
	return id, err
}

// JobList lists a collection's jobs by name (store.ErrNotFound when the collection is absent).
func (d *Driver) JobList(ctx context.Context, params store.JobListParams) ([]*store.Job, error) {
	cid, err := d.collectionID(ctx, params.Collection)
	if err != nil {
		return nil, fmt.Errorf("job list: %w", err)
	}
	rows, err := d.pool.Query(ctx, `SELECT `+sqlstore.JobColumns+sqlstore.JobFrom+` WHERE j.collection_id = $1 AND ($2 = '' OR lower(j.state) = $2)
		ORDER BY j.name_key LIMIT $3 OFFSET $4`, cid, key(params.State), limit(params.Limit), max(params.Skip, 0))
	if err != nil {
		return nil, fmt.Errorf("job list: %w", err)
	}
	jobs, err := scanJobs(rows)
	if err != nil {
		return nil, fmt.Errorf("job list: %w", err)
	}
	return jobs, nil
}

// JobCount counts a collection's jobs (store.ErrNotFound when the collection is absent).
func (d *Driver) JobCount(ctx context.Context, params store.JobCountParams) (int, error) {
	cid, err := d.collectionID(ctx, params.Collection)
	if err != nil {
		return 0, fmt.Errorf("job count: %w", err)
	}
	var n int
	if err := d.pool.QueryRow(ctx, sqlstore.JobCount, cid).Scan(&n); err != nil {
		return 0, fmt.Errorf("job count: %w", err)
	}
	return n, nil
}

// JobDelete deletes a job with its executions and history, and records the change (changes.go).
func (d *Driver) JobDelete(ctx context.Context, params store.JobDeleteParams) error {
	k := params.Key
	err := d.tx(ctx, func(tx pgx.Tx) error {
		// The collection's row first (its job count changes), then the job's, in the order a
		// collection's write (CollectionPut), a job's (JobPut) and a backfill lock them: the
		// job's delete locked its job and then, in the count's trigger, its collection, and a
		// disabling of the collection cancelling the job's backfill deadlocked with it.
		var collectionID int64
		err := tx.QueryRow(ctx, `SELECT id FROM collections`+sqlstore.WhereCollectionKey+` FOR NO KEY UPDATE`,
			key(k.Subscription), key(k.ResourceGroup), key(k.CollectionKey.Name)).Scan(&collectionID)
		if errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("job %s/%s: %w", k.CollectionKey.Name, k.Name, store.ErrNotFound)
		}
		if err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, `WITH del AS (DELETE FROM jobs WHERE collection_id = $1 AND name_key = $2 RETURNING id)
			INSERT INTO changes (kind, id, origin) SELECT 'job', id, $3 FROM del`, collectionID, key(k.Name), d.origin)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return fmt.Errorf("job %s/%s: %w", k.CollectionKey.Name, k.Name, store.ErrNotFound)
		}
		return nil
	})
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("job delete: %w", err)
	}
	return err
}

// HistoryList lists a job's history newest first: newest execution first, each execution's
// attempts newest first (store.ErrNotFound when the job is absent).
func (d *Driver) HistoryList(ctx context.Context, params store.HistoryListParams) ([]*store.HistoryEntry, error) {
	var jobID int64
	err := d.pool.QueryRow(ctx, `SELECT j.id`+sqlstore.JobFrom+sqlstore.WhereJobKey, jobKeyArgs(params.Job)...).Scan(&jobID)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("history list: job %s: %w", params.Job.Name, store.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("history list: %w", err)
	}
	rows, err := d.pool.Query(ctx, `SELECT `+sqlstore.HistoryColumns+` FROM history WHERE job_id = $1 AND ($2 = '' OR lower(status) = $2)
		ORDER BY repeat_count DESC, id DESC LIMIT $3 OFFSET $4`, jobID, key(params.Status), limit(params.Limit), max(params.Skip, 0))
	if err != nil {
		return nil, fmt.Errorf("history list: %w", err)
	}
	defer rows.Close()
	out := []*store.HistoryEntry{}
	for rows.Next() {
		var (
			h                    store.HistoryEntry
			expected, start, end *time.Time
		)
		err := rows.Scan(&h.ID, &h.JobID, &h.ExecutionID, &h.ExecutionTag, &h.ActionName, &h.Status, &h.Message,
			&h.RetryCount, &h.RepeatCount, &expected, &start, &end)
		if err != nil {
			return nil, fmt.Errorf("history list: %w", err)
		}
		h.ExpectedExecutionTime, h.StartTime, h.EndTime = fromTS(expected), fromTS(start), fromTS(end)
		out = append(out, &h)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("history list: %w", err)
	}
	return out, nil
}
