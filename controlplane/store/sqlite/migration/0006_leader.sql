-- The leadership row (store.Leadership). One SQLite process is the only replica there is; the
-- row makes it behave as the PostgreSQL driver does (terms, fencing of claims).
CREATE TABLE leader (
	name       TEXT    PRIMARY KEY,
	replica    TEXT    NOT NULL,
	term       INTEGER NOT NULL,
	expires_at INTEGER NOT NULL
);
