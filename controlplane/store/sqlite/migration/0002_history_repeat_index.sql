-- The per-job history limit ("the last 1,000 executions") is purged by repeat count: executions
-- of a job are numbered by its execution_count, so those at or below execution_count - limit go.
CREATE INDEX history_job_repeat ON history (job_id, repeat_count);
