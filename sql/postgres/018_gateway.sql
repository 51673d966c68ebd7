-- 018 (PostgreSQL): the gateway's keys (sql/018_gateway.sql, SPEC 14).
CREATE TABLE gateway_keys (
  id              text PRIMARY KEY,
  tenant_id       text NOT NULL REFERENCES tenants(id),
  name            text NOT NULL,
  api_key_prefix  text NOT NULL,
  api_key_hash    text NOT NULL UNIQUE,
  secret_sealed   text NOT NULL,
  created_at      text NOT NULL,
  revoked_at      text
);
CREATE INDEX gateway_keys_tenant ON gateway_keys(tenant_id, id);
