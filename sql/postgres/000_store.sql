-- 000 (PostgreSQL only): facts about the database itself, the table the Store needs before any
-- feature's (the secrets fingerprint, SPEC 15). SQLite's counterpart is sql/017_store_meta.sql;
-- sql/postgres/001.. follow SQLite's numbers from here on (017 then has nothing left to add).
CREATE TABLE store_meta (
  key    text PRIMARY KEY,
  value  text NOT NULL
);
