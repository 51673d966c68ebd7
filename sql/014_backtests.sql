-- 014: backtests (SPEC 11). A tenant's request to run a model, with its parameters or others, over
-- past candles; queued, run one at a time per tenant off the event loop (src/backtests/runner.ts),
-- and kept with its result. RUNNING rows left by a crash or a restart go back to QUEUED at start.
CREATE TABLE backtests (
  id            TEXT PRIMARY KEY,                 -- bt_...
  tenant_id     TEXT NOT NULL REFERENCES tenants(id),
  model_id      TEXT NOT NULL REFERENCES models(id),
  from_date     TEXT NOT NULL,                    -- YYYY-MM-DD, the first as_of
  to_date       TEXT NOT NULL CHECK (to_date >= from_date),
  parameters    TEXT NOT NULL,                    -- JSON object: the model's, overlaid by the request's
  fee_bps       REAL NOT NULL CHECK (fee_bps BETWEEN 0 AND 1000),
  slippage_bps  REAL NOT NULL CHECK (slippage_bps BETWEEN 0 AND 1000),
  status        TEXT NOT NULL CHECK (status IN ('QUEUED', 'RUNNING', 'SUCCEEDED', 'FAILED')),
  created_at    TEXT NOT NULL,
  started_at    TEXT,
  finished_at   TEXT,
  result        TEXT,                             -- JSON {metrics, equity, trades} once SUCCEEDED
  actions       TEXT,                             -- JSON {pair: "EHX-..."}, apart: most reads skip it
  result_hash   TEXT CHECK (length(result_hash) = 64 AND result_hash NOT GLOB '*[^0-9a-f]*'),
  error         TEXT,                             -- why it FAILED
  CHECK ((status = 'SUCCEEDED') = (result IS NOT NULL AND actions IS NOT NULL AND result_hash IS NOT NULL))
) STRICT;

-- A tenant's list, newest first, and its count of unfinished backtests.
CREATE INDEX backtests_tenant ON backtests(tenant_id, id);
-- The queue: the oldest QUEUED first, and which tenants have one RUNNING.
CREATE INDEX backtests_queue ON backtests(status, id) WHERE status IN ('QUEUED', 'RUNNING');
