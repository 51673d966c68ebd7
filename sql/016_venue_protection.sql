-- 016: protection that outlives the process (SPEC 13).
--
-- Every LIVE position gets a protective SELL resting on the venue: a stop, a take-profit, or both as
-- one OCO list. One row per (tenant, pair) says what should rest and what does.

ALTER TABLE risk_profiles ADD COLUMN venue_stop_loss_pct REAL CHECK (venue_stop_loss_pct BETWEEN 0.1 AND 50);
ALTER TABLE risk_profiles ADD COLUMN venue_take_profit_pct REAL CHECK (venue_take_profit_pct BETWEEN 0.1 AND 1000);
ALTER TABLE risk_profiles ADD COLUMN stop_limit_offset_pct REAL NOT NULL DEFAULT 1 CHECK (stop_limit_offset_pct BETWEEN 0.1 AND 10);
ALTER TABLE risk_profiles ADD COLUMN unprotected_action TEXT NOT NULL DEFAULT 'ALERT' CHECK (unprotected_action IN ('ALERT', 'FLATTEN'));

-- Why a trade was closed. Trades closed before this migration by a known order get its source's
-- reason; the rest stay NULL (nothing recorded it).
ALTER TABLE trades ADD COLUMN exit_reason TEXT
  CHECK (exit_reason IN ('manual', 'signal', 'flatten', 'venue_stop', 'venue_take_profit'));
UPDATE trades SET exit_reason = (
  SELECT CASE o.source WHEN 'automation' THEN 'signal' WHEN 'alert' THEN 'signal' WHEN 'kill_switch' THEN 'flatten' ELSE 'manual' END
  FROM orders o WHERE o.trade_id = trades.id AND o.side = 'SELL' AND o.status = 'FILLED' ORDER BY o.seq LIMIT 1)
WHERE status = 'CLOSED';

-- The protection of one pair. status is what the API shows (NONE, PLACING, RESTING, FAILED); phase is
-- where the venue stands: IDLE (nothing of it on the venue), SENT (a placement went out under seq
-- and may be there: looked up by its client order ids before anything is sent again), RESTING (the
-- venue holds it: venue_order_ids), SELLING (a market sale of its own is out: after a stop-limit
-- gapped through, a take-profit crossed where no OCO rests, or FLATTEN of an unprotected pair).
-- due_at: when the worker looks at it next (0: now, the ledger changed).
CREATE TABLE venue_protections (
  tenant_id         TEXT NOT NULL REFERENCES tenants(id),
  pair              TEXT NOT NULL,
  exchange          TEXT NOT NULL,
  seq               INTEGER NOT NULL DEFAULT 0,
  status            TEXT NOT NULL DEFAULT 'NONE' CHECK (status IN ('NONE', 'PLACING', 'RESTING', 'FAILED')),
  phase             TEXT NOT NULL DEFAULT 'IDLE' CHECK (phase IN ('IDLE', 'SENT', 'RESTING', 'SELLING')),
  kind              TEXT CHECK (kind IN ('STOP', 'STOP_LIMIT', 'TAKE_PROFIT', 'OCO', 'SALE')),
  quantity          REAL,
  stop_price        REAL,
  stop_limit_price  REAL,
  take_profit_price REAL,
  -- the exit_reason its sale gives (SELLING only)
  sale_reason       TEXT CHECK (sale_reason IN ('flatten', 'venue_stop', 'venue_take_profit')),
  venue_order_ids   TEXT NOT NULL DEFAULT '[]',
  sent_at           INTEGER,
  due_at            INTEGER NOT NULL DEFAULT 0,
  last_error        TEXT,
  updated_at        TEXT NOT NULL,
  PRIMARY KEY (tenant_id, pair)
) STRICT;
CREATE INDEX venue_protections_due ON venue_protections(due_at);

-- The venue's fills of protective orders, each applied to the ledger once.
CREATE TABLE protection_fills (
  tenant_id       TEXT NOT NULL REFERENCES tenants(id),
  pair            TEXT NOT NULL,
  venue_order_id  TEXT NOT NULL,
  venue_trade_id  TEXT NOT NULL,
  quantity        REAL NOT NULL,
  price           REAL NOT NULL,
  fee_usd         REAL NOT NULL,
  filled_at       TEXT NOT NULL,
  PRIMARY KEY (tenant_id, pair, venue_trade_id)
) STRICT;
