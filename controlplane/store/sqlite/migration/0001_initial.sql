-- Times are Unix nanoseconds (UTC); 0 is "none". Key columns hold the lower-cased names so that
-- names compare case-insensitively while records keep their spelling.
CREATE TABLE collections (
	id              INTEGER PRIMARY KEY AUTOINCREMENT,
	subscription    TEXT    NOT NULL,
	resource_group  TEXT    NOT NULL,
	name            TEXT    NOT NULL,
	sub_key         TEXT    NOT NULL,
	rg_key          TEXT    NOT NULL,
	name_key        TEXT    NOT NULL,
	location        TEXT    NOT NULL,
	tags            TEXT    NOT NULL,
	properties      TEXT    NOT NULL,
	state           TEXT    NOT NULL,
	created_at      INTEGER NOT NULL,
	updated_at      INTEGER NOT NULL,
	version         INTEGER NOT NULL,
	UNIQUE (sub_key, rg_key, name_key)
);

CREATE TABLE jobs (
	id                  INTEGER PRIMARY KEY AUTOINCREMENT,
	collection_id       INTEGER NOT NULL REFERENCES collections (id) ON DELETE CASCADE,
	name                TEXT    NOT NULL,
	name_key            TEXT    NOT NULL,
	properties          TEXT    NOT NULL,
	state               TEXT    NOT NULL,
	created_at          INTEGER NOT NULL,
	updated_at          INTEGER NOT NULL,
	version             INTEGER NOT NULL,
	execution_count     INTEGER NOT NULL DEFAULT 0,
	failure_count       INTEGER NOT NULL DEFAULT 0,
	faulted_count       INTEGER NOT NULL DEFAULT 0,
	consecutive_faults  INTEGER NOT NULL DEFAULT 0,
	last_execution_time INTEGER NOT NULL DEFAULT 0,
	next_execution_time INTEGER NOT NULL DEFAULT 0,
	final_at            INTEGER NOT NULL DEFAULT 0,
	UNIQUE (collection_id, name_key)
);
CREATE INDEX jobs_final ON jobs (final_at) WHERE final_at > 0;

CREATE TABLE executions (
	id           INTEGER PRIMARY KEY AUTOINCREMENT,
	job_id       INTEGER NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
	tag          TEXT    NOT NULL,
	scheduled    INTEGER NOT NULL,
	repeat_count INTEGER NOT NULL,
	missed       INTEGER NOT NULL,
	manual       INTEGER NOT NULL,
	phase        TEXT    NOT NULL,
	attempt      INTEGER NOT NULL,
	due_at       INTEGER NOT NULL,
	claimed_at   INTEGER NOT NULL
);
CREATE INDEX executions_job ON executions (job_id);

CREATE TABLE history (
	id                      INTEGER PRIMARY KEY AUTOINCREMENT,
	job_id                  INTEGER NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
	execution_id            INTEGER NOT NULL,
	execution_tag           TEXT    NOT NULL,
	action_name             TEXT    NOT NULL,
	status                  TEXT    NOT NULL,
	message                 TEXT    NOT NULL,
	retry_count             INTEGER NOT NULL,
	repeat_count            INTEGER NOT NULL,
	expected_execution_time INTEGER NOT NULL,
	start_time              INTEGER NOT NULL,
	end_time                INTEGER NOT NULL
);
CREATE INDEX history_job ON history (job_id, id);
CREATE INDEX history_end ON history (end_time);
