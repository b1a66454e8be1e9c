-- Each collection's number of jobs, kept by triggers, so that a job create checks the
-- collection's job quota (maxJobCount) without counting the collection's jobs. A job never
-- moves to another collection.
ALTER TABLE collections ADD COLUMN job_count INTEGER NOT NULL DEFAULT 0;
UPDATE collections SET job_count = (SELECT count(*) FROM jobs WHERE jobs.collection_id = collections.id);
CREATE TRIGGER jobs_counted AFTER INSERT ON jobs BEGIN
	UPDATE collections SET job_count = job_count + 1 WHERE id = NEW.collection_id;
END;
CREATE TRIGGER jobs_uncounted AFTER DELETE ON jobs BEGIN
	UPDATE collections SET job_count = job_count - 1 WHERE id = OLD.collection_id;
END;
