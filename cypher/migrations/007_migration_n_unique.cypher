// Each migration is recorded once, as (:Migration {n, name, at}).
CREATE CONSTRAINT migration_n IF NOT EXISTS
FOR (m:Migration) REQUIRE m.n IS UNIQUE
