-- 015 (PostgreSQL): what a LIVE ledger must say (sql/015_live_ledger.sql, SPEC 10).
-- SQLite's UPDATEs of existing trades are left out (a PostgreSQL database starts empty); its
-- rebuild of venue_orders to change the state CHECK is an ALTER of that constraint here.

ALTER TABLE orders ADD COLUMN source text NOT NULL DEFAULT 'api'
  CHECK (source IN ('api', 'automation', 'kill_switch', 'gateway', 'alert'));
ALTER TABLE orders ADD COLUMN gateway_key_id text;
ALTER TABLE orders ADD COLUMN alert_hook_id text;

ALTER TABLE trades ADD COLUMN entry_reference_price double precision;
ALTER TABLE trades ADD COLUMN exit_reference_price double precision;
ALTER TABLE trades ADD COLUMN dust_quantity double precision NOT NULL DEFAULT 0 CHECK (dust_quantity >= 0);
ALTER TABLE trades ADD COLUMN slippage_in_pnl integer NOT NULL DEFAULT 1 CHECK (slippage_in_pnl IN (0, 1));
-- SQLite's VIRTUAL generated column: PostgreSQL 15 has STORED ones only (same value, kept on disk).
ALTER TABLE trades ADD COLUMN pnl_costs_usd double precision GENERATED ALWAYS AS
  (fees_usd + slippage_usd * slippage_in_pnl + dust_quantity * coalesce(exit_price, 0)) STORED;

-- realized_on_insert / realized_on_close now subtract pnl_costs_usd (the triggers of 009 call this).
CREATE OR REPLACE FUNCTION realized_pnl_add() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO realized_pnl (tenant_id, pnl_usd) VALUES (NEW.tenant_id, NEW.quantity * (NEW.exit_price - NEW.entry_price) - NEW.pnl_costs_usd)
  ON CONFLICT (tenant_id) DO UPDATE SET pnl_usd = realized_pnl.pnl_usd + excluded.pnl_usd;
  RETURN NULL;
END;
$$;

-- venue_orders gains the state UNKNOWN.
ALTER TABLE venue_orders DROP CONSTRAINT venue_orders_state_check;
ALTER TABLE venue_orders ADD CONSTRAINT venue_orders_state_check CHECK (state IN ('QUEUED', 'SENT', 'UNKNOWN', 'OPEN', 'DONE'));

-- pending_orders again, for orders' new columns (o.* is expanded at creation on PostgreSQL).
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
      WHEN o.status = 'PENDING' AND v.state = 'UNKNOWN' THEN 'UNKNOWN'
      WHEN o.status = 'PENDING' AND v.state = 'OPEN' THEN CASE WHEN o.filled_quantity > 0 THEN 'PARTIALLY_FILLED' ELSE 'OPEN' END
      ELSE o.status END AS status,
    o.created_at, o.filled_at, coalesce(o.canceled_at, c.canceled_at) AS canceled_at,
    coalesce(o.canceled_by, c.incident_id) AS canceled_by, o.fill_price, o.fees_usd, o.slippage_usd, o.trade_id,
    o.mode, o.filled_quantity,
    CASE WHEN o.status = 'PENDING' AND v.state = 'UNKNOWN' THEN v.last_error ELSE o.reject_reason END AS reject_reason,
    o.source, o.gateway_key_id, o.alert_hook_id
  FROM orders o
  LEFT JOIN venue_orders v ON o.mode = 'LIVE' AND v.order_id = o.id
  LEFT JOIN order_cancellations c ON c.seq = (
    SELECT f.seq FROM order_cancellations f
    WHERE o.status = 'PENDING' AND o.mode = 'PAPER' AND f.settled_at IS NULL AND f.tenant_id = o.tenant_id AND o.seq <= f.up_to
      AND (f.model_id IS NULL OR f.model_id = o.model_id)
    ORDER BY f.seq LIMIT 1);
