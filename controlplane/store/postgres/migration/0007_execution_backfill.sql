-- A backfill's executions (store.ExecutionBackfill): they run one after the other, the waiting
-- ones due at store.BackfillWaiting until the previous one finishes.
ALTER TABLE executions ADD COLUMN backfill boolean NOT NULL DEFAULT false;
-- A finished backfill execution makes its job's next waiting one due.
CREATE INDEX executions_backfill ON executions (job_id, id) WHERE backfill;
