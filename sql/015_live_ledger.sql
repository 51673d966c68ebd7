-- 015: what a LIVE ledger must say (SPEC 10, decided after outside testing).
--
-- Orders say where they came from. A LIVE trade's entry and exit prices are the venue's fills, with
-- the prices the checks used beside them; its slippage is attribution only. A position closed with
-- an unsellable remainder reports it as dust. A LIVE order whose fate cannot be learnt is UNKNOWN.

ALTER TABLE orders ADD COLUMN source TEXT NOT NULL DEFAULT 'api'
  CHECK (source IN ('api', 'automation', 'kill_switch', 'gateway', 'alert'));
ALTER TABLE orders ADD COLUMN gateway_key_id TEXT;
ALTER TABLE orders ADD COLUMN alert_hook_id TEXT;
-- Orders written before this migration show 'api': nothing recorded which of them automation placed.

-- The prices the checks used when the position was entered and left (for PAPER: the market price
-- the broker filled against; for LIVE: the order's reference price, the fills being entry_price and
-- exit_price).
ALTER TABLE trades ADD COLUMN entry_reference_price REAL;
ALTER TABLE trades ADD COLUMN exit_reference_price REAL;
-- Base units left on the account when the position was closed, below what the market lets anyone sell.
ALTER TABLE trades ADD COLUMN dust_quantity REAL NOT NULL DEFAULT 0 CHECK (dust_quantity >= 0);
-- 1 when PnL pays slippage_usd (PAPER: the broker's modelled slippage is a cost the market prices
-- do not show); 0 when it is attribution only (LIVE: the fills already carry it).
ALTER TABLE trades ADD COLUMN slippage_in_pnl INTEGER NOT NULL DEFAULT 1 CHECK (slippage_in_pnl IN (0, 1));
-- What PnL subtracts from quantity x (exit - entry), the one definition every reader of PnL uses:
-- the fees, PAPER's modelled slippage, and the dust, which was bought but never sold (so realized
-- PnL is what the account's quote balance gained; the dust is written off).
ALTER TABLE trades ADD COLUMN pnl_costs_usd REAL GENERATED ALWAYS AS
  (fees_usd + slippage_usd * slippage_in_pnl + dust_quantity * coalesce(exit_price, 0)) VIRTUAL;
UPDATE trades SET entry_reference_price = entry_price, exit_reference_price = exit_price;
-- An open LIVE trade written before this migration carried its reference as entry_price and the
-- entry slippage apart: its fills' average is the reference plus the slippage per unit held.
UPDATE trades SET entry_price = entry_price + slippage_usd / quantity, slippage_in_pnl = 0
  WHERE mode = 'LIVE' AND status = 'OPEN' AND quantity > 0;

DROP TRIGGER realized_on_insert;
DROP TRIGGER realized_on_close;
CREATE TRIGGER realized_on_insert AFTER INSERT ON trades WHEN new.status = 'CLOSED' BEGIN
  INSERT INTO realized_pnl (tenant_id, pnl_usd) VALUES (new.tenant_id, new.quantity * (new.exit_price - new.entry_price) - new.pnl_costs_usd)
  ON CONFLICT (tenant_id) DO UPDATE SET pnl_usd = pnl_usd + excluded.pnl_usd;
END;
CREATE TRIGGER realized_on_close AFTER UPDATE OF status ON trades WHEN old.status = 'OPEN' AND new.status = 'CLOSED' BEGIN
  INSERT INTO realized_pnl (tenant_id, pnl_usd) VALUES (new.tenant_id, new.quantity * (new.exit_price - new.entry_price) - new.pnl_costs_usd)
  ON CONFLICT (tenant_id) DO UPDATE SET pnl_usd = pnl_usd + excluded.pnl_usd;
END;

-- venue_orders gains the state UNKNOWN: sent, and the venue could not be asked about it for longer
-- than its recvWindow + 10 s; the executor keeps asking. SQLite changes a CHECK only by a rebuild.
DROP VIEW orders_now;
CREATE TABLE venue_orders_015 (
  order_id        TEXT PRIMARY KEY REFERENCES orders(id),
  tenant_id       TEXT NOT NULL REFERENCES tenants(id),
  exchange        TEXT NOT NULL,
  state           TEXT NOT NULL CHECK (state IN ('QUEUED', 'SENT', 'UNKNOWN', 'OPEN', 'DONE')),
  sent_at         INTEGER,
  venue_order_id  TEXT,
  cancel_by       TEXT,
  not_before      INTEGER NOT NULL DEFAULT 0,
  last_error      TEXT,
  updated_at      TEXT NOT NULL
) STRICT;
INSERT INTO venue_orders_015 SELECT order_id, tenant_id, exchange, state, sent_at, venue_order_id, cancel_by, not_before, last_error, updated_at
  FROM venue_orders;
DROP TABLE venue_orders;
ALTER TABLE venue_orders_015 RENAME TO venue_orders;
CREATE INDEX venue_orders_working ON venue_orders(tenant_id, order_id) WHERE state <> 'DONE';

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
