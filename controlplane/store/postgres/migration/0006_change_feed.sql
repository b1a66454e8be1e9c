-- The change feed: every job or collection written or deleted through the API inserts a row here
-- in the transaction that writes it, and the row is notified (NOTIFY on the schema's channel) by
-- the trigger below, in that transaction too: a committed change is always notified and an
-- uncommitted one never is. A notification is only the fast path: a replica that missed some
-- (its LISTEN connection dropped, or it was not listening yet) reads the rows committed since it
-- last read (store.ChangeFeed). xid is the writing transaction's id: a reader asks for the rows
-- of the transactions that were still running, or not started, when it last read (their ids
-- are in its snapshot), so that a transaction that commits late is never skipped.
CREATE TABLE changes (
	seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	xid xid8 NOT NULL DEFAULT pg_current_xact_id(),
	kind text NOT NULL,
	id bigint NOT NULL,
	origin text NOT NULL,
	at timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX changes_xid ON changes (xid);
-- The payload is kind:id:seq:origin; the channel is the one the driver listens on
-- ("scheduler_" and the schema's name).
CREATE FUNCTION changes_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	PERFORM pg_notify('scheduler_' || TG_TABLE_SCHEMA, NEW.kind || ':' || NEW.id || ':' || NEW.seq || ':' || NEW.origin);
	RETURN NULL;
END $$;
CREATE TRIGGER changes_notified AFTER INSERT ON changes FOR EACH ROW EXECUTE FUNCTION changes_notify();
