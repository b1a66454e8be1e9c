-- Times are timestamptz (microseconds); NULL is "none". Key columns hold the lower-cased names so
-- that names compare case-insensitively while records keep their spelling.
CREATE TABLE collections (
	id             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	subscription   text        NOT NULL,
	resource_group text        NOT NULL,
	name           text        NOT NULL,
	sub_key        text COLLATE "C"     NOT NULL,
	rg_key         text COLLATE "C"     NOT NULL,
	name_key       text COLLATE "C"     NOT NULL,
	location       text        NOT NULL,
	tags           text        NOT NULL,
	properties     text        NOT NULL,
	state          text        NOT NULL,
	created_at     timestamptz NOT NULL,
	updated_at     timestamptz NOT NULL,
	version        bigint      NOT NULL,
	job_count      integer     NOT NULL DEFAULT 0,
	UNIQUE (sub_key, rg_key, name_key)
);

CREATE TABLE jobs (
	id                  bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	collection_id       bigint      NOT NULL REFERENCES collections (id) ON DELETE CASCADE,
	name                text        NOT NULL,
	name_key            text COLLATE "C"     NOT NULL,
	properties          text        NOT NULL,
	state               text        NOT NULL,
	created_at          timestamptz NOT NULL,
	updated_at          timestamptz NOT NULL,
	version             bigint      NOT NULL,
	execution_count     integer     NOT NULL DEFAULT 0,
	failure_count       integer     NOT NULL DEFAULT 0,
	faulted_count       integer     NOT NULL DEFAULT 0,
	consecutive_faults  integer     NOT NULL DEFAULT 0,
	last_execution_time timestamptz,
	next_execution_time timestamptz,
	final_at            timestamptz,
	UNIQUE (collection_id, name_key)
);
CREATE INDEX jobs_final ON jobs (final_at) WHERE final_at IS NOT NULL;
CREATE INDEX jobs_schedulable ON jobs (id) WHERE state = 'Enabled' AND next_execution_time IS NOT NULL;

-- Each collection's number of jobs, kept by triggers, so that a job create checks the quota
-- without counting the collection's jobs.
CREATE FUNCTION jobs_count() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	IF TG_OP = 'INSERT' THEN
		UPDATE collections SET job_count = job_count + 1 WHERE id = NEW.collection_id;
	ELSE
		UPDATE collections SET job_count = job_count - 1 WHERE id = OLD.collection_id;
	END IF;
	RETURN NULL;
END $$;
CREATE TRIGGER jobs_counted AFTER INSERT OR DELETE ON jobs FOR EACH ROW EXECUTE FUNCTION jobs_count();

CREATE TABLE executions (
	id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	job_id       bigint      NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
	tag          text        NOT NULL,
	scheduled    timestamptz,
	repeat_count integer     NOT NULL,
	missed       integer     NOT NULL,
	manual       boolean     NOT NULL,
	phase        text        NOT NULL,
	attempt      integer     NOT NULL,
	due_at       timestamptz,
	claimed_at   timestamptz
);
CREATE INDEX executions_job ON executions (job_id);

CREATE TABLE history (
	id                      bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	job_id                  bigint      NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
	execution_id            bigint      NOT NULL,
	execution_tag           text        NOT NULL,
	action_name             text        NOT NULL,
	status                  text        NOT NULL,
	message                 text        NOT NULL,
	retry_count             integer     NOT NULL,
	repeat_count            integer     NOT NULL,
	expected_execution_time timestamptz,
	start_time              timestamptz,
	end_time                timestamptz
);
CREATE INDEX history_job_repeat ON history (job_id, repeat_count, id);
CREATE INDEX history_end ON history (end_time);

-- The leader of the replicas sharing this database: one row, a term bumped by every takeover and
-- an expiry the leader pushes forward while it is alive.
CREATE TABLE leader (
	name       text        PRIMARY KEY,
	replica    text        NOT NULL,
	term       bigint      NOT NULL,
	expires_at timestamptz NOT NULL
);
