-- 017: facts about the database itself (SPEC 15). secrets_fingerprint: the fingerprint of the secrets
-- (the sealing key, the session signing key) the first command that opened this database after 017
-- was given; a node with other secrets refuses to start (src/store/secrets-fingerprint.ts).
CREATE TABLE store_meta (
  key    TEXT PRIMARY KEY,
  value  TEXT NOT NULL
) STRICT;
