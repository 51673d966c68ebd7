-- 001 (PostgreSQL): tenants, users, API keys, the model catalogue, workspaces, risk profiles,
-- signals, trades, the incident chain and idempotency records. The counterpart of sql/001_init.sql:
-- TEXT -> text, INTEGER -> bigint (0/1 flags: integer), REAL -> double precision; SQLite's
-- rowid-alias keys (INTEGER PRIMARY KEY seq) are identity columns, assigned when the INSERT leaves
-- them out, as SQLite assigns a rowid.

-- SQLite's COLLATE NOCASE: a case-insensitive (ICU, level 2) nondeterministic collation, so that
-- UNIQUE and `email = ?` ignore case as they do on SQLite.
CREATE COLLATION IF NOT EXISTS nocase (provider = icu, locale = 'und-u-ks-level2', deterministic = false);

CREATE TABLE tenants (
  id          text PRIMARY KEY,
  slug        text NOT NULL UNIQUE,
  plan        text NOT NULL CHECK (plan IN ('SIGNAL', 'EXECUTE')),
  created_at  text NOT NULL
);

CREATE TABLE users (
  id             text PRIMARY KEY,
  tenant_id      text NOT NULL REFERENCES tenants(id),
  email          text COLLATE nocase NOT NULL UNIQUE,
  password_hash  text NOT NULL,
  role           text NOT NULL CHECK (role IN ('owner', 'admin', 'viewer')),
  created_at     text NOT NULL
);
CREATE INDEX users_tenant ON users(tenant_id);

-- Only a SHA-256 of each key is kept; the key itself is shown once.
CREATE TABLE api_keys (
  id            text PRIMARY KEY,
  tenant_id     text NOT NULL REFERENCES tenants(id),
  created_by    text REFERENCES users(id),
  name          text NOT NULL,
  prefix        text NOT NULL,
  key_hash      text NOT NULL UNIQUE,
  scopes        text NOT NULL,               -- JSON array
  created_at    text NOT NULL,
  expires_at    text,
  revoked_at    text,
  last_used_at  text
);
CREATE INDEX api_keys_tenant ON api_keys(tenant_id, id);

CREATE TABLE models (
  id            text PRIMARY KEY,
  name          text NOT NULL,
  strategy      text NOT NULL,
  version       text NOT NULL,
  status        text NOT NULL CHECK (status IN ('FORWARD_PAPER', 'FORWARD_LIVE', 'RETIRED')),
  universe      text NOT NULL,               -- JSON array of BASE/QUOTE pairs (symbols from 006)
  parameters    text NOT NULL,               -- JSON object
  hash          text NOT NULL,               -- sha256_hex(canonical_json({id, version, parameters}))
  schedule_utc  text NOT NULL                -- HH:MM
);

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
  tenant_id  text NOT NULL REFERENCES tenants(id),
  model_id   text NOT NULL REFERENCES models(id),
  PRIMARY KEY (tenant_id, model_id)
);

CREATE TABLE risk_profiles (
  tenant_id         text PRIMARY KEY REFERENCES tenants(id),
  max_open_trades   bigint NOT NULL CHECK (max_open_trades > 0),
  max_exposure_usd  double precision NOT NULL CHECK (max_exposure_usd > 0),
  trading_paused    integer NOT NULL DEFAULT 0 CHECK (trading_paused IN (0, 1)),
  fee_bps           double precision NOT NULL DEFAULT 10,
  slippage_bps      double precision NOT NULL DEFAULT 5,
  updated_at        text NOT NULL
);

CREATE TABLE paused_models (
  tenant_id  text NOT NULL REFERENCES tenants(id),
  model_id   text NOT NULL REFERENCES models(id),
  PRIMARY KEY (tenant_id, model_id)
);

-- A model publishes once per date; tenants see the signals of their active models.
CREATE TABLE signals (
  id           text PRIMARY KEY,
  model_id     text NOT NULL REFERENCES models(id),
  pair         text NOT NULL,
  action       text NOT NULL CHECK (action IN ('ENTER_LONG', 'HOLD', 'EXIT_LONG')),
  direction    text NOT NULL CHECK (direction IN ('LONG', 'HOLD', 'DE-RISK')),
  entry_price  double precision NOT NULL,
  as_of        text NOT NULL,
  created_at   text NOT NULL,
  UNIQUE (model_id, as_of, pair)
);
CREATE INDEX signals_model_id ON signals(model_id, id);

CREATE TABLE trades (
  id             text PRIMARY KEY,
  tenant_id      text NOT NULL REFERENCES tenants(id),
  model_id       text REFERENCES models(id),
  pair           text NOT NULL,
  direction      text NOT NULL CHECK (direction IN ('LONG')),
  mode           text NOT NULL CHECK (mode IN ('PAPER', 'LIVE')),
  quantity       double precision NOT NULL,
  entry_price    double precision NOT NULL,
  exit_price     double precision,
  gross_pnl_pct  double precision,
  pnl_pct        double precision,
  fees_usd       double precision NOT NULL DEFAULT 0,
  slippage_usd   double precision NOT NULL DEFAULT 0,
  status         text NOT NULL CHECK (status IN ('OPEN', 'CLOSED')),
  opened_at      text NOT NULL,
  closed_at      text
);
CREATE INDEX trades_tenant ON trades(tenant_id, id);

-- The incident trail: a per-tenant SHA-256 hash chain; rows can never change or go.
CREATE TABLE incidents (
  seq        bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
  id         text NOT NULL UNIQUE,
  tenant_id  text NOT NULL REFERENCES tenants(id),
  action     text NOT NULL,
  actor      text NOT NULL,
  status     text NOT NULL,
  timestamp  text NOT NULL,
  model_id   text NOT NULL,
  reason     text,
  prev_hash  text NOT NULL,
  hash       text NOT NULL
);
CREATE INDEX incidents_tenant ON incidents(tenant_id, seq);
CREATE INDEX incidents_tenant_id ON incidents(tenant_id, id);
-- SQLite's incidents_no_update / incidents_no_delete (RAISE(ABORT, ...)), with the same message.
-- PostgreSQL also has TRUNCATE, which row triggers do not see: refused too.
CREATE FUNCTION incidents_immutable() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'incidents are immutable';
END;
$$;
CREATE TRIGGER incidents_no_update BEFORE UPDATE ON incidents FOR EACH ROW EXECUTE FUNCTION incidents_immutable();
CREATE TRIGGER incidents_no_delete BEFORE DELETE ON incidents FOR EACH ROW EXECUTE FUNCTION incidents_immutable();
CREATE TRIGGER incidents_no_truncate BEFORE TRUNCATE ON incidents FOR EACH STATEMENT EXECUTE FUNCTION incidents_immutable();

-- POST replays: the same Idempotency-Key and body within 24 h answers with the first response.
CREATE TABLE idempotency_keys (
  owner         text NOT NULL,               -- the credential's tenant (or "anon:" + address)
  key           text NOT NULL,
  request_hash  text NOT NULL,
  status        bigint NOT NULL,
  body          text NOT NULL,
  created_at    bigint NOT NULL,             -- epoch ms
  PRIMARY KEY (owner, key)
);
