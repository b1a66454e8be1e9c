-- A backfill's executions (store.ExecutionBackfill): they run one after the other, the waiting
-- ones due at store.BackfillWaiting until the previous one finishes.
ALTER TABLE executions ADD COLUMN backfill INTEGER NOT NULL DEFAULT 0;
