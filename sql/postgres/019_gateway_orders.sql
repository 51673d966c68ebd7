-- 019: orders a bot sends through the gateway (SPEC 14) keep the bot's own client order id, which
-- the gateway answers as clientOrderId and accepts as origClientOrderId; the venue knows the order
-- by Bulwark's id. A second new order with the same id from the same key while the first is open
-- is refused (-2010 Duplicate order sent): the unique index below makes that hold under concurrent
-- requests on several nodes, the gateway's own check gives the answer.
ALTER TABLE orders ADD COLUMN bot_client_order_id TEXT;
CREATE UNIQUE INDEX orders_bot_client_order_open ON orders(gateway_key_id, bot_client_order_id)
  WHERE bot_client_order_id IS NOT NULL AND status = 'PENDING';
CREATE INDEX orders_gateway_key ON orders(gateway_key_id, seq) WHERE gateway_key_id IS NOT NULL;

-- A trade says where its position came from, as its orders do: a SELL through a gateway key closes
-- only that key's positions (a key is like a sub-account), and the ledger tells bots apart.
ALTER TABLE trades ADD COLUMN source TEXT NOT NULL DEFAULT 'api'
  CHECK (source IN ('api', 'automation', 'kill_switch', 'gateway', 'alert'));
ALTER TABLE trades ADD COLUMN gateway_key_id TEXT;
ALTER TABLE trades ADD COLUMN alert_hook_id TEXT;
-- Trades written before: the source of the BUY that opened them (its trade_id names the trade).
UPDATE trades SET source = coalesce((SELECT o.source FROM orders o WHERE o.trade_id = trades.id AND o.side = 'BUY' LIMIT 1), 'api');
CREATE INDEX trades_open_gateway ON trades(gateway_key_id, pair) WHERE status = 'OPEN' AND gateway_key_id IS NOT NULL;

-- PostgreSQL expands a view's * when the view is made: pending_orders is made again to show the new column.
DROP VIEW pending_orders;
CREATE VIEW pending_orders AS
  SELECT o.* FROM orders o
  WHERE o.status = 'PENDING' AND (o.mode = 'LIVE' OR NOT EXISTS (
    SELECT 1 FROM order_cancellations c
    WHERE c.settled_at IS NULL AND c.tenant_id = o.tenant_id AND o.seq <= c.up_to AND (c.model_id IS NULL OR c.model_id = o.model_id)));

-- orders_now shows the bot's id and the venue's order id (the gateway answers orderId with it).
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
    o.source, o.gateway_key_id, o.alert_hook_id, o.bot_client_order_id, v.venue_order_id
  FROM orders o
  LEFT JOIN venue_orders v ON o.mode = 'LIVE' AND v.order_id = o.id
  LEFT JOIN order_cancellations c ON c.seq = (
    SELECT f.seq FROM order_cancellations f
    WHERE o.status = 'PENDING' AND o.mode = 'PAPER' AND f.settled_at IS NULL AND f.tenant_id = o.tenant_id AND o.seq <= f.up_to
      AND (f.model_id IS NULL OR f.model_id = o.model_id)
    ORDER BY f.seq LIMIT 1);
