package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store/sqlstore"
	"github.com/schedulerhq/terraform-provider-scheduler/internal/jobstate"
)

// scanner is a *sql.Row or *sql.Rows.
type scanner interface {
	Scan(dest ...any) error
}

func scanCollection(s scanner) (*store.Collection, error) {
	var r collectionRow
	if err := s.Scan(r.dest()...); err != nil {
		return nil, err
	}
	return r.collection()
}

// collectionRow is a collection's columns (sqlstore.CollectionColumns) as scanned.
type collectionRow struct {
	c                store.Collection
	tags, props      string
	created, updated int64
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
	c.CreatedAt, c.UpdatedAt = fromNanos(r.created), fromNanos(r.updated)
	return c, nil
}

// CollectionGet returns one collection or store.ErrNotFound.
func (d *Driver) CollectionGet(ctx context.Context, params store.CollectionGetParams) (*store.Collection, error) {
	k := params.Key
	c, err := scanCollection(d.crud.collectionGet.QueryRowContext(ctx, key(k.Subscription), key(k.ResourceGroup), key(k.Name)))
	if errors.Is(err, sql.ErrNoRows) {
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
	var (
		rows *sql.Rows
		err  error
	)
	switch {
	case params.Subscription == "":
		rows, err = d.crud.collectionListAll.QueryContext(ctx, limit(params.Limit), max(params.Skip, 0))
	case params.ResourceGroup != "":
		rows, err = d.crud.collectionListGroup.QueryContext(ctx, key(params.Subscription), key(params.ResourceGroup),
			limit(params.Limit), max(params.Skip, 0))
	default:
		rows, err = d.crud.collectionList.QueryContext(ctx, key(params.Subscription), limit(params.Limit), max(params.Skip, 0))
	}
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
	now := nanos(params.Now)
	var (
		out     *store.Collection
		created bool
	)
	err = d.tx(ctx, func(tx *sql.Tx) error {
		var id, version int64
		err := tx.StmtContext(ctx, d.crud.collectionLookup).QueryRowContext(ctx,
			key(k.Subscription), key(k.ResourceGroup), key(k.Name)).Scan(&id, &version)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			if params.ExpectVersion > 0 {
				return fmt.Errorf("collection %s: expected version %d, found none: %w", k.Name, params.ExpectVersion, store.ErrConflict)
			}
			err = tx.StmtContext(ctx, d.crud.collectionInsert).QueryRowContext(ctx,
				k.Subscription, k.ResourceGroup, k.Name, key(k.Subscription), key(k.ResourceGroup), key(k.Name),
				c.Location, string(tags), string(props), c.Properties.State, now, now).Scan(&id)
			if err != nil {
				return err
			}
			created = true
		case err != nil:
			return err
		default:
			if params.ExpectVersion > 0 && params.ExpectVersion != version {
				return fmt.Errorf("collection %s: expected version %d, found %d: %w", k.Name, params.ExpectVersion, version, store.ErrConflict)
			}
			_, err = tx.StmtContext(ctx, d.crud.collectionUpdate).ExecContext(ctx,
				c.Location, string(tags), string(props), c.Properties.State, now, id)
			if err != nil {
				return err
			}
		}
		out, err = scanCollection(tx.StmtContext(ctx, d.crud.collectionByID).QueryRowContext(ctx, id))
		if err != nil || created || len(params.CancelBackfillOf) == 0 {
			return err
		}
		out.Cancelled, err = cancelCollectionWaiting(ctx, tx, id, params.CancelBackfillOf, now)
		return err
	})
	if err != nil {
		return nil, false, fmt.Errorf("collection put: %w", err)
	}
	return out, created, nil
}

