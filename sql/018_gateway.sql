-- 018: the gateway's keys (SPEC 14): the Binance-style API key and secret a bot signs its requests
-- with. The key is found by its SHA-256 (api_key_hash, unique) and never stored in clear; the
-- secret is sealed with the data dir's secrets.key (AES-256-GCM, bound to the tenant and the key's
-- id), since the gateway must read it back to check each request's HMAC. api_key_prefix (its first
-- 8 characters) tells keys apart in lists. revoked_at: NULL while the key is live.
CREATE TABLE gateway_keys (
  id              TEXT PRIMARY KEY,
  tenant_id       TEXT NOT NULL REFERENCES tenants(id),
  name            TEXT NOT NULL,
  api_key_prefix  TEXT NOT NULL,
  api_key_hash    TEXT NOT NULL UNIQUE,
  secret_sealed   TEXT NOT NULL,
  created_at      TEXT NOT NULL,
  revoked_at      TEXT
) STRICT;
CREATE INDEX gateway_keys_tenant ON gateway_keys(tenant_id, id);
