-- 022: the signatures of the gateway's changes (SPEC 14: a captured request must not replay). A
-- POST or DELETE a bot signs is recorded in the transaction of the change it made, so the same
-- bytes sent again are refused (-1022) after a restart and on every node of a cluster, until
-- expires_at (ms: the request's timestamp + its recvWindow + 1 s), after which -1021 refuses them
-- anyway and the nightly upkeep deletes the row. Reads are guarded in each node's memory only.
CREATE TABLE gateway_signatures (
  key_id      TEXT NOT NULL REFERENCES gateway_keys(id),
  signature   TEXT NOT NULL,
  expires_at  INTEGER NOT NULL,
  PRIMARY KEY (key_id, signature)
) STRICT, WITHOUT ROWID;
CREATE INDEX gateway_signatures_expiry ON gateway_signatures(expires_at);
