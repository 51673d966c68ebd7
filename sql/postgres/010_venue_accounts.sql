-- 010 (PostgreSQL): a tenant's venue account (sql/010_venue_accounts.sql, SPEC 10).
CREATE TABLE venue_accounts (
  tenant_id        text PRIMARY KEY REFERENCES tenants(id),
  exchange         text NOT NULL,
  api_key_hint     text NOT NULL,
  api_key_sealed   text NOT NULL,
  secret_sealed    text NOT NULL,
  password_sealed  text,
  status           text NOT NULL CHECK (status IN ('CONNECTED', 'FAILING')),
  can_trade        integer NOT NULL CHECK (can_trade IN (0, 1)),
  can_withdraw     integer CHECK (can_withdraw IN (0, 1)),   -- NULL: the venue does not tell
  checked_at       text NOT NULL,
  connected_at     text NOT NULL,
  connected_by     text NOT NULL
);
