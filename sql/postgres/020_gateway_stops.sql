-- 020: a bot's own stop and take-profit orders through the gateway (SPEC 14: Freqtrade's
-- stoploss_on_exchange). Such an order is a LIVE SELL like any other (type LIMIT for STOP_LOSS_LIMIT
-- and TAKE_PROFIT_LIMIT, its limit in limit_price; MARKET for STOP_LOSS and TAKE_PROFIT) that the
-- venue holds until its trigger: stop_price is that trigger, stop_trigger which kind it is. Both
-- are NULL for every other order. Nullable columns rather than new `type` values: a SQLite CHECK
-- cannot change without rebuilding the table.
ALTER TABLE orders ADD COLUMN stop_price double precision CHECK (stop_price > 0);
ALTER TABLE orders ADD COLUMN stop_trigger TEXT CHECK (stop_trigger IN ('STOP_LOSS', 'TAKE_PROFIT'));

-- PostgreSQL expands a view's * when the view is made: pending_orders is made again to show the new columns.
DROP VIEW pending_orders;
CREATE VIEW pending_orders AS
  SELECT o.* FROM orders o
  WHERE o.status = 'PENDING' AND (o.mode = 'LIVE' OR NOT EXISTS (
    SELECT 1 FROM order_cancellations c
    WHERE c.settled_at IS NULL AND c.tenant_id = o.tenant_id AND o.seq <= c.up_to AND (c.model_id IS NULL OR c.model_id = o.model_id)));

-- orders_now shows them (the gateway answers Binance's type and stopPrice with them).
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
    o.source, o.gateway_key_id, o.alert_hook_id, o.bot_client_order_id, v.venue_order_id, o.stop_price, o.stop_trigger
  FROM orders o
  LEFT JOIN venue_orders v ON o.mode = 'LIVE' AND v.order_id = o.id
  LEFT JOIN order_cancellations c ON c.seq = (
    SELECT f.seq FROM order_cancellations f
    WHERE o.status = 'PENDING' AND o.mode = 'PAPER' AND f.settled_at IS NULL AND f.tenant_id = o.tenant_id AND o.seq <= f.up_to
      AND (f.model_id IS NULL OR f.model_id = o.model_id)
    ORDER BY f.seq LIMIT 1);