// CollectionDelete deletes a collection with its jobs, executions and history.
func (d *Driver) CollectionDelete(ctx context.Context, params store.CollectionDeleteParams) error {
	k := params.Key
	res, err := d.crud.collectionDelete.ExecContext(ctx, key(k.Subscription), key(k.ResourceGroup), key(k.Name))
	if err != nil {
		return fmt.Errorf("collection delete: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("collection delete: %w", err)
	} else if n == 0 {
		return fmt.Errorf("collection %s: %w", k.Name, store.ErrNotFound)
	}
	return nil
}

func scanJob(s scanner) (*store.Job, error) {
	j, props, err := scanJobRaw(s)
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(props), &j.Properties); err != nil {
		return nil, fmt.Errorf("job %d properties: %w", j.ID, err)
	}
	return j, nil
}

// scanJobRaw scans a job row, leaving its properties JSON to the caller.
func scanJobRaw(s scanner) (*store.Job, string, error) {
	var (
		j                            store.Job
		props                        string
		created, updated             int64
		lastExecution, nextExecution int64
	)
	err := s.Scan(&j.ID, &j.CollectionID, &j.Key.Subscription, &j.Key.ResourceGroup, &j.Key.CollectionKey.Name, &j.CollectionState,
		&j.Key.Name, &props, &j.State, &created, &updated, &j.Version,
		&j.Status.ExecutionCount, &j.Status.FailureCount, &j.Status.FaultedCount, &j.Status.ConsecutiveFaults,
		&lastExecution, &nextExecution)
	if err != nil {
		return nil, "", err
	}
	j.CreatedAt, j.UpdatedAt = fromNanos(created), fromNanos(updated)
	j.Status.LastExecutionTime, j.Status.NextExecutionTime = fromNanos(lastExecution), fromNanos(nextExecution)
	return &j, props, nil
}

func scanJobs(rows *sql.Rows) ([]*store.Job, error) {
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
	j, err := scanJob(d.crud.jobGet.QueryRowContext(ctx, jobKeyArgs(params.Key)...))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("job %s/%s: %w", params.Key.CollectionKey.Name, params.Key.Name, store.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("job get: %w", err)
	}
	return j, nil
}

