-- 009: what keeps the breakers cheap on every order and every import, however long a tenant has
-- traded (measured by test/bench/breaker-orders.ts and breaker-import.ts).

-- max_trades_per_day counts BUYs of the day from the index alone.
DROP INDEX orders_tenant_created;
CREATE INDEX orders_tenant_created ON orders(tenant_id, created_at, side);

-- Consecutive losses walk the newest closed trades in index order, without sorting them all.
DROP INDEX trades_tenant_closed;
CREATE INDEX trades_tenant_closed ON trades(tenant_id, closed_at, id) WHERE status = 'CLOSED';

-- The equity the last evaluation saw: an order is checked against it (placing an order changes no
-- equity; every fill, import, mark and profile change evaluates and writes it). NULL until then.
ALTER TABLE equity_state ADD COLUMN equity REAL;

-- Realized net PnL per tenant, kept by triggers on the ledger: equity reads one row instead of
-- summing every closed trade. A trade is closed once (fills.ts inserts a closed part or flips
-- OPEN to CLOSED) and never changes afterwards.
CREATE TABLE realized_pnl (
  tenant_id  TEXT PRIMARY KEY REFERENCES tenants(id),
  pnl_usd    REAL NOT NULL
) STRICT;
INSERT INTO realized_pnl (tenant_id, pnl_usd)
  SELECT tenant_id, sum(quantity * (exit_price - entry_price) - fees_usd - slippage_usd) FROM trades WHERE status = 'CLOSED' GROUP BY tenant_id;
CREATE TRIGGER realized_on_insert AFTER INSERT ON trades WHEN new.status = 'CLOSED' BEGIN
  INSERT INTO realized_pnl (tenant_id, pnl_usd) VALUES (new.tenant_id, new.quantity * (new.exit_price - new.entry_price) - new.fees_usd - new.slippage_usd)
  ON CONFLICT (tenant_id) DO UPDATE SET pnl_usd = pnl_usd + excluded.pnl_usd;
END;
CREATE TRIGGER realized_on_close AFTER UPDATE OF status ON trades WHEN old.status = 'OPEN' AND new.status = 'CLOSED' BEGIN
  INSERT INTO realized_pnl (tenant_id, pnl_usd) VALUES (new.tenant_id, new.quantity * (new.exit_price - new.entry_price) - new.fees_usd - new.slippage_usd)
  ON CONFLICT (tenant_id) DO UPDATE SET pnl_usd = pnl_usd + excluded.pnl_usd;
END;

-- Orders per second and opening orders per UTC day, per tenant, counted as orders are written:
-- max_orders_per_minute sums at most 60 rows and max_trades_per_day reads one, however many
-- orders the window holds. Rows older than the windows go as new ones come.
CREATE TABLE order_seconds (
  tenant_id  TEXT NOT NULL,
  second     TEXT NOT NULL,           -- created_at cut to the second: YYYY-MM-DDTHH:MM:SS
  n          INTEGER NOT NULL,
  PRIMARY KEY (tenant_id, second)
) STRICT, WITHOUT ROWID;
CREATE TABLE opening_order_days (
  tenant_id  TEXT NOT NULL,
  day        TEXT NOT NULL,
  n          INTEGER NOT NULL,
  PRIMARY KEY (tenant_id, day)
) STRICT, WITHOUT ROWID;
CREATE TRIGGER order_counts AFTER INSERT ON orders BEGIN
  INSERT INTO order_seconds (tenant_id, second, n) VALUES (new.tenant_id, substr(new.created_at, 1, 19), 1)
    ON CONFLICT DO UPDATE SET n = n + 1;
  DELETE FROM order_seconds WHERE tenant_id = new.tenant_id AND second < strftime('%Y-%m-%dT%H:%M:%S', new.created_at, '-120 seconds');
  INSERT INTO opening_order_days (tenant_id, day, n) SELECT new.tenant_id, substr(new.created_at, 1, 10), 1 WHERE new.side = 'BUY'
    ON CONFLICT DO UPDATE SET n = n + 1;
END;
INSERT INTO order_seconds (tenant_id, second, n)
  SELECT tenant_id, substr(created_at, 1, 19), count(*) FROM orders WHERE created_at >= strftime('%Y-%m-%dT%H:%M:%S', 'now', '-120 seconds') GROUP BY 1, 2;
INSERT INTO opening_order_days (tenant_id, day, n)
  SELECT tenant_id, substr(created_at, 1, 10), count(*) FROM orders WHERE side = 'BUY' AND created_at >= date('now', '-1 day') GROUP BY 1, 2;
