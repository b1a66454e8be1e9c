-- The job count and the change notifications are kept by statement triggers, which see the
-- statement's rows as a transition table, instead of row triggers. A statement that creates a
-- group of jobs (jobPutGroupStatement) updates each collection's row once, not once per job:
-- every update of that row in one transaction added a version the next update and every lookup
-- of the collection walked to (until vacuumed), and each row trigger ran its own statement.
-- Transition tables take one event per trigger: insert and delete are two.
DROP TRIGGER jobs_counted ON jobs;
DROP FUNCTION jobs_count();
CREATE FUNCTION jobs_count_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	UPDATE collections c SET job_count = c.job_count + n.n
	FROM (SELECT collection_id, count(*)::integer AS n FROM inserted GROUP BY collection_id) n WHERE c.id = n.collection_id;
	RETURN NULL;
END $$;
CREATE FUNCTION jobs_count_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	UPDATE collections c SET job_count = c.job_count - n.n
	FROM (SELECT collection_id, count(*)::integer AS n FROM deleted GROUP BY collection_id) n WHERE c.id = n.collection_id;
	RETURN NULL;
END $$;
CREATE TRIGGER jobs_counted_inserted AFTER INSERT ON jobs REFERENCING NEW TABLE AS inserted
	FOR EACH STATEMENT EXECUTE FUNCTION jobs_count_inserted();
CREATE TRIGGER jobs_counted_deleted AFTER DELETE ON jobs REFERENCING OLD TABLE AS deleted
	FOR EACH STATEMENT EXECUTE FUNCTION jobs_count_deleted();

-- One pg_notify statement per inserting statement, its rows notified in the order of their
-- sequence numbers (the payload is unchanged: kind:id:seq:origin).
DROP TRIGGER changes_notified ON changes;
DROP FUNCTION changes_notify();
CREATE FUNCTION changes_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	PERFORM pg_notify('scheduler_' || TG_TABLE_SCHEMA, n.kind || ':' || n.id || ':' || n.seq || ':' || n.origin)
	FROM (SELECT kind, id, seq, origin FROM inserted ORDER BY seq) n;
	RETURN NULL;
END $$;
CREATE TRIGGER changes_notified AFTER INSERT ON changes REFERENCING NEW TABLE AS inserted
	FOR EACH STATEMENT EXECUTE FUNCTION changes_notify();
