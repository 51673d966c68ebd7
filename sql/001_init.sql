-- 001: tenants, users, API keys, the model catalogue, workspaces, risk profiles, signals, trades,
-- the incident chain and idempotency records.

CREATE TABLE tenants (
  id          TEXT PRIMARY KEY,
  slug        TEXT NOT NULL UNIQUE,
  plan        TEXT NOT NULL CHECK (plan IN ('SIGNAL', 'EXECUTE')),
  created_at  TEXT NOT NULL
) STRICT;

CREATE TABLE users (
  id             TEXT PRIMARY KEY,
  tenant_id      TEXT NOT NULL REFERENCES tenants(id),
  email          TEXT NOT NULL UNIQUE COLLATE NOCASE,
  password_hash  TEXT NOT NULL,
  role           TEXT NOT NULL CHECK (role IN ('owner', 'admin', 'viewer')),
  created_at     TEXT NOT NULL
) STRICT;
CREATE INDEX users_tenant ON users(tenant_id);

-- Only a SHA-256 of each key is kept; the key itself is shown once.
CREATE TABLE api_keys (
  id            TEXT PRIMARY KEY,
  tenant_id     TEXT NOT NULL REFERENCES tenants(id),
  created_by    TEXT REFERENCES users(id),
  name          TEXT NOT NULL,
  prefix        TEXT NOT NULL,
  key_hash      TEXT NOT NULL UNIQUE,
  scopes        TEXT NOT NULL,               -- JSON array
  created_at    TEXT NOT NULL,
  expires_at    TEXT,
  revoked_at    TEXT,
  last_used_at  TEXT
) STRICT;
CREATE INDEX api_keys_tenant ON api_keys(tenant_id, id);

CREATE TABLE models (
  id            TEXT PRIMARY KEY,
  name          TEXT NOT NULL,
  strategy      TEXT NOT NULL,
  version       TEXT NOT NULL,
  status        TEXT NOT NULL CHECK (status IN ('FORWARD_PAPER', 'FORWARD_LIVE', 'RETIRED')),
  universe      TEXT NOT NULL,               -- JSON array of BASE/QUOTE pairs
  parameters    TEXT NOT NULL,               -- JSON object
  hash          TEXT NOT NULL,               -- sha256_hex(canonical_json({id, version, parameters}))
  schedule_utc  TEXT NOT NULL                -- HH:MM
) STRICT;

INSERT INTO models VALUES
  ('trend-follower', 'Trend Follower', 'ema_cross', '1.0.0', 'FORWARD_PAPER',
   '["BTC/USDT","ETH/USDT","SOL/USDT","BNB/USDT","XRP/USDT"]',
   '{"fast_ema":20,"slow_ema":50,"band_pct":0.5}',
   'b370e8211a8d0ca4c29effb6667f134fa0c6c4a52ecc486fa9b50b770861cf78', '00:05'),
  ('mean-reversion', 'Mean Reversion', 'zscore_reversion', '1.0.0', 'FORWARD_PAPER',
   '["ADA/USDT","DOGE/USDT","AVAX/USDT","LINK/USDT","DOT/USDT"]',
   '{"lookback":20,"entry_z":-1.5,"exit_z":0}',
   '42899cbdff44b5db3acae4b44d76ea33343aee1dfccc0f31d92fe3a4b4e7b173', '00:10'),
  ('breakout-momentum', 'Breakout Momentum', 'donchian_breakout', '1.0.0', 'FORWARD_PAPER',
   '["BTC/USDT","ETH/USDT","SOL/USDT","LTC/USDT","TRX/USDT"]',
   '{"entry_lookback":20,"exit_lookback":10}',
   '51dfea4b36a66493de33e0eecd29f6dd1f353244d27d895741aba16548600fdd', '00:15');

CREATE TABLE workspace_models (
  tenant_id  TEXT NOT NULL REFERENCES tenants(id),
  model_id   TEXT NOT NULL REFERENCES models(id),
  PRIMARY KEY (tenant_id, model_id)
) STRICT, WITHOUT ROWID;

