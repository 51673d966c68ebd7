-- 010: a tenant's venue account (SPEC 10): the exchange and its API credentials, sealed with the
-- data dir's secrets.key (AES-256-GCM, bound to the tenant and the field), never shown again.
CREATE TABLE venue_accounts (
  tenant_id        TEXT PRIMARY KEY REFERENCES tenants(id),
  exchange         TEXT NOT NULL,
  api_key_hint     TEXT NOT NULL,              -- the key's last 4 characters, for people to tell keys apart
  api_key_sealed   TEXT NOT NULL,
  secret_sealed    TEXT NOT NULL,
  password_sealed  TEXT,                       -- the passphrase some exchanges add (OKX, KuCoin)
  status           TEXT NOT NULL CHECK (status IN ('CONNECTED', 'FAILING')),
  can_trade        INTEGER NOT NULL CHECK (can_trade IN (0, 1)),
  can_withdraw     INTEGER CHECK (can_withdraw IN (0, 1)),   -- NULL: the venue does not tell
  checked_at       TEXT NOT NULL,
  connected_at     TEXT NOT NULL,
  connected_by     TEXT NOT NULL
) STRICT;
