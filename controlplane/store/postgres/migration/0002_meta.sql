-- The daemon's own settings: the check value of the secret key the stored secrets are sealed
-- with (shared by every replica), and the row /readyz writes to prove the store can commit.
CREATE TABLE meta (
	name  text COLLATE "C" PRIMARY KEY,
	value text NOT NULL
);
