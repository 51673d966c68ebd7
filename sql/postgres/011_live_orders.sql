-- 011 (PostgreSQL): LIVE trading (sql/011_live_orders.sql, SPEC 10). SQLite's UPDATEs of existing
-- orders (filled_quantity, reject_reason) are left out: a PostgreSQL database starts empty.
ALTER TABLE orders ADD COLUMN mode text NOT NULL DEFAULT 'PAPER' CHECK (mode IN ('PAPER', 'LIVE'));
ALTER TABLE orders ADD COLUMN filled_quantity double precision NOT NULL DEFAULT 0;
ALTER TABLE orders ADD COLUMN reject_reason text;

-- The state check is the one SQLite has at 011; 015 adds UNKNOWN.
CREATE TABLE venue_orders (
  order_id        text PRIMARY KEY REFERENCES orders(id),
  tenant_id       text NOT NULL REFERENCES tenants(id),
  exchange        text NOT NULL,
  state           text NOT NULL CONSTRAINT venue_orders_state_check CHECK (state IN ('QUEUED', 'SENT', 'OPEN', 'DONE')),
  sent_at         bigint,
  venue_order_id  text,
  cancel_by       text,
  not_before      bigint NOT NULL DEFAULT 0,
  last_error      text,
  updated_at      text NOT NULL
);
CREATE INDEX venue_orders_working ON venue_orders(tenant_id, order_id) WHERE state <> 'DONE';

CREATE TABLE venue_fills (
  order_id        text NOT NULL REFERENCES orders(id),
  venue_trade_id  text NOT NULL,
  quantity        double precision NOT NULL,
  price           double precision NOT NULL,
  fee             double precision NOT NULL,
  fee_asset       text,
  fee_usd         double precision NOT NULL,
  filled_at       text NOT NULL,
  PRIMARY KEY (order_id, venue_trade_id)
);

CREATE TABLE venue_mismatches (
  tenant_id    text NOT NULL REFERENCES tenants(id),
  key          text NOT NULL,
  incident_id  text NOT NULL REFERENCES incidents(id),
  PRIMARY KEY (tenant_id, key)
);

ALTER TABLE workspace_models ADD COLUMN live integer NOT NULL DEFAULT 0 CHECK (live IN (0, 1));

-- PostgreSQL expands o.* when a view is created (SQLite at each use): the view is made again here
-- with orders' new columns, and again in 015.
DROP VIEW pending_orders;
CREATE VIEW pending_orders AS
  SELECT o.* FROM orders o
  WHERE o.status = 'PENDING' AND (o.mode = 'LIVE' OR NOT EXISTS (
    SELECT 1 FROM order_cancellations c
    WHERE c.settled_at IS NULL AND c.tenant_id = o.tenant_id AND o.seq <= c.up_to AND (c.model_id IS NULL OR c.model_id = o.model_id)));

DROP VIEW orders_now;
CREATE VIEW orders_now AS
  SELECT o.seq, o.id, o.tenant_id, o.model_id, o.pair, o.side, o.type, o.quantity, o.notional_usd, o.limit_price,
    o.reference_price, o.reference_date,
    CASE
      WHEN c.incident_id IS NOT NULL THEN 'CANCELED'
      WHEN o.status = 'PENDING' AND v.state = 'OPEN' THEN CASE WHEN o.filled_quantity > 0 THEN 'PARTIALLY_FILLED' ELSE 'OPEN' END
      ELSE o.status END AS status,
    o.created_at, o.filled_at, coalesce(o.canceled_at, c.canceled_at) AS canceled_at,
    coalesce(o.canceled_by, c.incident_id) AS canceled_by, o.fill_price, o.fees_usd, o.slippage_usd, o.trade_id,
    o.mode, o.filled_quantity, o.reject_reason
  FROM orders o
  LEFT JOIN venue_orders v ON o.mode = 'LIVE' AND v.order_id = o.id
  LEFT JOIN order_cancellations c ON c.seq = (
    SELECT f.seq FROM order_cancellations f
    WHERE o.status = 'PENDING' AND o.mode = 'PAPER' AND f.settled_at IS NULL AND f.tenant_id = o.tenant_id AND o.seq <= f.up_to
      AND (f.model_id IS NULL OR f.model_id = o.model_id)
    ORDER BY f.seq LIMIT 1);
