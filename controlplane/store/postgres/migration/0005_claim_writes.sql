-- Every claim inserts an execution and every record a history entry: their foreign keys to jobs
-- checked each inserted row with a lookup of its job (FOR KEY SHARE), about a fifth of a claim
-- batch's time. Both inserts name a job the same statement has just found (a claim inserts only
-- for the jobs it updated, a record only for the executions it deleted or updated), so the
-- check proves nothing; what the keys also did, deleting a job's executions and history with it,
-- a trigger does. It deletes executions first: a record committing meanwhile holds its
-- execution's row, so the trigger waits for it, and its next statement, with a new snapshot,
-- sees (and deletes) the history entry that record inserted.
ALTER TABLE executions DROP CONSTRAINT executions_job_id_fkey;
ALTER TABLE history DROP CONSTRAINT history_job_id_fkey;
CREATE FUNCTION jobs_cascade() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	DELETE FROM executions WHERE job_id = OLD.id;
	DELETE FROM history WHERE job_id = OLD.id;
	RETURN NULL;
END $$;
CREATE TRIGGER jobs_cascaded AFTER DELETE ON jobs FOR EACH ROW EXECUTE FUNCTION jobs_cascade();
-- A burst claims jobs created together, which share pages: every row of a page is rewritten in
-- one statement. With 20 % of each page free only the first few new versions fit (a HOT update,
-- no index entry); the others moved to other pages with an entry in each of the jobs' indexes
-- (three quarters of the updates of a 256-job batch, measured). Half of each page is left free,
-- room for a new version of every row; pruning frees the old ones before the next occurrence.
-- Pages written before this migration keep their fill until the table is rewritten (VACUUM
-- FULL jobs, or pg_repack, at a quiet time).
ALTER TABLE jobs SET (fillfactor = 50);