CREATE TABLE risk_profiles (
  tenant_id         TEXT PRIMARY KEY REFERENCES tenants(id),
  max_open_trades   INTEGER NOT NULL CHECK (max_open_trades > 0),
  max_exposure_usd  REAL NOT NULL CHECK (max_exposure_usd > 0),
  trading_paused    INTEGER NOT NULL DEFAULT 0 CHECK (trading_paused IN (0, 1)),
  fee_bps           REAL NOT NULL DEFAULT 10,
  slippage_bps      REAL NOT NULL DEFAULT 5,
  updated_at        TEXT NOT NULL
) STRICT;

CREATE TABLE paused_models (
  tenant_id  TEXT NOT NULL REFERENCES tenants(id),
  model_id   TEXT NOT NULL REFERENCES models(id),
  PRIMARY KEY (tenant_id, model_id)
) STRICT, WITHOUT ROWID;

-- A model publishes once per date; tenants see the signals of their active models.
CREATE TABLE signals (
  id           TEXT PRIMARY KEY,
  model_id     TEXT NOT NULL REFERENCES models(id),
  pair         TEXT NOT NULL,
  action       TEXT NOT NULL CHECK (action IN ('ENTER_LONG', 'HOLD', 'EXIT_LONG')),
  direction    TEXT NOT NULL CHECK (direction IN ('LONG', 'HOLD', 'DE-RISK')),
  entry_price  REAL NOT NULL,
  as_of        TEXT NOT NULL,
  created_at   TEXT NOT NULL,
  UNIQUE (model_id, as_of, pair)
) STRICT;
CREATE INDEX signals_model_id ON signals(model_id, id);

CREATE TABLE trades (
  id             TEXT PRIMARY KEY,
  tenant_id      TEXT NOT NULL REFERENCES tenants(id),
  model_id       TEXT REFERENCES models(id),
  pair           TEXT NOT NULL,
  direction      TEXT NOT NULL CHECK (direction IN ('LONG')),
  mode           TEXT NOT NULL CHECK (mode IN ('PAPER', 'LIVE')),
  quantity       REAL NOT NULL,
  entry_price    REAL NOT NULL,
  exit_price     REAL,
  gross_pnl_pct  REAL,
  pnl_pct        REAL,
  fees_usd       REAL NOT NULL DEFAULT 0,
  slippage_usd   REAL NOT NULL DEFAULT 0,
  status         TEXT NOT NULL CHECK (status IN ('OPEN', 'CLOSED')),
  opened_at      TEXT NOT NULL,
  closed_at      TEXT
) STRICT;
CREATE INDEX trades_tenant ON trades(tenant_id, id);

-- The incident trail: a per-tenant SHA-256 hash chain; rows can never change or go.
CREATE TABLE incidents (
  seq        INTEGER PRIMARY KEY,
  id         TEXT NOT NULL UNIQUE,
  tenant_id  TEXT NOT NULL REFERENCES tenants(id),
  action     TEXT NOT NULL,
  actor      TEXT NOT NULL,
  status     TEXT NOT NULL,
  timestamp  TEXT NOT NULL,
  model_id   TEXT NOT NULL,
  reason     TEXT,
  prev_hash  TEXT NOT NULL,
  hash       TEXT NOT NULL
) STRICT;
CREATE INDEX incidents_tenant ON incidents(tenant_id, seq);
CREATE INDEX incidents_tenant_id ON incidents(tenant_id, id);
CREATE TRIGGER incidents_no_update BEFORE UPDATE ON incidents
  BEGIN SELECT RAISE(ABORT, 'incidents are immutable'); END;
CREATE TRIGGER incidents_no_delete BEFORE DELETE ON incidents
  BEGIN SELECT RAISE(ABORT, 'incidents are immutable'); END;

-- POST replays: the same Idempotency-Key and body within 24 h answers with the first response.
CREATE TABLE idempotency_keys (
  owner         TEXT NOT NULL,               -- the credential's tenant (or "anon:" + address)
  key           TEXT NOT NULL,
  request_hash  TEXT NOT NULL,
  status        INTEGER NOT NULL,
  body          TEXT NOT NULL,
  created_at    INTEGER NOT NULL,            -- epoch ms
  PRIMARY KEY (owner, key)
) STRICT, WITHOUT ROWID;