// JobGetWithCollection returns a job's collection and the job (nil when absent) in one lookup,
// or store.ErrNotFound when the collection is absent.
func (d *Driver) JobGetWithCollection(ctx context.Context, params store.JobGetParams) (*store.Collection, *store.Job, error) {
	var cr collectionRow
	k := params.Key
	j, props, err := scanJobRaw(sqlstore.Prefixed{
		Row:    d.crud.jobWithCollection.QueryRowContext(ctx, append(jobKeyArgs(k), int64(0))...),
		Prefix: cr.dest(),
	})
	if errors.Is(err, sql.ErrNoRows) {
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
	if err := json.Unmarshal([]byte(props), &j.Properties); err != nil {
		return nil, nil, fmt.Errorf("job %d properties: %w", j.ID, err)
	}
	return c, j, nil
}

// collectionID finds a collection's ID on the read pool (store.ErrNotFound when absent).
func (d *Driver) collectionID(ctx context.Context, k store.CollectionKey) (int64, error) {
	var id int64
	err := d.crud.collectionID.QueryRowContext(ctx, key(k.Subscription), key(k.ResourceGroup), key(k.Name)).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
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
	var rows *sql.Rows
	if params.State != "" {
		rows, err = d.crud.jobListState.QueryContext(ctx, cid, key(params.State), limit(params.Limit), max(params.Skip, 0))
	} else {
		rows, err = d.crud.jobList.QueryContext(ctx, cid, limit(params.Limit), max(params.Skip, 0))
	}
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
	if err := d.crud.jobCount.QueryRowContext(ctx, cid).Scan(&n); err != nil {
		return 0, fmt.Errorf("job count: %w", err)
	}
	return n, nil
}

// JobPut creates or replaces a job. Concurrent calls are committed together (see putQueue);
// each keeps its own result and error.
func (d *Driver) JobPut(ctx context.Context, params store.JobPutParams) (*store.Job, bool, error) {
	return sqlstore.JobPut(ctx, params, func(r *sqlstore.PutRequest) { d.puts.Do(r, d.jobPutBatch) })
}

// maxPutBatch bounds the requests of one transaction.
const maxPutBatch = 256

// jobPutBatch runs a batch in one transaction. A request whose context is done is skipped; one
// that fails on a conflict, a quota or an absent collection fails alone (before writing). Any
// other error rolls the transaction back: each request then runs again in a transaction of its
// own, so that only the one at fault fails.
func (d *Driver) jobPutBatch(batch []*sqlstore.PutRequest) {
	// The transaction serves every request: no single caller's cancellation may stop it.
	ctx := context.WithoutCancel(batch[0].Ctx)
	err := d.tx(ctx, func(tx *sql.Tx) error {
		lookup := tx.StmtContext(ctx, d.crud.jobLookup)
		insert, update := tx.StmtContext(ctx, d.crud.jobInsert), tx.StmtContext(ctx, d.crud.jobUpdate)
		for _, r := range batch {
			r.Out, r.Created, r.Err = nil, false, r.Ctx.Err()
			if r.Err != nil {
				continue
			}
			r.Out, r.Created, r.Err = jobPutOne(ctx, tx, lookup, insert, update, r.Params, r.Body)
			if r.Err != nil && !errors.Is(r.Err, store.ErrNotFound) && !errors.Is(r.Err, store.ErrConflict) && !errors.Is(r.Err, store.ErrQuota) {
				return r.Err
			}
		}
		return nil
	})
	if err == nil {
		return
	}
	if len(batch) > 1 {
		for _, r := range batch {
			d.jobPutBatch([]*sqlstore.PutRequest{r})
		}
		return
	}
	batch[0].Out, batch[0].Created, batch[0].Err = nil, false, err
}

// jobPutOne writes one job in a batch's transaction. It returns store.ErrNotFound,
// store.ErrConflict or store.ErrQuota (wrapped) before writing anything. The job it returns is
// built from what the lookup read and what it wrote (the statements return nothing but the new
// ID): its properties are left to JobPut, the caller's.
func jobPutOne(ctx context.Context, tx *sql.Tx, lookup, insert, update *sql.Stmt, params store.JobPutParams, body string) (*store.Job, bool, error) {
	var (
		j                = params.Job
		now              = nanos(params.Now)
		st               = j.Status
		collection, name = j.Key.CollectionKey, j.Key.Name
		cid, jobs, cver  int64
		id, version      sql.NullInt64
		oldState         sql.NullString
		oldFinal         sql.NullInt64
		oldName          sql.NullString
		oldCreated       sql.NullInt64
		out              = &store.Job{State: j.State, Version: 1, CreatedAt: fromNanos(now), UpdatedAt: fromNanos(now)}
	)
	err := lookup.QueryRowContext(ctx, key(name), key(collection.Subscription), key(collection.ResourceGroup), key(collection.Name)).Scan(
		&cid, &jobs, &cver, &out.Key.Subscription, &out.Key.ResourceGroup, &out.Key.CollectionKey.Name, &out.CollectionState,
		&id, &version, &oldState, &oldFinal, &oldName, &oldCreated)
	out.CollectionID, out.Key.Name = cid, name
	// The status as stored: times to the nanosecond, in UTC.
	out.Status = store.JobStatus{ExecutionCount: st.ExecutionCount, FailureCount: st.FailureCount, FaultedCount: st.FaultedCount,
		ConsecutiveFaults: st.ConsecutiveFaults, LastExecutionTime: fromNanos(nanos(st.LastExecutionTime)), NextExecutionTime: fromNanos(nanos(st.NextExecutionTime))}
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil, false, fmt.Errorf("collection %s: %w", collection.Name, store.ErrNotFound)
	case err != nil:
		return nil, false, err
	case params.ExpectCollection.ID > 0 && (params.ExpectCollection.ID != cid || params.ExpectCollection.Version != cver):
		return nil, false, fmt.Errorf("collection %s: expected %d version %d, found %d version %d: %w",
			collection.Name, params.ExpectCollection.ID, params.ExpectCollection.Version, cid, cver, store.ErrConflict)
	case id.Valid && params.CreateOnly:
		return nil, false, fmt.Errorf("job %s: a create, and the job exists: %w", name, store.ErrConflict)
	case !id.Valid:
		if params.ExpectVersion > 0 {
			return nil, false, fmt.Errorf("job %s: expected version %d, found none: %w", name, params.ExpectVersion, store.ErrConflict)
		}
		if params.MaxJobs > 0 && jobs >= int64(params.MaxJobs) {
			return nil, false, fmt.Errorf("collection %s holds %d jobs, the maximum is %d: %w", collection.Name, jobs, params.MaxJobs, store.ErrQuota)
		}
		var final int64
		if jobstate.Final(j.State) {
			final = now
		}
		res, err := insert.ExecContext(ctx,
			cid, name, key(name), body, j.State, now, now,
			st.ExecutionCount, st.FailureCount, st.FaultedCount, st.ConsecutiveFaults,
			nanos(st.LastExecutionTime), nanos(st.NextExecutionTime), final)
		if err != nil {
			return nil, false, err
		}
		if out.ID, err = res.LastInsertId(); err != nil {
			return nil, false, err
		}
		return out, true, nil
	default:
		if params.ExpectVersion > 0 && params.ExpectVersion != version.Int64 {
			return nil, false, fmt.Errorf("job %s: expected version %d, found %d: %w", name, params.ExpectVersion, version.Int64, store.ErrConflict)
		}
		var final int64
		switch {
		case jobstate.Final(j.State) && jobstate.Final(oldState.String) && oldFinal.Int64 > 0:
			final = oldFinal.Int64
		case jobstate.Final(j.State):
			final = now
		}
		cancelled, err := cancelWaiting(ctx, tx, params, id.Int64)
		if err != nil {
			return nil, false, err
		}
		st.ExecutionCount -= len(cancelled)
		out.Cancelled = cancelled
		out.Status.ExecutionCount = st.ExecutionCount
		if _, err := update.ExecContext(ctx,
			body, j.State, now, st.ExecutionCount, st.FailureCount, st.FaultedCount, st.ConsecutiveFaults,
			nanos(st.LastExecutionTime), nanos(st.NextExecutionTime), final, id.Int64); err != nil {
			return nil, false, err
		}
		// A replace keeps the job's ID, name as first written and creation time.
		out.ID, out.Key.Name, out.Version, out.CreatedAt = id.Int64, oldName.String, version.Int64+1, fromNanos(oldCreated.Int64)
		return out, false, nil
	}
}

