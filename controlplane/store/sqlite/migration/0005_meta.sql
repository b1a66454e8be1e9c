-- The daemon's own settings: the check value of the secret key the stored secrets are sealed
-- with, and the row /readyz writes to prove the store can commit.
CREATE TABLE meta (
    name  TEXT PRIMARY KEY,
    value TEXT NOT NULL
) WITHOUT ROWID;
