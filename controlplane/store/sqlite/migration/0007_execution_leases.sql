-- The owner and lease of an execution (store.Leases). One SQLite process runs what it claims and
-- leaves its executions unowned; the columns make it behave as the PostgreSQL driver does. No
-- index: claims stay as cheap as they were, and takes are for replicas.
ALTER TABLE executions ADD COLUMN owner TEXT NOT NULL DEFAULT '';
ALTER TABLE executions ADD COLUMN lease_until INTEGER NOT NULL DEFAULT 0;
