-- Executions are shared among replicas: the leader claims them unowned, an executor takes a
-- batch (owner, a lease it renews while the attempts run), and the leader's rescuer clears the
-- owner of those whose lease ended (a dead replica's), so that another takes them again.
ALTER TABLE executions ADD COLUMN owner text COLLATE "C" NOT NULL DEFAULT '';
ALTER TABLE executions ADD COLUMN lease_until timestamptz;
-- Takers look for unowned executions by due time.
CREATE INDEX executions_unowned ON executions (due_at, id) WHERE owner = '';
