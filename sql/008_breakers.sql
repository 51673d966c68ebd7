-- 008: equity, circuit breakers and the dead man's switch (SPEC 9).

-- The limits, each NULL (off) by default; capital_usd is what equity starts from.
ALTER TABLE risk_profiles ADD COLUMN capital_usd REAL NOT NULL DEFAULT 10000 CHECK (capital_usd > 0);
ALTER TABLE risk_profiles ADD COLUMN max_daily_loss_usd REAL CHECK (max_daily_loss_usd > 0);
ALTER TABLE risk_profiles ADD COLUMN max_drawdown_pct REAL CHECK (max_drawdown_pct > 0 AND max_drawdown_pct <= 100);
ALTER TABLE risk_profiles ADD COLUMN max_consecutive_losses INTEGER CHECK (max_consecutive_losses > 0);
ALTER TABLE risk_profiles ADD COLUMN breaker_action TEXT NOT NULL DEFAULT 'CANCEL_AND_PAUSE' CHECK (breaker_action IN ('CANCEL_AND_PAUSE', 'FLATTEN'));
ALTER TABLE risk_profiles ADD COLUMN max_order_notional_usd REAL CHECK (max_order_notional_usd > 0);
ALTER TABLE risk_profiles ADD COLUMN price_band_pct REAL CHECK (price_band_pct > 0);
ALTER TABLE risk_profiles ADD COLUMN max_trades_per_day INTEGER CHECK (max_trades_per_day > 0);
ALTER TABLE risk_profiles ADD COLUMN max_orders_per_minute INTEGER CHECK (max_orders_per_minute > 0);

-- What the loss breakers measure from: the equity at the first look of the UTC day, the peak since
-- the last reset, and the moment consecutive losses count from (the last reset).
CREATE TABLE equity_state (
  tenant_id         TEXT PRIMARY KEY REFERENCES tenants(id),
  day               TEXT NOT NULL,
  day_start_equity  REAL NOT NULL,
  peak_equity       REAL NOT NULL,
  losses_since      TEXT NOT NULL,
  updated_at        TEXT NOT NULL
) STRICT;

-- One point per tenant and UTC day, written at the day's end (and caught up at start).
CREATE TABLE equity_history (
  tenant_id     TEXT NOT NULL REFERENCES tenants(id),
  date          TEXT NOT NULL,
  equity_usd    REAL NOT NULL,
  pnl_usd       REAL NOT NULL,
  drawdown_pct  REAL NOT NULL,
  exposure_usd  REAL NOT NULL,
  PRIMARY KEY (tenant_id, date)
) STRICT, WITHOUT ROWID;

-- A breaker that tripped stays tripped until a fleet RESUME: nothing resumes by itself.
CREATE TABLE breaker_trips (
  tenant_id    TEXT NOT NULL REFERENCES tenants(id),
  breaker      TEXT NOT NULL,
  incident_id  TEXT NOT NULL REFERENCES incidents(id),
  tripped_at   TEXT NOT NULL,
  PRIMARY KEY (tenant_id, breaker)
) STRICT, WITHOUT ROWID;

-- risk.limit.warning goes out once per limit per UTC day.
CREATE TABLE breaker_warnings (
  tenant_id  TEXT NOT NULL REFERENCES tenants(id),
  breaker    TEXT NOT NULL,
  day        TEXT NOT NULL,
  PRIMARY KEY (tenant_id, breaker, day)
) STRICT, WITHOUT ROWID;

-- The dead man's switch: stored, so that a restart after the deadline fires at once.
CREATE TABLE dead_man_switches (
  tenant_id          TEXT PRIMARY KEY REFERENCES tenants(id),
  status             TEXT NOT NULL CHECK (status IN ('ARMED', 'DISARMED', 'FIRED')),
  timeout_seconds    INTEGER NOT NULL CHECK (timeout_seconds BETWEEN 10 AND 86400),
  action             TEXT NOT NULL CHECK (action IN ('CANCEL_AND_PAUSE', 'FLATTEN')),
  model_id           TEXT,
  armed_at           TEXT NOT NULL,
  armed_by           TEXT NOT NULL,
  last_heartbeat_at  TEXT,
  deadline           TEXT NOT NULL,
  fired_at           TEXT,
  incident_id        TEXT REFERENCES incidents(id)
) STRICT;
CREATE INDEX dead_man_switches_armed ON dead_man_switches(deadline) WHERE status = 'ARMED';

-- The runaway and per-day counts, and the equity sums, read by index.
CREATE INDEX orders_tenant_created ON orders(tenant_id, created_at);
CREATE INDEX trades_tenant_open ON trades(tenant_id, pair) WHERE status = 'OPEN';
CREATE INDEX trades_open_pair ON trades(pair, tenant_id) WHERE status = 'OPEN';
CREATE INDEX trades_tenant_closed ON trades(tenant_id, closed_at) WHERE status = 'CLOSED';
CREATE INDEX trades_closed_at ON trades(closed_at) WHERE status = 'CLOSED';
