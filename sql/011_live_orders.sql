-- 011: LIVE trading (SPEC 10). An order keeps its mode; a LIVE one is also a row of venue_orders,
-- written in the order's own transaction: that row is the executor's outbox (src/trading/live/).
--
-- orders.status stays the ledger's lifecycle (PENDING while the order works, then FILLED,
-- CANCELED or REJECTED), so every reader of pending orders (the checks, the kill switch's count,
-- its fence) treats a LIVE order on the venue as what it is: working. The API's status adds the
-- venue's acknowledgement: a working LIVE order the venue holds is OPEN, or PARTIALLY_FILLED once
-- part of it filled (the view orders_now).
ALTER TABLE orders ADD COLUMN mode TEXT NOT NULL DEFAULT 'PAPER' CHECK (mode IN ('PAPER', 'LIVE'));
ALTER TABLE orders ADD COLUMN filled_quantity REAL NOT NULL DEFAULT 0;   -- base units filled so far (gross of a base-asset fee)
ALTER TABLE orders ADD COLUMN reject_reason TEXT;                        -- REJECTED: the venue's code and message, or the broker's why
UPDATE orders SET filled_quantity = quantity WHERE status = 'FILLED';
UPDATE orders SET reject_reason = 'nothing left to sell' WHERE status = 'REJECTED';

CREATE TABLE venue_orders (
  order_id        TEXT PRIMARY KEY REFERENCES orders(id),
  tenant_id       TEXT NOT NULL REFERENCES tenants(id),
  exchange        TEXT NOT NULL,
  -- QUEUED: never sent. SENT: a send began (it may be on the venue: look it up before any resend).
  -- OPEN: the venue holds it. DONE: it ended on the venue and in the ledger.
  state           TEXT NOT NULL CHECK (state IN ('QUEUED', 'SENT', 'OPEN', 'DONE')),
  sent_at         INTEGER,                     -- ms since the epoch of the last send
  venue_order_id  TEXT,
  cancel_by       TEXT,                        -- a cancel was asked: the kill switch's incident id, or 'api'
  not_before      INTEGER NOT NULL DEFAULT 0,  -- ms: the venue asked to wait, or the last try failed
  last_error      TEXT,
  updated_at      TEXT NOT NULL
) STRICT;
CREATE INDEX venue_orders_working ON venue_orders(tenant_id, order_id) WHERE state <> 'DONE';

-- Each venue fill applied to the ledger, once.
CREATE TABLE venue_fills (
  order_id        TEXT NOT NULL REFERENCES orders(id),
  venue_trade_id  TEXT NOT NULL,
  quantity        REAL NOT NULL,
  price           REAL NOT NULL,
  fee             REAL NOT NULL,
  fee_asset       TEXT,
  fee_usd         REAL NOT NULL,
  filled_at       TEXT NOT NULL,
  PRIMARY KEY (order_id, venue_trade_id)
) STRICT, WITHOUT ROWID;

-- What reconciliation already reported, so that a mismatch is one incident, not one a minute.
CREATE TABLE venue_mismatches (
  tenant_id    TEXT NOT NULL REFERENCES tenants(id),
  key          TEXT NOT NULL,                 -- order:<venue id>, fill:<venue trade id>, balance:<asset>:<quantity>
  incident_id  TEXT NOT NULL REFERENCES incidents(id),
  PRIMARY KEY (tenant_id, key)
) STRICT, WITHOUT ROWID;

-- The models a tenant's automation trades LIVE (SPEC 10: live ⊆ active).
ALTER TABLE workspace_models ADD COLUMN live INTEGER NOT NULL DEFAULT 0 CHECK (live IN (0, 1));

-- Fences cancel PAPER rows only: a LIVE order is canceled on the venue, and it is what the venue
-- says (canceled, or filled first) that ends it.
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