// JobDelete deletes a job with its executions and history.
func (d *Driver) JobDelete(ctx context.Context, params store.JobDeleteParams) error {
	k := params.Key
	res, err := d.crud.jobDelete.ExecContext(ctx, jobKeyArgs(k)...)
	if err != nil {
		return fmt.Errorf("job delete: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("job delete: %w", err)
	} else if n == 0 {
		return fmt.Errorf("job %s/%s: %w", k.CollectionKey.Name, k.Name, store.ErrNotFound)
	}
	return nil
}

func scanHistory(s scanner) (*store.HistoryEntry, error) {
	var (
		h                    store.HistoryEntry
		expected, start, end int64
	)
	err := s.Scan(&h.ID, &h.JobID, &h.ExecutionID, &h.ExecutionTag, &h.ActionName, &h.Status, &h.Message,
		&h.RetryCount, &h.RepeatCount, &expected, &start, &end)
	if err != nil {
		return nil, err
	}
	h.ExpectedExecutionTime, h.StartTime, h.EndTime = fromNanos(expected), fromNanos(start), fromNanos(end)
	return &h, nil
}

// HistoryList lists a job's history newest first: newest execution first, each execution's
// attempts newest first (store.ErrNotFound when the job is absent).
func (d *Driver) HistoryList(ctx context.Context, params store.HistoryListParams) ([]*store.HistoryEntry, error) {
	var jobID int64
	err := d.crud.jobID.QueryRowContext(ctx, jobKeyArgs(params.Job)...).Scan(&jobID)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("history list: job %s: %w", params.Job.Name, store.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("history list: %w", err)
	}
	var rows *sql.Rows
	if params.Status != "" {
		rows, err = d.crud.historyListStatus.QueryContext(ctx, jobID, key(params.Status), limit(params.Limit), max(params.Skip, 0))
	} else {
		rows, err = d.crud.historyList.QueryContext(ctx, jobID, limit(params.Limit), max(params.Skip, 0))
	}
	if err != nil {
		return nil, fmt.Errorf("history list: %w", err)
	}
	defer rows.Close()
	out := []*store.HistoryEntry{}
	for rows.Next() {
		h, err := scanHistory(rows)
		if err != nil {
			return nil, fmt.Errorf("history list: %w", err)
		}
		out = append(out, h)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("history list: %w", err)
	}
	return out, nil
}

// crudStatements are the statements of the methods above (and jobByID of JobGetByID, which the
// dispatcher calls after every job write), prepared once when the store opens: database/sql
// otherwise parses a query string again on every call, about a fifth of a job PUT's time. Reads
// run on the read pool, where each connection prepares a statement the first time it runs it;
// writes run on the writer connection, in transactions through tx.StmtContext.
type crudStatements struct {
	// Read pool.
	collectionGet, collectionList, collectionListAll, collectionListGroup, collectionID *sql.Stmt
	jobGet, jobWithCollection, jobByID, jobID, jobList, jobListState, jobCount          *sql.Stmt
	historyList, historyListStatus                                                      *sql.Stmt
	// Writer.
	collectionLookup, collectionInsert, collectionUpdate, collectionByID, collectionDelete *sql.Stmt
	jobLookup, jobInsert, jobUpdate, jobDelete                                             *sql.Stmt
}

const (
	jobPage     = ` ORDER BY j.name_key LIMIT ? OFFSET ?`
	historyPage = ` ORDER BY repeat_count DESC, id DESC LIMIT ? OFFSET ?`
)

// prepareCRUD prepares the CRUD statements: reads on r, writes on w.
func (d *Driver) prepareCRUD(ctx context.Context, w, r *sql.DB) error {
	c := &d.crud
	for _, s := range []struct {
		dst *(*sql.Stmt)
		db  *sql.DB
		q   string
	}{
		{&c.collectionGet, r, `SELECT ` + sqlstore.CollectionColumns + ` FROM collections` + sqlstore.WhereCollectionKey},
		{&c.collectionList, r, `SELECT ` + sqlstore.CollectionColumns + ` FROM collections WHERE sub_key = ? ORDER BY rg_key, name_key LIMIT ? OFFSET ?`},
		{&c.collectionListAll, r, `SELECT ` + sqlstore.CollectionColumns + ` FROM collections ORDER BY sub_key, rg_key, name_key LIMIT ? OFFSET ?`},
		{&c.collectionListGroup, r, `SELECT ` + sqlstore.CollectionColumns + ` FROM collections WHERE sub_key = ? AND rg_key = ? ORDER BY rg_key, name_key LIMIT ? OFFSET ?`},
		{&c.collectionID, r, `SELECT id FROM collections` + sqlstore.WhereCollectionKey},
		{&c.jobGet, r, `SELECT ` + sqlstore.JobColumns + sqlstore.JobFrom + sqlstore.WhereJobKey},
		{&c.jobWithCollection, r, sqlstore.JobWithCollection},
		{&c.jobByID, r, `SELECT ` + sqlstore.JobColumns + sqlstore.JobFrom + ` WHERE j.id = ?`},
		{&c.jobID, r, `SELECT j.id` + sqlstore.JobFrom + sqlstore.WhereJobKey},
		{&c.jobList, r, `SELECT ` + sqlstore.JobColumns + sqlstore.JobFrom + ` WHERE j.collection_id = ?` + jobPage},
		{&c.jobListState, r, `SELECT ` + sqlstore.JobColumns + sqlstore.JobFrom + ` WHERE j.collection_id = ? AND lower(j.state) = ?` + jobPage},
		{&c.jobCount, r, sqlstore.JobCount},
		{&c.historyList, r, `SELECT ` + sqlstore.HistoryColumns + ` FROM history WHERE job_id = ?` + historyPage},
		{&c.historyListStatus, r, `SELECT ` + sqlstore.HistoryColumns + ` FROM history WHERE job_id = ? AND lower(status) = ?` + historyPage},

		{&c.collectionLookup, w, `SELECT id, version FROM collections` + sqlstore.WhereCollectionKey},
		{&c.collectionInsert, w, `INSERT INTO collections
			(subscription, resource_group, name, sub_key, rg_key, name_key, location, tags, properties, state, created_at, updated_at, version)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1) RETURNING id`},
		{&c.collectionUpdate, w, `UPDATE collections SET location = ?, tags = ?, properties = ?, state = ?, updated_at = ?, version = version + 1 WHERE id = ?`},
		{&c.collectionByID, w, `SELECT ` + sqlstore.CollectionColumns + ` FROM collections WHERE id = ?`},
		{&c.collectionDelete, w, `DELETE FROM collections` + sqlstore.WhereCollectionKey},
		// The collection's ID and job count, and the job's row when it exists, in one lookup.
		{&c.jobLookup, w, `SELECT c.id, c.job_count, c.version, c.subscription, c.resource_group, c.name, c.state,
			j.id, j.version, j.state, j.final_at, j.name, j.created_at FROM collections c
			LEFT JOIN jobs j ON j.collection_id = c.id AND j.name_key = ?
			WHERE c.sub_key = ? AND c.rg_key = ? AND c.name_key = ?`},
		{&c.jobInsert, w, `INSERT INTO jobs
			(collection_id, name, name_key, properties, state, created_at, updated_at, version,
			 execution_count, failure_count, faulted_count, consecutive_faults, last_execution_time, next_execution_time, final_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, 1, ?, ?, ?, ?, ?, ?, ?)`},
		{&c.jobUpdate, w, `UPDATE jobs SET properties = ?, state = ?, updated_at = ?, version = version + 1,
			execution_count = ?, failure_count = ?, faulted_count = ?, consecutive_faults = ?,
			last_execution_time = ?, next_execution_time = ?, final_at = ? WHERE id = ?`},
		{&c.jobDelete, w, `DELETE FROM jobs WHERE id IN (SELECT j.id` + sqlstore.JobFrom + sqlstore.WhereJobKey + `)`},
	} {
		stmt, err := s.db.PrepareContext(ctx, s.q)
		if err != nil {
			return fmt.Errorf("prepare %s: %w", s.q, err)
		}
		*s.dst = stmt
	}
	return nil
}

// close closes the prepared CRUD statements.
func (c *crudStatements) close() error {
	var errs []error
	for _, s := range []*sql.Stmt{
		c.collectionGet, c.collectionList, c.collectionListAll, c.collectionListGroup, c.collectionID,
		c.jobGet, c.jobWithCollection, c.jobByID, c.jobID, c.jobList, c.jobListState, c.jobCount, c.historyList, c.historyListStatus,
		c.collectionLookup, c.collectionInsert, c.collectionUpdate, c.collectionByID, c.collectionDelete,
		c.jobLookup, c.jobInsert, c.jobUpdate, c.jobDelete,
	} {
		if s != nil {
			errs = append(errs, s.Close())
		}
	}
	return errors.Join(errs...)
}
