-- A job's history was indexed twice: (job_id, id) to list it and (job_id, repeat_count) to purge
-- it beyond the last executions kept. Every attempt record wrote both, each on a page of its own
-- (entries of the jobs due together are scattered across the index). The second one serves both:
-- SQLite appends the rowid to index entries, so it is (job_id, repeat_count, id), and a job's
-- history is listed newest execution first, each execution's attempts newest first.
DROP INDEX history_job;
