-- 008 (PostgreSQL): equity, circuit breakers and the dead man's switch (sql/008_breakers.sql, SPEC 9).

ALTER TABLE risk_profiles ADD COLUMN capital_usd double precision NOT NULL DEFAULT 10000 CHECK (capital_usd > 0);
ALTER TABLE risk_profiles ADD COLUMN max_daily_loss_usd double precision CHECK (max_daily_loss_usd > 0);
ALTER TABLE risk_profiles ADD COLUMN max_drawdown_pct double precision CHECK (max_drawdown_pct > 0 AND max_drawdown_pct <= 100);
ALTER TABLE risk_profiles ADD COLUMN max_consecutive_losses bigint CHECK (max_consecutive_losses > 0);
ALTER TABLE risk_profiles ADD COLUMN breaker_action text NOT NULL DEFAULT 'CANCEL_AND_PAUSE' CHECK (breaker_action IN ('CANCEL_AND_PAUSE', 'FLATTEN'));
ALTER TABLE risk_profiles ADD COLUMN max_order_notional_usd double precision CHECK (max_order_notional_usd > 0);
ALTER TABLE risk_profiles ADD COLUMN price_band_pct double precision CHECK (price_band_pct > 0);
ALTER TABLE risk_profiles ADD COLUMN max_trades_per_day bigint CHECK (max_trades_per_day > 0);
ALTER TABLE risk_profiles ADD COLUMN max_orders_per_minute bigint CHECK (max_orders_per_minute > 0);

CREATE TABLE equity_state (
  tenant_id         text PRIMARY KEY REFERENCES tenants(id),
  day               text NOT NULL,
  day_start_equity  double precision NOT NULL,
  peak_equity       double precision NOT NULL,
  losses_since      text NOT NULL,
  updated_at        text NOT NULL
);

CREATE TABLE equity_history (
  tenant_id     text NOT NULL REFERENCES tenants(id),
  date          text NOT NULL,
  equity_usd    double precision NOT NULL,
  pnl_usd       double precision NOT NULL,
  drawdown_pct  double precision NOT NULL,
  exposure_usd  double precision NOT NULL,
  PRIMARY KEY (tenant_id, date)
);

CREATE TABLE breaker_trips (
  tenant_id    text NOT NULL REFERENCES tenants(id),
  breaker      text NOT NULL,
  incident_id  text NOT NULL REFERENCES incidents(id),
  tripped_at   text NOT NULL,
  PRIMARY KEY (tenant_id, breaker)
);

CREATE TABLE breaker_warnings (
  tenant_id  text NOT NULL REFERENCES tenants(id),
  breaker    text NOT NULL,
  day        text NOT NULL,
  PRIMARY KEY (tenant_id, breaker, day)
);

CREATE TABLE dead_man_switches (
  tenant_id          text PRIMARY KEY REFERENCES tenants(id),
  status             text NOT NULL CHECK (status IN ('ARMED', 'DISARMED', 'FIRED')),
  timeout_seconds    bigint NOT NULL CHECK (timeout_seconds BETWEEN 10 AND 86400),
  action             text NOT NULL CHECK (action IN ('CANCEL_AND_PAUSE', 'FLATTEN')),
  model_id           text,
  armed_at           text NOT NULL,
  armed_by           text NOT NULL,
  last_heartbeat_at  text,
  deadline           text NOT NULL,
  fired_at           text,
  incident_id        text REFERENCES incidents(id)
);
CREATE INDEX dead_man_switches_armed ON dead_man_switches(deadline) WHERE status = 'ARMED';

CREATE INDEX orders_tenant_created ON orders(tenant_id, created_at);
CREATE INDEX trades_tenant_open ON trades(tenant_id, pair) WHERE status = 'OPEN';
CREATE INDEX trades_open_pair ON trades(pair, tenant_id) WHERE status = 'OPEN';
CREATE INDEX trades_tenant_closed ON trades(tenant_id, closed_at) WHERE status = 'CLOSED';
CREATE INDEX trades_closed_at ON trades(closed_at) WHERE status = 'CLOSED';
