-- 016 (PostgreSQL): protection that outlives the process (sql/016_venue_protection.sql, SPEC 13).
-- SQLite's back-fill of exit_reason for trades closed before 016 is left out (no such trades here).

ALTER TABLE risk_profiles ADD COLUMN venue_stop_loss_pct double precision CHECK (venue_stop_loss_pct BETWEEN 0.1 AND 50);
ALTER TABLE risk_profiles ADD COLUMN venue_take_profit_pct double precision CHECK (venue_take_profit_pct BETWEEN 0.1 AND 1000);
ALTER TABLE risk_profiles ADD COLUMN stop_limit_offset_pct double precision NOT NULL DEFAULT 1 CHECK (stop_limit_offset_pct BETWEEN 0.1 AND 10);
ALTER TABLE risk_profiles ADD COLUMN unprotected_action text NOT NULL DEFAULT 'ALERT' CHECK (unprotected_action IN ('ALERT', 'FLATTEN'));

ALTER TABLE trades ADD COLUMN exit_reason text
  CHECK (exit_reason IN ('manual', 'signal', 'flatten', 'venue_stop', 'venue_take_profit'));

CREATE TABLE venue_protections (
  tenant_id         text NOT NULL REFERENCES tenants(id),
  pair              text NOT NULL,
  exchange          text NOT NULL,
  seq               bigint NOT NULL DEFAULT 0,
  status            text NOT NULL DEFAULT 'NONE' CHECK (status IN ('NONE', 'PLACING', 'RESTING', 'FAILED')),
  phase             text NOT NULL DEFAULT 'IDLE' CHECK (phase IN ('IDLE', 'SENT', 'RESTING', 'SELLING')),
  kind              text CHECK (kind IN ('STOP', 'STOP_LIMIT', 'TAKE_PROFIT', 'OCO', 'SALE')),
  quantity          double precision,
  stop_price        double precision,
  stop_limit_price  double precision,
  take_profit_price double precision,
  sale_reason       text CHECK (sale_reason IN ('flatten', 'venue_stop', 'venue_take_profit')),
  venue_order_ids   text NOT NULL DEFAULT '[]',
  sent_at           bigint,
  due_at            bigint NOT NULL DEFAULT 0,
  last_error        text,
  updated_at        text NOT NULL,
  PRIMARY KEY (tenant_id, pair)
);
CREATE INDEX venue_protections_due ON venue_protections(due_at);

CREATE TABLE protection_fills (
  tenant_id       text NOT NULL REFERENCES tenants(id),
  pair            text NOT NULL,
  venue_order_id  text NOT NULL,
  venue_trade_id  text NOT NULL,
  quantity        double precision NOT NULL,
  price           double precision NOT NULL,
  fee_usd         double precision NOT NULL,
  filled_at       text NOT NULL,
  PRIMARY KEY (tenant_id, pair, venue_trade_id)
);
