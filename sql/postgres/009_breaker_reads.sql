-- 009 (PostgreSQL): what keeps the breakers cheap on every order and every import
-- (sql/009_breaker_reads.sql). SQLite's back-fills from existing rows (realized_pnl, order_seconds,
-- opening_order_days) are left out: a PostgreSQL database starts empty.

DROP INDEX orders_tenant_created;
CREATE INDEX orders_tenant_created ON orders(tenant_id, created_at, side);

DROP INDEX trades_tenant_closed;
CREATE INDEX trades_tenant_closed ON trades(tenant_id, closed_at, id) WHERE status = 'CLOSED';

ALTER TABLE equity_state ADD COLUMN equity double precision;

-- Realized net PnL per tenant, kept by triggers on the ledger (015 redefines what PnL subtracts).
CREATE TABLE realized_pnl (
  tenant_id  text PRIMARY KEY REFERENCES tenants(id),
  pnl_usd    double precision NOT NULL
);
CREATE FUNCTION realized_pnl_add() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO realized_pnl (tenant_id, pnl_usd) VALUES (NEW.tenant_id, NEW.quantity * (NEW.exit_price - NEW.entry_price) - NEW.fees_usd - NEW.slippage_usd)
  ON CONFLICT (tenant_id) DO UPDATE SET pnl_usd = realized_pnl.pnl_usd + excluded.pnl_usd;
  RETURN NULL;
END;
$$;
CREATE TRIGGER realized_on_insert AFTER INSERT ON trades FOR EACH ROW WHEN (NEW.status = 'CLOSED')
  EXECUTE FUNCTION realized_pnl_add();
CREATE TRIGGER realized_on_close AFTER UPDATE OF status ON trades FOR EACH ROW WHEN (OLD.status = 'OPEN' AND NEW.status = 'CLOSED')
  EXECUTE FUNCTION realized_pnl_add();

-- Orders per second and opening orders per UTC day, per tenant, counted as orders are written.
CREATE TABLE order_seconds (
  tenant_id  text NOT NULL,
  second     text NOT NULL,           -- created_at cut to the second: YYYY-MM-DDTHH:MM:SS
  n          bigint NOT NULL,
  PRIMARY KEY (tenant_id, second)
);
CREATE TABLE opening_order_days (
  tenant_id  text NOT NULL,
  day        text NOT NULL,
  n          bigint NOT NULL,
  PRIMARY KEY (tenant_id, day)
);
-- SQLite's strftime('%Y-%m-%dT%H:%M:%S', created_at, '-120 seconds') is to_char(... - interval)
-- here, over created_at's first 19 characters read as a UTC timestamp (created_at is written by
-- toISOString(): ...Z, UTC, which is also how SQLite reads it).
CREATE FUNCTION order_counts() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO order_seconds (tenant_id, second, n) VALUES (NEW.tenant_id, substr(NEW.created_at, 1, 19), 1)
    ON CONFLICT (tenant_id, second) DO UPDATE SET n = order_seconds.n + 1;
  DELETE FROM order_seconds WHERE tenant_id = NEW.tenant_id
    AND second < to_char(substr(NEW.created_at, 1, 19)::timestamp - interval '120 seconds', 'YYYY-MM-DD"T"HH24:MI:SS');
  IF NEW.side = 'BUY' THEN
    INSERT INTO opening_order_days (tenant_id, day, n) VALUES (NEW.tenant_id, substr(NEW.created_at, 1, 10), 1)
      ON CONFLICT (tenant_id, day) DO UPDATE SET n = opening_order_days.n + 1;
  END IF;
  RETURN NULL;
END;
$$;
CREATE TRIGGER order_counts AFTER INSERT ON orders FOR EACH ROW EXECUTE FUNCTION order_counts();
