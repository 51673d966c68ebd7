-- 003: orders, the kill switch's cancellation fences, and the indexes the paper broker, the
-- pre-trade checks and the kill switch read.

CREATE TABLE orders (
  seq              INTEGER PRIMARY KEY,         -- write order; a cancellation fence covers seq <= up_to
  id               TEXT NOT NULL UNIQUE,        -- ord_...
  tenant_id        TEXT NOT NULL REFERENCES tenants(id),
  model_id         TEXT REFERENCES models(id),
  pair             TEXT NOT NULL,
  side             TEXT NOT NULL CHECK (side IN ('BUY', 'SELL')),
  type             TEXT NOT NULL CHECK (type IN ('MARKET', 'LIMIT')),
  quantity         REAL CHECK (quantity > 0),   -- NULL for a BUY sized by notional until it fills
  notional_usd     REAL CHECK (notional_usd > 0),
  limit_price      REAL CHECK (limit_price > 0),
  reference_price  REAL NOT NULL,               -- last known close when placed (exposure checks)
  reference_date   TEXT NOT NULL,               -- that close's candle date: only a newer candle fills
  status           TEXT NOT NULL CHECK (status IN ('PENDING', 'FILLED', 'CANCELED', 'REJECTED')),
  created_at       TEXT NOT NULL,
  filled_at        TEXT,
  canceled_at      TEXT,                        -- also set when REJECTED
  canceled_by      TEXT,                        -- inc_... of a kill switch, 'api', or 'broker' (REJECTED)
  fill_price       REAL,
  fees_usd         REAL,
  slippage_usd     REAL,
  trade_id         TEXT REFERENCES trades(id),  -- the trade a BUY opened, or the first one a SELL closed
  CHECK (quantity IS NOT NULL OR notional_usd IS NOT NULL),
  CHECK (quantity IS NOT NULL OR (side = 'BUY' AND status <> 'FILLED')),  -- a SELL's size is fixed when placed
  CHECK ((type = 'LIMIT') = (limit_price IS NOT NULL))
) STRICT;
CREATE INDEX orders_tenant ON orders(tenant_id, id);
-- Pending orders are few next to history; partial indexes keep the broker and the checks on them.
CREATE INDEX orders_pending_pair ON orders(pair, seq) WHERE status = 'PENDING';
CREATE INDEX orders_pending_tenant ON orders(tenant_id, model_id, side) WHERE status = 'PENDING';
CREATE INDEX orders_canceled_by ON orders(canceled_by) WHERE canceled_by IS NOT NULL;

-- A kill switch cancels every pending order in its scope by writing one fence in its transaction:
-- from that commit on, every PENDING row of the tenant (and model) with seq <= up_to is canceled.
-- The rows themselves are marked CANCELED, with their order.canceled events, by a follow-up
-- settlement (src/trading/cancellations.ts), so the switch costs the same for 10 or 10,000 orders.
CREATE TABLE order_cancellations (
  seq          INTEGER PRIMARY KEY,
  incident_id  TEXT NOT NULL UNIQUE REFERENCES incidents(id),
  tenant_id    TEXT NOT NULL REFERENCES tenants(id),
  model_id     TEXT,                            -- NULL: the whole fleet
  up_to        INTEGER NOT NULL,                -- max(orders.seq) when the switch was pulled
  canceled_at  TEXT NOT NULL,
  settled_at   TEXT                             -- every fenced row marked CANCELED
) STRICT;
CREATE INDEX order_cancellations_unsettled ON order_cancellations(tenant_id, seq) WHERE settled_at IS NULL;

-- Orders that are really pending: PENDING and behind no unsettled fence. Every reader of pending
-- orders goes through this view.
CREATE VIEW pending_orders AS
  SELECT o.* FROM orders o
  WHERE o.status = 'PENDING' AND NOT EXISTS (
    SELECT 1 FROM order_cancellations c
    WHERE c.settled_at IS NULL AND c.tenant_id = o.tenant_id AND o.seq <= c.up_to AND (c.model_id IS NULL OR c.model_id = o.model_id));

-- Orders as the API shows them: a fenced PENDING row is CANCELED by the first fence covering it.
CREATE VIEW orders_now AS
  SELECT o.seq, o.id, o.tenant_id, o.model_id, o.pair, o.side, o.type, o.quantity, o.notional_usd, o.limit_price,
    o.reference_price, o.reference_date,
    CASE WHEN c.incident_id IS NULL THEN o.status ELSE 'CANCELED' END AS status,
    o.created_at, o.filled_at, coalesce(o.canceled_at, c.canceled_at) AS canceled_at,
    coalesce(o.canceled_by, c.incident_id) AS canceled_by, o.fill_price, o.fees_usd, o.slippage_usd, o.trade_id
  FROM orders o LEFT JOIN order_cancellations c ON c.seq = (
    SELECT f.seq FROM order_cancellations f
    WHERE o.status = 'PENDING' AND f.settled_at IS NULL AND f.tenant_id = o.tenant_id AND o.seq <= f.up_to
      AND (f.model_id IS NULL OR f.model_id = o.model_id)
    ORDER BY f.seq LIMIT 1);

CREATE INDEX trades_open ON trades(tenant_id, pair) WHERE status = 'OPEN';
