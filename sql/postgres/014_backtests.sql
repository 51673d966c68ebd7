-- 014 (PostgreSQL): backtests (sql/014_backtests.sql, SPEC 11).
-- result_hash NOT GLOB '*[^0-9a-f]*' is result_hash !~ '[^0-9a-f]' here.
CREATE TABLE backtests (
  id            text PRIMARY KEY,                 -- bt_...
  tenant_id     text NOT NULL REFERENCES tenants(id),
  model_id      text NOT NULL REFERENCES models(id),
  from_date     text NOT NULL,
  to_date       text NOT NULL CHECK (to_date >= from_date),
  parameters    text NOT NULL,
  fee_bps       double precision NOT NULL CHECK (fee_bps BETWEEN 0 AND 1000),
  slippage_bps  double precision NOT NULL CHECK (slippage_bps BETWEEN 0 AND 1000),
  status        text NOT NULL CHECK (status IN ('QUEUED', 'RUNNING', 'SUCCEEDED', 'FAILED')),
  created_at    text NOT NULL,
  started_at    text,
  finished_at   text,
  result        text,
  actions       text,
  result_hash   text CHECK (length(result_hash) = 64 AND result_hash !~ '[^0-9a-f]'),
  error         text,
  CHECK ((status = 'SUCCEEDED') = (result IS NOT NULL AND actions IS NOT NULL AND result_hash IS NOT NULL))
);

CREATE INDEX backtests_tenant ON backtests(tenant_id, id);
CREATE INDEX backtests_queue ON backtests(status, id) WHERE status IN ('QUEUED', 'RUNNING');
